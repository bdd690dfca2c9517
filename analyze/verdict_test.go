package analyze

import (
	"strings"
	"testing"
	"time"

	"github.com/llmbench/llmbench/rawlog"
)

// Each branch of the verdict: kept, jittered arrivals (over the fixed bound but small beside
// the gaps and latencies), lag that reshapes the arrivals, lag against TTFT and ITL, CPU
// saturation, same-read batching with and without a busy client, and nothing to judge.
func TestVerdictBranches(t *testing.T) {
	type in struct {
		lagMs          float64 // dispatch lag p99; < 0: none
		ttftMs, itlMs  float64 // p50s; 0: none
		reqMs          float64 // request latency p50; 0: none
		cpuPct         float64 // busiest worker; < 0: no samples
		rate           float64 // offered rate, req/s; 0: closed loop
		sameReadPct    float64
		floorTimerP99  float64 // ms; 0: no calibration
		wantKnown      bool
		wantKept       bool
		wantJitter     bool
		wantReasonPart string // a reason must contain it; "" for none
		wantLinePart   string // the console line must contain it
	}
	cases := map[string]in{
		"kept under the bound": {lagMs: 0.4, ttftMs: 20, itlMs: 5, cpuPct: 30, rate: 500, wantKnown: true, wantKept: true,
			wantLinePart: "These numbers describe the server."},
		"jitter: 1.39 ms in 25 ms gaps at the floor": {lagMs: 1.39, ttftMs: 20, itlMs: 5, cpuPct: 20, rate: 40, floorTimerP99: 0.76,
			wantKnown: true, wantKept: true, wantJitter: true,
			wantLinePart: "only jittered the arrivals (5.56% of the plan's mean gap 25.00 ms), it is 6.95% of TTFT p50 20.00 ms, and within twice this machine's timer wake-up p99"},
		"floor printed beside the lag": {lagMs: 0.2, ttftMs: 20, cpuPct: 10, rate: 10, floorTimerP99: 0.5, wantKnown: true, wantKept: true,
			wantLinePart: "machine floor: timer wake-up p50 0.25 ms p99 0.50 ms"},
		"lag a large share of the gaps": {lagMs: 2.15, ttftMs: 20, itlMs: 5, cpuPct: 40, rate: 2000, wantKnown: true,
			wantReasonPart: "430.00% of the plan's mean gap 0.50 ms", wantLinePart: "describe the client"},
		"lag against TTFT, closed loop": {lagMs: 6, ttftMs: 20, itlMs: 50, cpuPct: 40, wantKnown: true,
			wantReasonPart: "30.00% of TTFT p50 20.00 ms"},
		"lag against ITL": {lagMs: 3, ttftMs: 100, itlMs: 5, cpuPct: 40, wantKnown: true,
			wantReasonPart: "60.00% of ITL p50 5.00 ms"},
		"lag against request latency without TTFT": {lagMs: 3, reqMs: 10, cpuPct: 40, wantKnown: true,
			wantReasonPart: "30.00% of request latency p50 10.00 ms"},
		"lag with nothing to hold it against": {lagMs: 3, cpuPct: 40, wantKnown: true,
			wantReasonPart: "no gap or latency"},
		"cpu saturated": {lagMs: 0.1, ttftMs: 20, cpuPct: 95, wantKnown: true, wantReasonPart: "worker 0 at 95.00% CPU ≥ 90.00%"},
		"same-read batching by a busy client": {lagMs: 0.1, ttftMs: 20, itlMs: 5, cpuPct: 70, sameReadPct: 30, wantKnown: true,
			wantReasonPart: "30.00% of inter-chunk gaps are same-read"},
		"same-read batching by the server": {lagMs: 0.1, ttftMs: 20, itlMs: 5, cpuPct: 20, sameReadPct: 30, wantKnown: true, wantKept: true},
		"nothing to judge":                 {lagMs: -1, cpuPct: -1, wantLinePart: "Verdict: unknown"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			s := &Summary{Counts: Counts{Valid: 1}}
			stat := func(id MetricID, p50, p99 float64) {
				st := &Stats{Count: 1}
				st.P[4], st.P[8] = p50, p99
				s.Results = append(s.Results, Result{MetricDef: catalog[id], Stats: st})
			}
			if c.lagMs >= 0 {
				stat(MDispatchLag, c.lagMs/2, c.lagMs)
			}
			if c.ttftMs > 0 {
				stat(MTimeToFirstToken, c.ttftMs, c.ttftMs)
			}
			if c.itlMs > 0 {
				stat(MInterTokenLatency, c.itlMs, c.itlMs)
			}
			if c.reqMs > 0 {
				stat(MRequestLatency, c.reqMs, c.reqMs)
			}
			if c.cpuPct >= 0 {
				s.Workers = []WorkerSummary{{Worker: 0, CPUPct: c.cpuPct}}
			}
			var vi verdictInputs
			if c.rate > 0 {
				vi.ctx.MeanGapMs = 1e3 / c.rate
			}
			vi.ctx.SameReadPct = c.sameReadPct
			if c.floorTimerP99 > 0 {
				vi.ctx.FloorKnown = true
				vi.ctx.FloorTimerLagP99Ms, vi.ctx.FloorTimerLagP50Ms = c.floorTimerP99, c.floorTimerP99/2
			}
			o := &Options{MaxScheduleLag: time.Millisecond, MaxWorkerCPU: 0.9}
			s.Verdict = verdict(s, o, vi)
			v := s.Verdict
			if v.Known != c.wantKnown || v.Kept != c.wantKept || v.Jitter != c.wantJitter {
				t.Fatalf("known %v kept %v jitter %v, want %v %v %v (reasons %q)", v.Known, v.Kept, v.Jitter, c.wantKnown, c.wantKept, c.wantJitter, v.Reasons)
			}
			if c.wantReasonPart != "" && !strings.Contains(strings.Join(v.Reasons, "; "), c.wantReasonPart) {
				t.Errorf("reasons %q lack %q", v.Reasons, c.wantReasonPart)
			}
			if c.wantReasonPart == "" && len(v.Reasons) > 0 {
				t.Errorf("unexpected reasons %q", v.Reasons)
			}
			line := VerdictLine(s)
			if c.wantLinePart != "" && !strings.Contains(line, c.wantLinePart) {
				t.Errorf("line %q lacks %q", line, c.wantLinePart)
			}
			if !c.wantKept && c.wantKnown && !strings.Contains(line, "describe the client") {
				t.Errorf("line %q: a shaped run must say it describes the client", line)
			}
			if c.wantKept && strings.Contains(line, "describe the client") {
				t.Errorf("line %q: a kept run must not say it describes the client", line)
			}
		})
	}
}

