package analyze

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/redact"
)

// Result is one metric's outcome: a distribution (Stats) for record metrics, else Value.
// Values are in the metric's display unit.
type Result struct {
	MetricDef
	Stats *Stats
	Value float64
	// Exact is Value as an integer, exactly, for whole-number single values (MetricDef.Int):
	// timestamps in nanoseconds do not fit a float64's 53 bits.
	Exact int64
}

// Counts tally the planned requests of the profile phase, plus warmup.
type Counts struct {
	// Planned is the number of records in the plan; Profile and Warmup split it by phase
	// (warmup records are not measured).
	Planned, Profile, Warmup int64
	// Valid requests count in the metrics; Errors did not (Lost, NotSent and Cancelled
	// included). GateErrors leaves out cancellations the plan asked for.
	Valid, Errors, GateErrors int64
	Sent, Lost, NotSent       int64
	// NotDue counts profile requests the plan's duration ended before they were due; they
	// are not part of the benchmark and are left out of Profile.
	NotDue int64
	// WarmupSeen counts warmup requests found in the logs; WarmupErrors those that failed
	// (not in Errors), so counts can be reconciled with the server's.
	WarmupSeen, WarmupErrors int64
}

// Verdict says whether the client kept its schedule, so the numbers describe the server.
type Verdict struct {
	// Known is false when nothing could be judged (no requests sent, no CPU samples).
	Known bool
	Kept  bool
	// DispatchLagP99Ms is the p99 of send − ready; MaxLagMs the bound.
	DispatchLagP99Ms float64
	MaxLagMs         float64
	LagKnown         bool
	// BusiestWorker is the worker with the highest CPU use over the profile window, as a
	// percentage of one core; MaxCPUPct the bound. When workers were pinned to one CPU
	// together (replay starts more workers than CPUs when one process cannot hold the
	// open files) and their sum is higher, BusiestWorkerPct is that CPU's load, the sum,
	// SharedBy how many workers shared it and BusiestWorker the busiest of them.
	BusiestWorker    int
	BusiestWorkerPct float64
	SharedBy         int
	MaxCPUPct        float64
	CPUKnown         bool
	// Reasons lists what failed.
	Reasons []string
	// What the lag is judged against (analyze/verdict.go, docs/metrics.md).
	VerdictContext
}

// WorkerSummary is one worker's health over the profile window.
type WorkerSummary struct {
	Run, Worker int
	// CPU is the CPU the worker was pinned to (run.json workers[].cpu), -1 when unpinned.
	CPU      int
	Requests int64
	// CPUPct is the worker's CPU time (user+sys) over wall time in the profile window, as a
	// percentage of one core; -1 without samples.
	CPUPct float64
	Status string
	Torn   int64
}

// Slice is the summary of the requests sent in one time window.
type Slice struct {
	Index       int
	StartUnixNs int64
	EndUnixNs   int64
	Results     []Result
	ErrorCounts []ErrorCount
	// ServerMetrics are the server and GPU metrics over the slice (analyze/servermetrics.go).
	ServerMetrics []ServerMetric
}

// Summary is everything one analysis computed. Reporters are functions over it.
type Summary struct {
	Tool, ToolVersion  string
	PlanHash, PlanPath string
	RunDirs            []string
	Endpoint, Model    string
	Streaming          bool
	Concurrency        int
	OfferedRate        float64
	Seed               uint64
	Tokenizer          string
	// TokenCount is "tokenizer" or "server" (--use-server-token-count).
	TokenCount  string
	URLs        []string
	CommandLine string
	Spec        map[string]any
	// StartUnixNs and EndUnixNs bound the benchmark: first send to last response.
	StartUnixNs, EndUnixNs int64
	// RunStartUnixNs is the first run's wall-clock zero; RunStatus its run.json status.
	RunStartUnixNs int64
	RunStatus      string
	WasCancelled   bool

	Results []Result
	Errors  []ErrorCount
	Counts  Counts
	Verdict Verdict
	Goodput []SLO
	Slices  []Slice
	// SliceDurationNs is the slice width when slices were requested.
	SliceDurationNs int64
	GPUs            []GPUSummary
	Workers         []WorkerSummary
	// Notes are warnings for people: torn logs, zero-gap chunks, OSL mismatches.
	Notes []string
	// Damaged lists the logs that could not be read whole (an unreadable header, a corrupt
	// record before the end): the results leave out what they held. Notes say more.
	Damaged []string
	// Claim is the benchmark claim (analyze/claim.go), set by EvaluateClaim; nil before.
	Claim *Claim
	// Shards describes the shards of a distributed run (analyze/shards.go); nil otherwise.
	Shards *ShardReport
	// ServerSeries are the scraped server and GPU metrics (analyze/servermetrics.go) mapped to
	// stable names, on the benchmark's clock; ServerMetrics their statistics over the
	// profile window. Both empty when the run has no server-metrics file.
	ServerSeries  []ServerMetricSeries
	ServerMetrics []ServerMetric

	runStarts     []int64       // every run's wall-clock zero after the first
	runStatus     []string      // each run's run.json status, by run (Health)
	hosts         []string      // each run's host, by run
	planPathShown string        // the plan path as run.json (or --plan) gave it
	shape         *shapeSamples // the requests shape validation compares (shape.go)
}

