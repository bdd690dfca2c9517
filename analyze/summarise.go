package analyze

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/llmbench/llmbench/analyze/record"
	"github.com/llmbench/llmbench/analyze/rundir"
	"github.com/llmbench/llmbench/analyze/serverside"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/redact"
)

// summarise turns the logs' analyses into the Summary, one concern at a time: what the plan
// and run.json say (newSummary), the logs merged in log order (mergeLogs), the runs' own
// status (runNotes), the plan's accounting of what no log holds (account, accounting.go),
// the benchmark window, every metric's result with the verdict on the client (results),
// the time slices, the server metrics and the per-request records.
func (a *analysis) summarise(parts []*logAnalysis, records io.Writer) (*Summary, error) {
	s := a.newSummary()
	m, err := a.mergeLogs(s, parts)
	if err != nil {
		return nil, err
	}
	runNotes(s, a.in.runs)
	unseen, err := a.account(s, parts, m)
	if err != nil {
		return nil, err
	}
	// The benchmark window: first send to last response of valid requests (AIPerf); without
	// any, first send to last end, so rates still have a denominator.
	win := m.all.benchWin
	if !win.ok {
		win = m.all.sendWin
		win.merge(m.all.endWin)
	}
	s.StartUnixNs, s.EndUnixNs = win.lo, win.hi
	a.wholeResults(s, parts, m)
	a.sliceResults(s, m.slices)
	a.groupSummary(s, m)
	a.serverMetrics(s, parts)
	a.sessions(s, parts) // after the server metrics: it sets the prefix reuse beside them
	a.repeatNote(s)
	if records != nil {
		if err := a.writeRecords(parts, unseen, records); err != nil {
			return nil, err
		}
	}
	if err := a.unseenRows(len(parts), unseen); err != nil {
		return nil, err
	}
	return s, nil
}

// newSummary is the summary's header: what the plan and the first run's run.json say, and
// each run's start, host, status and directory.
func (a *analysis) newSummary() *Summary {
	in := a.in
	meta := in.meta
	s := &Summary{
		Tool: "llmbench", PlanHash: in.plan.HashHex(), PlanPath: in.planPath,
		Endpoint: meta.Endpoint, Model: meta.Model, Streaming: meta.Streaming,
		Concurrency: meta.Concurrency, OfferedRate: meta.OfferedRate, Seed: meta.Seed,
		Tokenizer: in.tokName, TokenCount: "tokenizer", Spec: meta.Spec, Goodput: a.opts.Goodput,
		SliceDurationNs: a.sliceNs, Registry: a.reg,
	}
	s.Notes = append(s.Notes, in.notes...)
	if a.opts.UseServerTokenCount {
		s.TokenCount = "server"
	}
	if !in.ep.ProducesTokens {
		s.TokenCount = ""
	}
	first := in.runs[0].Manifest
	// Redacted again: a run.json from an older replay may hold secrets its rules missed.
	s.ToolVersion, s.URLs, s.RunStartUnixNs, s.RunStatus = first.ToolVersion, redact.URLs(first.URLs), first.StartUnixNs, first.Status
	s.CommandLine = strings.Join(redact.Args(first.CommandLine), " ")
	s.planPathShown = first.PlanPath
	if a.opts.PlanPath != "" {
		s.planPathShown = a.opts.PlanPath
	}
	for i, r := range in.runs {
		if i > 0 {
			s.runStarts = append(s.runStarts, r.Manifest.StartUnixNs)
		}
		s.hosts = append(s.hosts, r.Manifest.Host)
		s.runStatus = append(s.runStatus, r.Manifest.Status)
		s.RunDirs = append(s.RunDirs, r.Dir)
		if r.Manifest.Status == rawlog.StatusInterrupted {
			s.WasCancelled = true
		}
	}
	if in.shards != nil {
		s.Shards = in.shards
	}
	return s
}

// merged is the logs' analyses folded together: the whole run's collector, each time
// slice's, the requests each log held and each shard's dispatch lag.
type merged struct {
	all    *collector
	slices map[int64]*collector
	perJob []int64
	lags   shardLag
	// sel is what --where left out and --group-by left ungrouped; groups the groups'
	// collectors.
	sel    selected
	groups map[string]*collector
}