// The floor comes from run.json's workers[].calibration (the worst worker) and the gap from
// the plan's rate; the console line prints the floor beside the lag.
func TestVerdictFloorFromRunJSON(t *testing.T) {
	tmp := t.TempDir()
	dir := scenario{n: 20, workers: 2, ttft: 20 * ms, itl: 5 * ms, tokens: 4, rate: 40, streaming: true, cpuPct: 20}.build(t, tmp)
	m, err := rawlog.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	m.Workers[0].Calibration = &rawlog.Calibration{TimerLagP50Ns: 60_000, TimerLagP99Ns: 400_000, LoopbackRTTP50Ns: 18_000, SyscallNs: 250}
	m.Workers[1].Calibration = &rawlog.Calibration{TimerLagP50Ns: 70_000, TimerLagP99Ns: 760_000, LoopbackRTTP50Ns: 20_000, SyscallNs: 300}
	if err := rawlog.WriteManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	s, _ := analyseDir(t, Options{}, dir)
	v := s.Verdict
	if !v.FloorKnown || v.FloorTimerLagP99Ms != 0.76 || v.FloorTimerLagP50Ms != 0.07 || v.FloorLoopbackRTTUs != 20 || v.FloorSyscallUs != 0.3 {
		t.Fatalf("floor %+v", v.VerdictContext)
	}
	if v.MeanGapMs != 25 {
		t.Errorf("mean gap %v ms, want 25", v.MeanGapMs)
	}
	if line := VerdictLine(s); !strings.Contains(line, "machine floor: timer wake-up p50 0.07 ms p99 0.76 ms, loopback round trip 20.00 µs, syscall 0.30 µs") {
		t.Errorf("verdict line %q", line)
	}
}

