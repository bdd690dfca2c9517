package validate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/analyze/benchclaim"
	"github.com/llmbench/llmbench/internal/version"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/mockllm"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay"
	"github.com/llmbench/llmbench/tokenizer"
)

// Generator validation defaults (docs/metrics.md "Generator validation").
const (
	// DefaultDuration bounds the validation's replay: at most this long of the plan.
	DefaultDuration = 30 * time.Second
	// DefaultTTFT is the mock server's TTFT unless Options.TTFT says otherwise.
	DefaultTTFT = 20 * time.Millisecond
	// maxITL and minITL bound the default ITL: 1 s of stream over the plan's expected
	// output length, between 1 ms and 5 ms.
	maxITL = 5 * time.Millisecond
	minITL = time.Millisecond
)

// Options are one generator validation's settings (replay --validate, profile
// --validate-generator); the command has checked them.
type Options struct {
	// TTFT is the mock server's time to first token.
	TTFT time.Duration
	// ITL is the mock server's inter-token latency; 0 is 1 s over the plan's mean requested
	// output length, between 1 ms and 5 ms.
	ITL time.Duration
	// Requests bounds the profile requests replayed; 0 is what fits in Duration.
	Requests int
	// Duration bounds the replay: at most this long of the plan.
	Duration time.Duration
	// Tokenizers is how the plan's tokenizer is loaded (for the mock's output text and the
	// analysis), the Hugging Face cache and settings the command found.
	Tokenizers tokenizer.LoadOptions
}

// Before runs the validation for the replay ro before it starts; its file is written into
// ro.OutputDir once the run has locked the directory (ro.DirLocked), so a directory that
// holds another run, or that another run takes first, never gets it. The run then goes
// ahead whatever the outcome (the claim says it). Errors are bad input (the output
// directory included, checked before the validation's load is sent) or a validation that
// could not run.
func Before(o Options, ro *replay.Options, stderr io.Writer) error {
	if err := replay.CheckOutputDir(ro.OutputDir); err != nil {
		return err
	}
	g, err := Run(o, *ro, stderr)
	if err != nil {
		return fmt.Errorf("generator validation: %w", err)
	}
	ro.DirLocked = func(dir string) error {
		path := filepath.Join(dir, benchclaim.GeneratorValidationName)
		if err := benchclaim.WriteGeneratorValidation(path, g); err != nil {
			return err
		}
		fmt.Fprintln(stderr, Line(g, path))
		return nil
	}
	return nil
}

// Line says the outcome of g, written to path, in one line.
func Line(g *benchclaim.GeneratorValidation, path string) string {
	f := func(name string) string { // "n/a" for a figure the run did not give (no stream: no TTFT)
		if v, ok := g.Figures[name]; ok {
			return fmt.Sprintf("%.3f", v)
		}
		return "n/a"
	}
	figs := fmt.Sprintf("TTFT error p50 %s / p99 %s ms, ITL error p50 %s / p99 %s ms, inter-chunk error p50 %s / p99 %s ms, schedule lag p99 %s ms, busiest worker %s%% CPU, %d requests",
		f(benchclaim.FigTTFTP50Error), f(benchclaim.FigTTFTP99Error), f(benchclaim.FigITLP50Error), f(benchclaim.FigITLP99Error),
		f(benchclaim.FigICLP50Error), f(benchclaim.FigICLP99Error), f(benchclaim.FigScheduleLag), f(benchclaim.FigWorkerCPU), int(g.Figures[benchclaim.FigRequests]))
	if _, ok := g.Figures[benchclaim.FigClientTTFTP99]; ok {
		figs = fmt.Sprintf("client's share of TTFT p50 %s / p99 %s ms, receive delay p50 %s / p99 %s ms (%d requests matched with the mock's log); measured − configured: %s",
			f(benchclaim.FigClientTTFTP50), f(benchclaim.FigClientTTFTP99), f(benchclaim.FigReceiveP50), f(benchclaim.FigReceiveP99), int(g.Figures[benchclaim.FigMatched]), figs)
	}
	if _, ok := g.Figures[benchclaim.FigMockLateP99]; ok {
		figs += fmt.Sprintf("; the mock's own lateness p99 %s ms", f(benchclaim.FigMockLateP99))
	}
	where := fmt.Sprintf("mock server on CPUs %v, workers on %v", g.ServerCPUs, g.WorkerCPUs)
	if g.SharedCPUs {
		where = fmt.Sprintf("no CPU free of workers (%v): the mock server shared them, so this measures both together", g.WorkerCPUs)
	}
	if g.Passed {
		return fmt.Sprintf("generator validation PASSED (%s; %s): %s", figs, where, path)
	}
	return fmt.Sprintf("generator validation FAILED: %s (%s; %s): %s", strings.Join(g.Reasons, "; "), figs, where, path)
}