// mergeLogs folds every log's analysis into one, in log order, and notes what each log lacks
// (a torn end, a missing file, damage).
func (a *analysis) mergeLogs(s *Summary, parts []*logAnalysis) (*merged, error) {
	in := a.in
	m := &merged{all: newCollector(a.reg, a.opts.ExactLimit), slices: map[int64]*collector{}, perJob: make([]int64, len(parts)),
		groups: map[string]*collector{}}
	if in.shards != nil {
		m.lags = shardLag{}
	}
	for i, p := range parts {
		m.lags.add(in.jobs[i].Run, p.all, a.opts.ExactLimit)
		m.all.merge(p.all)
		for _, k := range sortedKeys(p.slices) {
			c := m.slices[k]
			if c == nil {
				if len(m.slices) >= maxSlices {
					return nil, a.tooManySlices()
				}
				c = newCollector(a.reg, a.opts.ExactLimit)
				m.slices[k] = c
			}
			c.merge(p.slices[k])
		}
		if err := m.sel.merge(a, &p.sel, m.groups); err != nil {
			return nil, err
		}
		// Merged: let the log's values go.
		p.all, p.slices, p.sel = nil, nil, selected{}
		s.Counts.WarmupSeen += p.warmup
		s.Counts.WarmupErrors += p.warmErr
		m.perJob[i] = p.seen
		job := in.jobs[i]
		if p.torn > 0 {
			s.Notes = append(s.Notes, fmt.Sprintf("%s: a torn final record (%d bytes) was skipped: the worker did not shut down cleanly", job.Path, p.torn))
		}
		if p.missing {
			s.Notes = append(s.Notes, fmt.Sprintf("%s is missing or empty: its %d planned requests are lost", job.Path, job.Planned))
		}
		if p.damaged != "" {
			s.Damaged = append(s.Damaged, job.Path)
			s.Notes = append(s.Notes, "DAMAGED LOG "+p.damaged)
		}
	}
	return m, nil
}

// runNotes say which runs crashed or did not complete, from their run.json status.
func runNotes(s *Summary, runs []rundir.Run) {
	for _, r := range runs {
		if r.Manifest.Status == rawlog.StatusRunning {
			s.Notes = append(s.Notes, fmt.Sprintf("%s: the run crashed: its status is still %q, so replay's coordinator was killed or died before the run ended; "+
				"requests are counted from the worker logs (no record and no Sent record: not sent; a Sent record only: lost in flight)",
				filepath.Join(r.Dir, rawlog.ManifestName), r.Manifest.Status))
			continue
		}
		if r.Manifest.Status != rawlog.StatusComplete {
			msg := fmt.Sprintf("%s: the run's status is %q", filepath.Join(r.Dir, rawlog.ManifestName), r.Manifest.Status)
			if r.Manifest.Error != "" {
				msg += ": " + r.Manifest.Error
			}
			s.Notes = append(s.Notes, msg)
		}
	}
}

// wholeResults are the whole run's: worker health and telemetry, every metric, the errors,
// the verdict on the client's schedule (and each shard's), the shape samples and the notes.
func (a *analysis) wholeResults(s *Summary, parts []*logAnalysis, m *merged) {
	meta := a.in.meta
	s.Workers, s.Notes = a.workerHealth(parts, s, s.Notes)
	cpuDist := a.cpuDist(parts, s)
	s.GPUs = serverside.GPUSummaries(a.in.runs, gpuLogs(a.in.jobs, parts), s.StartUnixNs, s.EndUnixNs)
	s.Results = a.results(m.all, resultEnv{durNs: s.EndUnixNs - s.StartUnixNs, lost: s.Counts.Lost, warmup: s.Counts.WarmupSeen,
		offered: a.in.offer.Rate(), nominal: nominalOf(meta), cpu: cpuDist, workers: s.Workers, gpus: s.GPUs, concurrency: meta.Concurrency, whole: true})
	s.Errors = m.all.errorCounts()
	s.Verdict = verdict(s, a.opts, a.verdictFacts(m.all, meta))
	s.Verdict.Server = a.serverConnections(m.all)
	a.judgeShards(s, m.lags)
	s.shape = mergeShape(parts)
	s.Notes = append(s.Notes, notes(s, m.all, a.planLimitField())...)
	s.Notes = append(s.Notes, userNotes(a.reg, m.all)...)
	s.Usage = m.all.badUsage
	s.Usage.Rests = s.TokenCount == "server"
	if s.Usage.Bad() {
		s.Notes = append(s.Notes, "server token counts: "+s.Usage.String())
	}
}

