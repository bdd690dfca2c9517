package analyze

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/llmbench/llmbench/analyze/accum"
	"github.com/llmbench/llmbench/analyze/record"
	"github.com/llmbench/llmbench/analyze/rundir"
	"github.com/llmbench/llmbench/analyze/sessions"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
)

// Reading the logs: Analyze reads every worker log in parallel, each into its own share of
// the analysis (logAnalysis: its collectors, samples, status and damage), which summarise
// (summarise.go) then merges in log order.

// seenSet marks plan indices found in the logs; it is shared by the readers.
type seenSet struct{ words []uint64 }

func newSeenSet(n int) *seenSet { return &seenSet{words: make([]uint64, (n+63)/64)} }

// mark sets bit i and reports whether it was already set.
func (s *seenSet) mark(i uint32) bool {
	w, b := i/64, uint64(1)<<(i%64)
	return atomic.OrUint64(&s.words[w], b)&b != 0
}

func (s *seenSet) has(i int) bool { return s.words[i/64]&(1<<(uint(i)%64)) != 0 }

// maxSlices bounds the number of time slices, whose summaries are all held in memory.
const maxSlices = 10000

// logAnalysis is one worker log's share of the analysis: what reading that log produced,
// before summarise merges the logs.
type logAnalysis struct {
	all     *collector
	slices  map[int64]*collector
	budgets []accum.Budget // exact values held by this log's slices, by MetricID
	warmup  int64
	warmErr int64
	seen    int64
	cpu     []rawlog.CPUSample
	gpu     []rawlog.GPUSample
	status  string
	torn    int64
	missing bool // the log does not exist or is empty
	// inFlight holds the requests with a Sent record and no Request record in this log:
	// in flight when the worker stopped logging (lost). It is nil when the log has no Sent
	// record at all (a writer that does not write them, or a worker that sent nothing).
	inFlight map[uint32]struct{}
	damaged  string          // why part or all of the log could not be read, for Summary.Notes
	shape    shapeSamples    // valid profile requests, for shape validation (shape.go)
	records  *os.File        // per-request JSONL, when written to a temporary file
	nodes    []sessions.Node // a graph plan's profile requests, for the session metrics
	sel      selected        // what --where left out, and the --group-by groups
}

// Analyze reads the run directories of opts and computes the summary. When records is not
// nil, one AIPerf-style JSON line per profile request is written to it (profile_export.jsonl),
// log by log in run.json order, then the lost requests in plan order. Errors about the
// input wrap ErrInput.
func Analyze(opts Options, records io.Writer) (*Summary, error) {
	opts.defaults()
	in, err := openInput(&opts)
	if err != nil {
		return nil, err
	}
	defer in.plan.Close()
	if err := in.plan.Validate(); err != nil {
		return nil, wrapInput(err)
	}
	a := &analysis{opts: &opts, in: in, seen: newSeenSet(in.plan.Len()), reg: opts.Metrics.or()}
	for _, s := range opts.Goodput {
		if !a.reg.has(s.Metric) {
			return nil, fmt.Errorf("analyze: --goodput %s: the metric is not in the registry the analysis runs with (Options.Metrics)", s)
		}
	}
	logs := 0
	for _, j := range in.jobs {
		if !j.Telemetry {
			logs++
		}
	}
	a.partLimit = min(opts.ExactLimit, max(2*opts.ExactLimit/max(logs, 1), 4096))
	if opts.SliceDuration > 0 {
		a.sliceNs = int64(opts.SliceDuration)
	}
	parts, err := a.readAll(records != nil)
	defer func() {
		for _, p := range parts {
			if p != nil && p.records != nil {
				p.records.Close()
				os.Remove(p.records.Name())
			}
		}
	}()
	if err != nil {
		return nil, err
	}
	s, err := a.summarise(parts, records)
	if err != nil {
		return nil, err
	}
	s.redactSecrets()
	return s, nil
}

type analysis struct {
	opts    *Options
	reg     *Registry // the metrics computed
	in      *input
	seen    *seenSet
	sliceNs int64
	// partLimit is the exact-value limit of one log's distributions: the logs together hold
	// at most about twice ExactLimit values per metric before they are merged.
	partLimit int
}

// readAll reads every log, Parallelism at a time. With records wanted, each log's records go
// to a temporary file that summarise concatenates in order, so the output does not depend
// on scheduling.
func (a *analysis) readAll(wantRecords bool) ([]*logAnalysis, error) {
	jobs := a.in.jobs
	parts := make([]*logAnalysis, len(jobs))
	errs := make([]error, len(jobs))
	sem := make(chan struct{}, a.opts.Parallelism)
	var wg sync.WaitGroup
	for i := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			p := &logAnalysis{all: newCollector(a.reg, a.partLimit)}
			if a.sliceNs > 0 {
				p.slices = map[int64]*collector{}
				p.budgets = newBudgets(a.reg, a.partLimit)
			}
			parts[i] = p
			var w io.Writer
			if wantRecords && !jobs[i].Telemetry {
				f, err := os.CreateTemp(a.opts.TempDir, "analyze-*.jsonl")
				if err != nil {
					errs[i] = fmt.Errorf("analyze: %w", err)
					return
				}
				p.records = f
				w = f
			}
			errs[i] = a.readLog(i, jobs[i], p, w)
		}(i)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return parts, err
		}
	}
	return parts, nil
}