// Workers replay pinned to one CPU together (more workers than CPUs, for the open-file
// limit) load that CPU with their sum: three at 40 % on CPU 0 saturate it although none is
// busy alone, so the client CPU check fires and names the CPU; the same workers on their own
// CPUs, or unpinned, do not add up; in another run, the same CPU number is another machine's.
func TestVerdictSharedCPU(t *testing.T) {
	ws := func(cpus ...int) []WorkerSummary {
		var out []WorkerSummary
		for i, c := range cpus {
			out = append(out, WorkerSummary{Worker: i, CPU: c, CPUPct: 40 + float64(i)})
		}
		return out
	}
	for _, c := range []struct {
		name     string
		workers  []WorkerSummary
		wantPct  float64
		wantBy   int
		wantKept bool
		reason   string
		line     string
	}{
		{"three on one CPU", ws(0, 0, 0, 1), 123, 3, false, "CPU of worker 2 (shared by 3 workers) at 123.00% CPU ≥ 90.00%", "NOT kept: CPU of worker 2 (shared by 3 workers) at 123.00% CPU"},
		{"one per CPU", ws(0, 1, 2), 42, 0, true, "", "kept: busiest worker 2 at 42.00% CPU"},
		{"unpinned", ws(-1, -1, -1), 42, 0, true, "", "kept: busiest worker 2 at 42.00% CPU"},
		{"two runs", append(ws(0), WorkerSummary{Run: 1, Worker: 0, CPU: 0, CPUPct: 40}), 40, 0, true, "", "kept: busiest worker 0 at 40.00% CPU"},
	} {
		s := &Summary{Workers: c.workers, Counts: Counts{Valid: 10}}
		s.Verdict = verdict(s, &Options{MaxScheduleLag: time.Millisecond, MaxWorkerCPU: 0.9}, verdictInputs{})
		v := s.Verdict
		if v.BusiestWorkerPct != c.wantPct || v.SharedBy != c.wantBy || v.Kept != c.wantKept {
			t.Errorf("%s: busiest %v%% shared by %d kept %v, want %v%% %d %v (reasons %q)", c.name, v.BusiestWorkerPct, v.SharedBy, v.Kept, c.wantPct, c.wantBy, c.wantKept, v.Reasons)
		}
		if got := strings.Join(v.Reasons, "; "); c.reason != "" && !strings.Contains(got, c.reason) || c.reason == "" && got != "" {
			t.Errorf("%s: reasons %q, want %q", c.name, got, c.reason)
		}
		if line := VerdictLine(s); !strings.Contains(line, c.line) {
			t.Errorf("%s: line %q lacks %q", c.name, line, c.line)
		}
	}
}

// From a run directory: run.json's workers[].cpu says which workers shared a CPU, and their
// CPU samples add up there (three workers near 40 % each on CPU 0); the same logs with each
// worker on its own CPU keep the run.
func TestVerdictSharedCPUFromRunJSON(t *testing.T) {
	for _, c := range []struct {
		name   string
		cpus   []int
		kept   bool
		by     int
		reason string
	}{
		{"own CPUs", []int{0, 1, 2}, true, 0, ""},
		{"one CPU", []int{0, 0, 0}, false, 3, "CPU of worker 2 (shared by 3 workers) at"},
		{"unpinned", []int{-1, -1, -1}, true, 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := scenario{n: 30, workers: 3, ttft: 20 * ms, itl: 5 * ms, tokens: 4, streaming: true, cpuPct: 40}.build(t, t.TempDir())
			m, err := rawlog.ReadManifest(dir)
			if err != nil {
				t.Fatal(err)
			}
			for i := range m.Workers {
				m.Workers[i].CPU = c.cpus[i]
			}
			if err := rawlog.WriteManifest(dir, m); err != nil {
				t.Fatal(err)
			}
			s, _ := analyseDir(t, Options{}, dir)
			v := s.Verdict
			if !v.CPUKnown || v.Kept != c.kept || v.SharedBy != c.by {
				t.Fatalf("cpu known %v kept %v shared by %d, want kept %v by %d (busiest %v%%, reasons %q)", v.CPUKnown, v.Kept, v.SharedBy, c.kept, c.by, v.BusiestWorkerPct, v.Reasons)
			}
			for i, w := range s.Workers {
				if w.CPU != c.cpus[i] {
					t.Errorf("worker %d CPU %d, want run.json's %d", w.Worker, w.CPU, c.cpus[i])
				}
			}
			if got := strings.Join(v.Reasons, "; "); !strings.Contains(got, c.reason) {
				t.Errorf("reasons %q lack %q", got, c.reason)
			}
		})
	}
}