// Result returns the result with the given tag.
func (s *Summary) Result(tag string) (*Result, bool) {
	for i := range s.Results {
		if s.Results[i].Tag == tag {
			return &s.Results[i], true
		}
	}
	return nil, false
}

func (s *Summary) result(id MetricID) *Result {
	for i := range s.Results {
		if s.Results[i].ID == id {
			return &s.Results[i]
		}
	}
	return nil
}

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
	budgets *[numRecord]budget // exact values held by this log's slices
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
	damaged  string       // why part or all of the log could not be read, for Summary.Notes
	shape    shapeSamples // valid profile requests, for shape validation (shape.go)
	records  *os.File     // per-request JSONL, when written to a temporary file
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
	a := &analysis{opts: &opts, in: in, seen: newSeenSet(in.plan.Len())}
	logs := 0
	for _, j := range in.jobs {
		if !j.telemetry {
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
			p := &logAnalysis{all: newCollector(a.partLimit)}
			if a.sliceNs > 0 {
				p.slices = map[int64]*collector{}
				p.budgets = new([numRecord]budget)
				for i := range p.budgets {
					p.budgets[i].max = a.partLimit
				}
			}
			parts[i] = p
			var w io.Writer
			if wantRecords && !jobs[i].telemetry {
				f, err := os.CreateTemp(a.opts.TempDir, "analyze-*.jsonl")
				if err != nil {
					errs[i] = fmt.Errorf("analyze: %w", err)
					return
				}
				p.records = f
				w = f
			}
			errs[i] = a.readLog(jobs[i], p, w)
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

// readLog reads one log into p, writing request records to w when not nil.
func (a *analysis) readLog(job logJob, p *logAnalysis, w io.Writer) error {
	// A worker killed before it wrote its header leaves no log or an empty one: its planned
	// requests are lost, which the counts report, rather than the analysis failing.
	if st, err := os.Stat(job.path); (err != nil && errors.Is(err, fs.ErrNotExist)) || (err == nil && st.Size() == 0) {
		p.missing = true
		return nil
	}
	r, err := rawlog.Open(job.path)
	if err != nil {
		// Damage confined to one log costs its requests (lost), not the whole analysis.
		if errors.Is(err, rawlog.ErrFormat) {
			p.damaged = fmt.Sprintf("%v: its header is unreadable, so %s", err, job.lostWhat())
			return nil
		}
		return wrapInput(err)
	}
	defer r.Close()
	if h := r.Header(); h.PlanHash != a.in.plan.HashHex() {
		got, want := rawlog.HashPrefixes(h.PlanHash, a.in.plan.HashHex())
		return inputErr("%s: log was written for plan %q, not %s", job.path, got, want)
	}
	var bw *bufio.Writer
	if w != nil {
		bw = bufio.NewWriterSize(w, 256<<10)
	}
	proc := newProcessor(requestConfig{ep: a.in.ep, tokens: a.in.ep.ProducesTokens, tok: a.in.tok,
		server: a.opts.UseServerTokenCount, slos: a.opts.Goodput})
	wall := a.in.runs[job.run].m.StartUnixNs
	ro := a.recordOpts(job.run)
	var line []byte
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
				return inputErr("%s: request %d is not in the plan (%d records): wrong --plan?", job.path, q.Index, a.in.plan.Len())
			}
			rec, body, err := a.in.plan.Record(int(q.Index))
			if err != nil {
				return wrapInput(err)
			}
			if a.seen.mark(q.Index) {
				return inputErr("%s: request %d appears twice in the logs (the same run given twice, or overlapping shards?)", job.path, q.Index)
			}
			p.seen++
			delete(p.inFlight, q.Index)
			m := proc.compute(q, &rec, len(body))
			mediaMetrics(m, a.in.plan.Meta().MediaOf(&rec)) // analyze/multimodal.go
			m.Run, m.Worker, m.StartUnixNs = job.run, job.worker, wall
			if m.Phase != mmapds.PhaseProfile {
				p.warmup++
				if !m.Valid && !m.NotDue {
					p.warmErr++
				}
				continue
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
					c = newCollector(a.partLimit)
					c.budgets = p.budgets
					p.slices[k] = c
				}
				c.add(m)
			}
			if bw != nil {
				line = appendRecord(line[:0], m, q, ro)
				if _, err := bw.Write(line); err != nil {
					return fmt.Errorf("analyze: write records: %w", err)
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

// summarise merges the logs' analyses in log order and computes every result.
func (a *analysis) summarise(parts []*logAnalysis, records io.Writer) (*Summary, error) {
	in := a.in
	meta := in.meta
	all := newCollector(a.opts.ExactLimit)
	sliceCols := map[int64]*collector{}
	s := &Summary{
		Tool: "llmbench", PlanHash: in.plan.HashHex(), PlanPath: in.planPath,
		Endpoint: meta.Endpoint, Model: meta.Model, Streaming: meta.Streaming,
		Concurrency: meta.Concurrency, OfferedRate: meta.OfferedRate, Seed: meta.Seed,
		Tokenizer: in.tokName, TokenCount: "tokenizer", Spec: meta.Spec, Goodput: a.opts.Goodput,
		SliceDurationNs: a.sliceNs,
	}
	s.Notes = append(s.Notes, in.notes...)
	if a.opts.UseServerTokenCount {
		s.TokenCount = "server"
	}
	if !in.ep.ProducesTokens {
		s.TokenCount = ""
	}
	first := in.runs[0].m
	var lags shardLag
	if in.shards != nil {
		s.Shards, lags = in.shards, shardLag{}
	}
	// Redacted again: a run.json from an older replay may hold secrets its rules missed.
	s.ToolVersion, s.URLs, s.RunStartUnixNs, s.RunStatus = first.ToolVersion, redact.URLs(first.URLs), first.StartUnixNs, first.Status
	s.CommandLine = strings.Join(redact.Args(first.CommandLine), " ")
	s.planPathShown = first.PlanPath
	if a.opts.PlanPath != "" {
		s.planPathShown = a.opts.PlanPath
	}
	for i, r := range in.runs {
		if i > 0 {
			s.runStarts = append(s.runStarts, r.m.StartUnixNs)
		}
		s.hosts = append(s.hosts, r.m.Host)
		s.runStatus = append(s.runStatus, r.m.Status)
		s.RunDirs = append(s.RunDirs, r.dir)
		if r.m.Status == rawlog.StatusInterrupted {
			s.WasCancelled = true
		}
	}
	perJob := make([]int64, len(parts))
	for i, p := range parts {
		lags.add(in.jobs[i].run, p.all, a.opts.ExactLimit)
		all.merge(p.all)
		for _, k := range sortedKeys(p.slices) {
			c := sliceCols[k]
			if c == nil {
				if len(sliceCols) >= maxSlices {
					return nil, a.tooManySlices()
				}
				c = newCollector(a.opts.ExactLimit)
				sliceCols[k] = c
			}
			c.merge(p.slices[k])
		}
		// Merged: let the log's values go.
		p.all, p.slices = nil, nil
		s.Counts.WarmupSeen += p.warmup
		s.Counts.WarmupErrors += p.warmErr
		perJob[i] = p.seen
		job := in.jobs[i]
		if p.torn > 0 {
			s.Notes = append(s.Notes, fmt.Sprintf("%s: a torn final record (%d bytes) was skipped: the worker did not shut down cleanly", job.path, p.torn))
		}
		if p.missing {
			s.Notes = append(s.Notes, fmt.Sprintf("%s is missing or empty: its %d planned requests are lost", job.path, job.planned))
		}
		if p.damaged != "" {
			s.Damaged = append(s.Damaged, job.path)
			s.Notes = append(s.Notes, "DAMAGED LOG "+p.damaged)
		}
	}
	for _, r := range in.runs {
		if r.m.Status == rawlog.StatusRunning {
			s.Notes = append(s.Notes, fmt.Sprintf("%s: the run crashed: its status is still %q, so replay's coordinator was killed or died before the run ended; "+
				"requests are counted from the worker logs (no record and no Sent record: not sent; a Sent record only: lost in flight)",
				filepath.Join(r.dir, rawlog.ManifestName), r.m.Status))
			continue
		}
		if r.m.Status != rawlog.StatusComplete {
			msg := fmt.Sprintf("%s: the run's status is %q", filepath.Join(r.dir, rawlog.ManifestName), r.m.Status)
			if r.m.Error != "" {
				msg += ": " + r.m.Error
			}
			s.Notes = append(s.Notes, msg)
		}
	}

	// Count the plan by phase, and the profile requests no log holds. When the run
	// directories cover the whole plan, unseen records are found by index; otherwise each
	// worker's planned count is compared with its log. An unseen request is lost (in flight
	// when its worker died, or its log is missing or damaged) unless every log was read to its
	// end and none has its Sent record: then it was never sent (the worker, or the
	// coordinator that would have recovered it, stopped first) and counts as not_sent. Only
	// logs with Sent records tell that: when a log short of its planned requests has none,
	// unseen requests stay lost.
	var unseen []unseenRequest
	tellsSent := func(i int) bool {
		p := parts[i]
		return !p.missing && p.damaged == "" && p.inFlight != nil
	}
	wholeLogs := true
	inFlight := map[uint32]struct{}{}
	for i, p := range parts {
		// A log holding all its planned requests holds none of the unseen ones.
		if job := in.jobs[i]; !job.telemetry && !job.recovery && p.seen < int64(job.planned) {
			wholeLogs = wholeLogs && tellsSent(i)
		}
		for i := range p.inFlight {
			inFlight[i] = struct{}{}
		}
	}
	neverSent := &requestError{Kind: "not_sent", Message: "never sent: no record and no Sent record in its worker's log (the worker or the coordinator stopped first)"}
	lost := &requestError{Kind: "lost", Message: "no record in any log: in flight when its worker died"}
	var neverSentN int64
	for i := 0; i < in.plan.Len(); i++ {
		rec, _, _ := in.plan.Record(i)
		if rec.Phase == mmapds.PhaseProfile {
			s.Counts.Profile++
		} else {
			s.Counts.Warmup++
		}
	}
	s.Counts.Planned = int64(in.plan.Len())
	if in.planned == in.plan.Len() {
		for i := 0; i < in.plan.Len(); i++ {
			if a.seen.has(i) {
				continue
			}
			rec, _, _ := in.plan.Record(i)
			if rec.Phase != mmapds.PhaseProfile {
				continue
			}
			u := unseenRequest{idx: i, err: lost}
			if _, sent := inFlight[uint32(i)]; !sent && wholeLogs {
				u.err = neverSent
			} else {
				s.Counts.Lost++
			}
			unseen = append(unseen, u)
		}
	} else {
		seenProfile := all.valid + all.errors + all.notDue
		for i, job := range in.jobs {
			if job.telemetry || int64(job.planned) <= perJob[i] {
				continue
			}
			missing := int64(job.planned) - perJob[i]
			if p := parts[i]; tellsSent(i) {
				never := max(missing-int64(len(p.inFlight)), 0)
				neverSentN += never
				missing -= never
			}
			s.Counts.Lost += missing
		}
		// Only the shards given were planned for these workers: count the profile requests
		// they planned, not the whole plan.
		s.Counts.Profile = seenProfile + s.Counts.Lost + neverSentN
		s.Counts.Warmup = s.Counts.WarmupSeen
	}
	for _, u := range unseen {
		all.addError(u.err, uint32(u.idx), 1)
		all.gateErrors++
	}
	if neverSentN > 0 {
		all.addError(neverSent, math.MaxUint32, neverSentN)
		all.gateErrors += neverSentN
	}
	if len(unseen) == 0 && s.Counts.Lost > 0 {
		all.addError(&requestError{Kind: "lost", Message: "planned for a worker but missing from its log"}, math.MaxUint32, s.Counts.Lost)
		all.gateErrors += s.Counts.Lost
	}
	s.Counts.NotDue = all.notDue
	s.Counts.Profile -= all.notDue
	s.Counts.Valid, s.Counts.Errors, s.Counts.GateErrors = all.valid, all.errors, all.gateErrors
	s.Counts.Sent = all.sent
	if a := all.errs["not_sent"]; a != nil {
		s.Counts.NotSent = a.Count
	}
	if s.Counts.Profile == 0 {
		return nil, inputErr("%s: the plan has no profile-phase requests to analyse", in.planPath)
	}
	if s.Counts.Valid+s.Counts.Errors == 0 {
		if len(s.Damaged) > 0 {
			return nil, inputErr("no profile requests found in the logs of %s; damaged: %s", strings.Join(s.RunDirs, ", "), strings.Join(s.Damaged, ", "))
		}
		return nil, inputErr("no profile requests found in the logs of %s", strings.Join(s.RunDirs, ", "))
	}

	// The benchmark window: first send to last response of valid requests (AIPerf); without
	// any, first send to last end, so rates still have a denominator.
	win := all.benchWin
	if !win.ok {
		win = all.sendWin
		win.merge(all.endWin)
	}
	s.StartUnixNs, s.EndUnixNs = win.lo, win.hi

	s.Workers, s.Notes = a.workerHealth(parts, s, s.Notes)
	cpuDist := a.cpuDist(parts, s)
	s.GPUs = gpuSummaries(parts, in, s.StartUnixNs, s.EndUnixNs)

	s.Results = a.results(all, resultEnv{durNs: s.EndUnixNs - s.StartUnixNs, lost: s.Counts.Lost, warmup: s.Counts.WarmupSeen,
		offered: meta.OfferedRate, cpu: cpuDist, workers: s.Workers, gpus: s.GPUs, concurrency: meta.Concurrency, whole: true})
	s.Errors = all.errorCounts()
	s.Verdict = verdict(s, a.opts, a.verdictFacts(all, meta))
	a.judgeShards(s, lags)
	s.shape = mergeShape(parts)
	s.Notes = append(s.Notes, notes(s, all)...)

	if a.sliceNs > 0 {
		for i, k := range sortedKeys(sliceCols) {
			c := sliceCols[k]
			s.Slices = append(s.Slices, Slice{Index: i, StartUnixNs: k * a.sliceNs, EndUnixNs: (k + 1) * a.sliceNs,
				Results: a.results(c, resultEnv{durNs: a.sliceNs}), ErrorCounts: c.errorCounts()})
		}
		// Index slices by their position since the first one, so gaps stay visible.
		if len(s.Slices) > 0 {
			k0 := s.Slices[0].StartUnixNs / a.sliceNs
			for i := range s.Slices {
				s.Slices[i].Index = int(s.Slices[i].StartUnixNs/a.sliceNs - k0)
			}
		}
	}

	a.serverMetrics(s, parts)

	if records != nil {
		if err := a.writeRecords(parts, unseen, records); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// unseenRequest is a planned profile request no log holds, and why.
type unseenRequest struct {
	idx int
	err *requestError // kind lost or not_sent
}

// recordOpts are the per-request record options for run number run.
func (a *analysis) recordOpts(run int) recordOpts {
	return recordOpts{correlated: sessionHeaderSent(a.in.runs[run].m), trace: a.opts.ExportHTTPTrace, chunks: a.opts.ExportPerChunkData}
}

// writeRecords concatenates the per-log record files and appends the requests no log holds.
func (a *analysis) writeRecords(parts []*logAnalysis, unseen []unseenRequest, w io.Writer) error {
	for _, p := range parts {
		if p.records == nil {
			continue
		}
		if _, err := p.records.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("analyze: %w", err)
		}
		if _, err := io.Copy(w, p.records); err != nil {
			return fmt.Errorf("analyze: write records: %w", err)
		}
	}
	var line []byte
	var m requestMetrics
	for _, u := range unseen {
		rec, _, _ := a.in.plan.Record(u.idx)
		m = requestMetrics{Index: uint32(u.idx), Phase: rec.Phase, Session: rec.Session, Turn: rec.Turn, Worker: -1,
			IntendedNs: rec.SendOffsetNs, ReadyNs: -1, SendNs: -1, HeaderNs: -1, EndNs: -1,
			FirstContentNs: -1, LastContentNs: -1, StartUnixNs: a.in.runs[0].m.StartUnixNs,
			Err: u.err}
		line = appendRecord(line[:0], &m, nil, a.recordOpts(0))
		if _, err := w.Write(line); err != nil {
			return fmt.Errorf("analyze: write records: %w", err)
		}
	}
	return nil
}