// readLog reads log number part into p, writing request records to w when not nil.
func (a *analysis) readLog(part int, job rundir.Log, p *logAnalysis, w io.Writer) error {
	// A worker killed before it wrote its header leaves no log or an empty one: its planned
	// requests are lost, which the counts report, rather than the analysis failing.
	if st, err := os.Stat(job.Path); (err != nil && errors.Is(err, fs.ErrNotExist)) || (err == nil && st.Size() == 0) {
		p.missing = true
		return nil
	}
	r, err := rawlog.Open(job.Path)
	if err != nil {
		// Damage confined to one log costs its requests (lost), not the whole analysis.
		if errors.Is(err, rawlog.ErrFormat) {
			p.damaged = fmt.Sprintf("%v: its header is unreadable, so %s", err, job.LostWhat())
			return nil
		}
		return wrapInput(err)
	}
	defer r.Close()
	if h := r.Header(); h.PlanHash != a.in.plan.HashHex() {
		got, want := rawlog.HashPrefixes(h.PlanHash, a.in.plan.HashHex())
		return inputErr("%s: log was written for plan %q, not %s", job.Path, got, want)
	}
	var bw *bufio.Writer
	if w != nil {
		bw = bufio.NewWriterSize(w, 256<<10)
	}
	wall := a.in.runs[job.Run].Manifest.StartUnixNs
	proc := newProcessor(requestConfig{ep: a.in.ep, tokens: a.in.ep.ProducesTokens, tok: a.in.tok,
		server: a.opts.UseServerTokenCount, slos: a.opts.Goodput, reg: a.reg, media: a.in.plan.Meta().MediaOf,
		run: job.Run, worker: job.Worker, wall: wall})
	ro := a.recordOpts(job.Run)
	var line []byte
	rows := a.rowWriter(part)
	for {
		kind, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil && errors.Is(err, rawlog.ErrFormat) {
			p.damaged = fmt.Sprintf("%v: %d request records before the damage were read; what came after it is lost", err, p.seen)
			break
		}
		if err != nil {
			return wrapInput(err)
		}
		switch kind {
		case rawlog.KindRequest:
			q := r.Request()
			if int(q.Index) >= a.in.plan.Len() {
				return inputErr("%s: request %d is not in the plan (%d records): wrong --plan?", job.Path, q.Index, a.in.plan.Len())
			}
			rec, body, err := a.in.plan.Record(int(q.Index))
			if err != nil {
				return wrapInput(err)
			}
			if a.seen.mark(q.Index) {
				return inputErr("%s: request %d appears twice in the logs (the same run given twice, or overlapping shards?)", job.Path, q.Index)
			}
			p.seen++
			delete(p.inFlight, q.Index)
			m := proc.compute(q, &rec, len(body))
			if m.Phase != mmapds.PhaseProfile {
				p.warmup++
				if !m.Valid && !m.NotDue {
					p.warmErr++
				}
				continue
			}
			if a.in.plan.HasGraph() {
				// Sessions are of the whole graph, whatever --where keeps of its requests.
				p.nodes = append(p.nodes, sessions.Of(m, q))
			}
			var c choice
			if a.selecting() && !m.NotDue {
				c = a.choose(proc)
				g, err := p.sel.tally(a, c)
				if err != nil {
					return err
				}
				if !c.keep {
					continue
				}
				if g != nil {
					g.add(m)
				}
				m.Group, m.Grouped = c.group, c.grouped
			}
			p.all.add(m)
			p.shape.add(m)
			if a.opts.OnRequest != nil && m.Sent {
				ct := ContentTiming{Index: m.Index, Session: m.Session, Turn: m.Turn, WriteStartNs: q.WriteStartNs, WriteEndNs: q.WriteEndNs}
				if m.Valid {
					ct.ContentNs = proc.times
				}
				a.opts.OnRequest(ct)
			}
			if m.NotDue {
				continue
			}
			if p.slices != nil && m.Sent {
				k := floorDiv(wall+m.SendNs, a.sliceNs)
				c := p.slices[k]
				if c == nil {
					if len(p.slices) >= maxSlices {
						return a.tooManySlices()
					}
					c = newCollector(a.reg, a.partLimit)
					c.budgets = p.budgets
					p.slices[k] = c
				}
				c.add(m)
			}
			if bw != nil {
				line = record.AppendJSONL(line[:0], m, q, ro)
				if _, err := bw.Write(line); err != nil {
					return fmt.Errorf("analyze: write records: %w", err)
				}
			}
			if rows != nil {
				if err := rows.write(proc, q, c); err != nil {
					return err
				}
			}
		case rawlog.KindCPU:
			p.cpu = append(p.cpu, r.CPU())
		case rawlog.KindGPU:
			g := r.GPU()
			g.UUID = strings.Clone(g.UUID)
			p.gpu = append(p.gpu, g)
		case rawlog.KindFooter:
			p.status = r.Footer().Status
		case rawlog.KindSent:
			// A request's Sent record precedes its Request record in the same log, which
			// takes it out again: the set holds only the requests in flight.
			if p.inFlight == nil {
				p.inFlight = map[uint32]struct{}{}
			}
			p.inFlight[r.Sent().Index] = struct{}{}
		}
	}
	p.torn = r.Torn()
	if bw != nil {
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("analyze: write records: %w", err)
		}
	}
	return nil
}

func (a *analysis) tooManySlices() error {
	return inputErr("--slice-duration %v makes more than %d time slices: use a longer duration", a.opts.SliceDuration, maxSlices)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// recordOpts are the per-request record options for run number run.
func (a *analysis) recordOpts(run int) *record.Options {
	o := &record.Options{Columns: a.reg.or().columns, Correlated: record.SessionHeaderSent(a.in.runs[run].Manifest),
		Trace: a.opts.ExportHTTPTrace, Chunks: a.opts.ExportPerChunkData, Grouped: a.opts.GroupBy != nil, Metadata: a.opts.RecordMetadata}
	if a.in.plan.HasGraph() {
		o.Graph = a.in.plan
	}
	return o
}