// sliceResults summarises each time slice, indexed by its position since the first one so
// that gaps stay visible.
func (a *analysis) sliceResults(s *Summary, cols map[int64]*collector) {
	if a.sliceNs <= 0 {
		return
	}
	for i, k := range sortedKeys(cols) {
		c := cols[k]
		s.Slices = append(s.Slices, Slice{Index: i, StartUnixNs: k * a.sliceNs, EndUnixNs: (k + 1) * a.sliceNs,
			Results: a.results(c, resultEnv{durNs: a.sliceNs}), ErrorCounts: c.errorCounts()})
	}
	if len(s.Slices) > 0 {
		k0 := s.Slices[0].StartUnixNs / a.sliceNs
		for i := range s.Slices {
			s.Slices[i].Index = int(s.Slices[i].StartUnixNs/a.sliceNs - k0)
		}
	}
}

// groupSummary records the selection and summarises each group (--where, --group-by).
func (a *analysis) groupSummary(s *Summary, m *merged) {
	if !a.selecting() {
		return
	}
	r := &SelectionReport{Excluded: m.sel.excluded, NoValue: m.sel.noValue, Ungrouped: m.sel.ungrouped}
	if w := a.opts.Where; w != nil {
		r.Where = w.Expr
	}
	if g := a.opts.GroupBy; g != nil {
		r.GroupBy = g.Expr
		s.Groups = a.groupResults(m.groups, s.EndUnixNs-s.StartUnixNs)
	}
	s.Selection = r
	s.Notes = append(s.Notes, selectionNotes(r)...)
}

// unseenRows hands the rows of the planned requests no log holds to part's sink.
func (a *analysis) unseenRows(part int, unseen []unseenRequest) error {
	w := a.rowWriter(part)
	if w == nil || len(unseen) == 0 {
		return nil
	}
	uc := a.unseenChooser()
	for _, u := range unseen {
		rec, _, _ := a.in.plan.Record(u.idx)
		uc.load(&rec, u.err)
		uc.p.m.StartUnixNs = a.in.runs[0].Manifest.StartUnixNs
		if err := w.write(uc.p, nil, choice{keep: true, group: u.group, grouped: u.grouped}); err != nil {
			return err
		}
	}
	return nil
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
	n := len(a.reg.defs)
	values, has := make([]float64, n), make([]bool, n) // an unseen request has no values
	ro := a.recordOpts(0)
	for _, u := range unseen {
		rec, _, _ := a.in.plan.Record(u.idx)
		m := requestMetrics{Index: uint32(u.idx), Phase: rec.Phase, Session: rec.Session, Turn: rec.Turn, Worker: -1,
			IntendedNs: rec.SendOffsetNs, ReadyNs: -1, SendNs: -1, HeaderNs: -1, EndNs: -1,
			FirstContentNs: -1, LastContentNs: -1, StartUnixNs: a.in.runs[0].Manifest.StartUnixNs,
			Err: u.err, Values: values, Has: has, Group: u.group, Grouped: u.grouped}
		line = record.AppendJSONL(line[:0], &m, nil, ro)
		if _, err := w.Write(line); err != nil {
			return fmt.Errorf("analyze: write records: %w", err)
		}
	}
	return nil
}

// nominalOf is the rate a plan was asked for (--request-rate, --user-centric-rate), beside
// the rate its own instants offer; 0 for the modes that ask for none (a fixed schedule's
// rate is its instants').
func nominalOf(meta *mmapds.Meta) float64 {
	switch meta.TimingMode {
	case "request_rate", "user_centric":
		return meta.OfferedRate
	}
	return 0
}