// Run replays the bounded share of the plan of the replay ro (its load, bodies, workers and
// CPUs) against an in-process mock server with known timing and judges the client's errors
// against the documented tolerances (benchclaim.JudgeGenerator). stderr gets one line saying
// what is replayed.
func Run(o Options, ro replay.Options, stderr io.Writer) (*benchclaim.GeneratorValidation, error) {
	p, err := mmapds.Open(ro.Plan, mmapds.Options{})
	if err != nil {
		return nil, err
	}
	defer p.Close()
	meta := p.Meta()
	tok, _ := tokenizer.LoadWithOptions(meta.Tokenizer, o.Tokenizers)
	mock := mockTiming(p, o.TTFT, o.ITL)
	tmp, err := os.MkdirTemp("", "llmbench-validate-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	sub := filepath.Join(tmp, "plan.llmplan")
	n, err := writeSubPlan(p, sub, o.Requests, o.Duration, mock)
	if err != nil {
		return nil, err
	}
	mo := mockllm.DefaultOptions()
	mo.TTFT, mo.ITL, mo.Seed = mock.ttft, mock.itl, meta.Seed
	late := &mockLog{}
	mo.ScheduleLog = late
	if tok != nil {
		mo.Tokenizer = tok
	}
	url, stop, err := mockllm.Start("127.0.0.1:0", mo)
	if err != nil {
		return nil, err
	}
	defer stop()
	ro.Plan, ro.URLs, ro.OutputDir = sub, []string{url}, filepath.Join(tmp, "run")
	ro.GPUSampleInterval, ro.WaitForModel, ro.Progress, ro.Notice = -1, 0, nil, io.Discard
	ro.Preflight = false // the mock is ours
	ro.GracePeriod = 5 * time.Second
	ro.APIKey = ""
	// The mock's schedule log finds the client's requests by their session header.
	ro.SessionHeader = mockllm.CorrelationHeader
	// Nothing of the real server's: its metrics, its DCGM exporter, a distributed run's
	// start instant and plan identity (the share replayed is another plan file).
	ro.ServerMetricsURLs, ro.NoServerMetrics, ro.GPUTelemetryURLs = nil, true, nil
	ro.StartAt, ro.PlanHash, ro.RunID, ro.LocalAddrs = time.Time{}, "", "", nil
	fmt.Fprintf(stderr, "generator validation: replaying %d profile requests (at most %v) against a mock server (TTFT %v, ITL %v)\n", n, o.Duration, mock.ttft, mock.itl)
	r, err := replay.New(ro)
	if err != nil {
		return nil, err
	}
	timer := time.AfterFunc(o.Duration+10*time.Second, r.Stop) // a bound, should the plan's share overrun
	// The workers map their monotonic clocks to the wall clock at the start, a moment from
	// now: the mock's log is put on that mapping (mockllm.ClockOffsetNs).
	clockOffset := mockllm.ClockOffsetNs(time.Now())
	m, err := r.Run()
	timer.Stop()
	if m == nil {
		return nil, err
	}
	client := &benchclaim.ShareCollector{}
	s, aerr := analyze.Analyze(analyze.Options{RunDirs: []string{ro.OutputDir}, Tokenizer: counter(tok), OnRequest: client.Add,
		LoadTokenizer: func(spec string) (analyze.TokenCounter, error) {
			return tokenizer.LoadWithOptions(spec, o.Tokenizers)
		}}, nil)
	if aerr != nil {
		return nil, errors.Join(aerr, err)
	}
	tol := benchclaim.DefaultTolerances()
	mt := benchclaim.MockTiming{TTFTMs: ms(mock.ttft), ITLMs: ms(mock.itl)}
	share := client.ClientShareOf(late.events(), m.StartUnixNs, clockOffset)
	figs, passed, reasons, notes := benchclaim.JudgeGenerator(s, mt, tol, share)
	g := &benchclaim.GeneratorValidation{FormatVersion: benchclaim.GeneratorValidationVersion, Tool: "llmbench", ToolVersion: version.String(),
		CreatedUnixNs: time.Now().UnixNano(), PlanHash: p.HashHex(),
		Machine: benchclaim.Machine{Host: m.Host, CPUModel: m.CPUModel, Kernel: m.Kernel},
		Workers: len(m.Workers), Mock: mt, Tolerances: tol, Figures: figs, Passed: passed, Reasons: reasons,
		Bound: benchclaim.ValidationBound{Requests: n, DurationS: o.Duration.Seconds()}, Notes: notes}
	if g.Reasons == nil {
		g.Reasons = []string{}
	}
	for _, w := range m.Workers {
		g.WorkerCPUs = append(g.WorkerCPUs, w.CPU)
	}
	g.ServerCPUs, g.SharedCPUs = serverCPUs(g.WorkerCPUs)
	if g.SharedCPUs {
		g.Notes = append(g.Notes, "no CPU was free of workers: the mock server shared the workers' CPUs, so the figures measure client and server together")
	}
	if p50, p99, ok := late.percentiles(); ok {
		g.Figures[benchclaim.FigMockLateP50], g.Figures[benchclaim.FigMockLateP99] = p50, p99
		if p99 > tol.ScheduleLagP99Ms {
			what := "the measured − configured errors include it"
			if _, judged := g.Figures[benchclaim.FigClientTTFTP99]; judged {
				what = "the client's share, judged instead, leaves it out"
			}
			g.Notes = append(g.Notes, fmt.Sprintf("the mock server itself wrote its events late (p99 %.3f ms after their due instants): %s", p99, what))
		}
	}
	if m.Status != rawlog.StatusComplete {
		g.Notes = append(g.Notes, fmt.Sprintf("the validation run ended %s: the bound of %v was reached", m.Status, o.Duration))
	}
	return g, nil
}

// counter is tok as an analyze.TokenCounter, nil when tok is nil (not a typed nil).
func counter(tok *tokenizer.Tokenizer) analyze.TokenCounter {
	if tok == nil {
		return nil
	}
	return tok
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// serverCPUs are the CPUs this process may use that no worker is pinned to: where the
// coordinator, and so the in-process mock server, runs. shared is true when there are none.
func serverCPUs(workers []int) (cpus []int, shared bool) {
	all, err := replay.AllowedCPUs()
	if err != nil || slices.Contains(workers, -1) {
		return all, true
	}
	for _, c := range all {
		if !slices.Contains(workers, c) {
			cpus = append(cpus, c)
		}
	}
	if len(cpus) == 0 {
		return workers, true
	}
	return cpus, false
}

// mockConfig is the mock server's timing.
type mockConfig struct{ ttft, itl time.Duration }

// mockTiming is the mock server's timing: ttft, and itl or, when 0, 1 s of stream over the
// plan's mean requested output length, between 1 ms and 5 ms.
func mockTiming(p *mmapds.Plan, ttft, itl time.Duration) mockConfig {
	if itl > 0 {
		return mockConfig{ttft, itl}
	}
	var sum, n float64
	for i := 0; i < p.Len(); i++ {
		if r, _, err := p.Record(i); err == nil && r.Phase == mmapds.PhaseProfile && r.OSL > 0 {
			sum, n = sum+float64(r.OSL), n+1
		}
	}
	itl = maxITL
	if n > 0 {
		itl = min(maxITL, max(minITL, time.Duration(float64(time.Second)/(sum/n))))
	}
	return mockConfig{ttft, itl.Round(100 * time.Microsecond)}
}

// writeSubPlan writes the share of p the validation replays to path: whole sessions from the
// first profile request on, no warmup, at most maxReq requests (0: no count bound) planned
// within dur of the first (a closed loop: as many as the concurrency completes in dur at
// the mock's timing, and at least four per slot). It returns the request count.
func writeSubPlan(p *mmapds.Plan, path string, maxReq int, dur time.Duration, mock mockConfig) (int, error) {
	meta := *p.Meta()
	if maxReq == 0 {
		maxReq = math.MaxInt
		var osl, n float64
		for i := 0; i < p.Len() && n < 1000; i++ {
			if r, _, err := p.Record(i); err == nil && r.Phase == mmapds.PhaseProfile {
				osl, n = osl+float64(r.OSL), n+1
			}
		}
		if meta.TimingMode == "concurrency" && n > 0 {
			per := mock.ttft + time.Duration(osl/n)*mock.itl
			slots := max(meta.Concurrency, 1)
			maxReq = max(4*slots, int(float64(slots)*float64(dur)/float64(max(per, time.Millisecond))))
		}
	}
	w, err := mmapds.Create(path)
	if err != nil {
		return 0, err
	}
	first, count, sessions := int64(-1), 0, map[uint32]uint32{}
	for i := 0; i < p.Len(); i++ {
		r, body, err := p.Record(i)
		if err != nil {
			w.Abort()
			return 0, err
		}
		if r.Phase != mmapds.PhaseProfile {
			continue
		}
		_, inSession := sessions[r.Session]
		if !inSession && (count >= maxReq || (first >= 0 && r.SendOffsetNs != mmapds.NoSendOffset && r.SendOffsetNs-first > int64(dur))) {
			break
		}
		if first < 0 && r.SendOffsetNs != mmapds.NoSendOffset {
			first = r.SendOffsetNs
		}
		if !inSession {
			sessions[r.Session] = uint32(len(sessions))
		}
		r.Session = sessions[r.Session]
		if r.SendOffsetNs != mmapds.NoSendOffset {
			r.SendOffsetNs -= first
		}
		if err := w.Add(r, body); err != nil {
			w.Abort()
			return 0, err
		}
		count++
	}
	if count == 0 {
		w.Abort()
		return 0, errors.New("the plan has no profile requests")
	}
	meta.WarmupCount, meta.ProfileCount, meta.DurationNs = 0, count, 0
	if _, err := w.Close(&meta); err != nil {
		return 0, err
	}
	return count, nil
}

// mockLog keeps the mock server's schedule log (one JSON ScheduleRecord a line; writes are
// serialized by the server): its event lateness, and each request's write instants (every
// token event of a stream, or the one body) for the client's share (benchclaim.ClientShareOf).
type mockLog struct {
	mu   sync.Mutex
	late []float64
	recs []benchclaim.ServerEvents
}

// Write takes one or more schedule log lines.
func (l *mockLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range bytes.Split(p, []byte("\n")) {
		var r mockllm.ScheduleRecord
		if len(bytes.TrimSpace(line)) == 0 || json.Unmarshal(line, &r) != nil {
			continue
		}
		for j := range min(len(r.DueNs), len(r.SentNs)) {
			l.late = append(l.late, float64(r.SentNs[j]-r.DueNs[j])/1e6)
		}
		ev := benchclaim.ServerEvents{Correlation: r.CorrelationID, ArrivalUnixNs: r.ArrivalUnixNs, SentUnixNs: make([]int64, len(r.SentNs))}
		for j, t := range r.SentNs {
			ev.SentUnixNs[j] = r.ArrivalUnixNs + t
		}
		l.recs = append(l.recs, ev)
	}
	return len(p), nil
}

// events are the requests' records.
func (l *mockLog) events() []benchclaim.ServerEvents {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.recs)
}

// percentiles are the p50 and p99 lateness in ms (nearest rank).
func (l *mockLog) percentiles() (p50, p99 float64, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.late) == 0 {
		return 0, 0, false
	}
	v := slices.Clone(l.late)
	slices.Sort(v)
	at := func(q float64) float64 { return math.Round(v[min(len(v)-1, int(q*float64(len(v))))]*1e4) / 1e4 }
	return at(0.5), at(0.99), true
}
