package profile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/analyze/judge"
	"github.com/llmbench/llmbench/export"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/sweep"
)

// outcome is what one fake run of a point gives: replay's exit status, and the summary's
// TTFT p95 (ms) and failed profile requests of 10.
type outcome struct {
	replay int
	ttft95 float64
	errors int64
}

// fakeStages stand for the plan, replay and analyze commands: Apply records the point,
// Compile writes a plan file, Replay makes the run directory, and Analyze returns the
// summary outcome gives for the point's concurrency and run number (from 1), writing the
// per-request records the pooled aggregate reads.
type fakeStages struct {
	t        *testing.T
	at       Stimulus
	compile  int // Compile's exit status
	outcome  func(concurrency, run int) outcome
	runs     map[int]int // runs made, by concurrency
	analysed []string    // the run directories analysed, in order
}

func (f *fakeStages) Apply(p Point) (Stimulus, error) {
	f.at = Stimulus{}
	for _, prm := range p {
		switch prm.Flag {
		case "concurrency":
			f.at.Concurrency = int(prm.Value)
		case "request-rate":
			f.at.Rate = prm.Value
		}
	}
	return f.at, nil
}

func (f *fakeStages) Compile(path string) int {
	if f.compile != 0 {
		return f.compile
	}
	// A one-request plan: the runner writes inputs.json from it.
	w, err := mmapds.Create(path)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := w.Add(mmapds.Record{SendOffsetNs: mmapds.NoSendOffset, DelayNs: -1, Phase: mmapds.PhaseProfile}, []byte(`{"model":"m"}`)); err != nil {
		f.t.Fatal(err)
	}
	if _, err := w.Close(&mmapds.Meta{Endpoint: "chat", Paths: []string{"/v1/chat/completions"}, Method: "POST"}); err != nil {
		f.t.Fatal(err)
	}
	return 0
}

func (f *fakeStages) current() outcome {
	return f.outcome(f.at.Concurrency, f.runs[f.at.Concurrency])
}

func (f *fakeStages) Replay(planPath, runDir string) int {
	if _, err := os.Stat(planPath); err != nil {
		f.t.Fatalf("replay before the plan was placed: %v", err)
	}
	if f.runs == nil {
		f.runs = map[int]int{}
	}
	f.runs[f.at.Concurrency]++
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		f.t.Fatal(err)
	}
	return f.current().replay
}

func (f *fakeStages) Analyze(planPath, runDir string) (*analyze.Summary, int) {
	f.analysed = append(f.analysed, runDir)
	o := f.current()
	s := fakeRun(f.t, o.ttft95, o.errors, 10)
	var lines []string
	for i := int64(0); i < 10; i++ {
		errJSON := "null"
		if i < o.errors {
			errJSON = `{"code":500}`
		}
		lines = append(lines, fmt.Sprintf(`{"metadata":{"benchmark_phase":"profiling"},"metrics":{"time_to_first_token":{"value":%g,"unit":"ms"}},"error":%s}`, o.ttft95, errJSON))
	}
	if err := os.WriteFile(filepath.Join(runDir, export.DefaultExportPrefix+export.SuffixRecords), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		f.t.Fatal(err)
	}
	code := 0
	if o.errors > 0 {
		code = 1
	}
	return s, code
}

// fakeRun is a complete run's summary: TTFT p95 ttft95 ms, requests/s 100/ttft95, errors
// of requests failed, the schedule kept.
func fakeRun(t *testing.T, ttft95 float64, errors, requests int64) *analyze.Summary {
	s := summaryWith(t, ttft95, errors, requests, true)
	rps, ok := analyze.LookupMetric("request_throughput")
	if !ok {
		t.Fatal("no request_throughput")
	}
	s.Results = append(s.Results, analyze.Result{MetricDef: rps, Value: 100 / ttft95})
	return s
}

// runFake runs o with stages f into a new directory and returns the exit status, the
// directory and the two streams.
func runFake(t *testing.T, f *fakeStages, so *SweepOptions, maxErrorRate float64) (int, string, string, string) {
	t.Helper()
	f.t = t
	dir, err := NewDir(filepath.Join(t.TempDir(), "artifacts", "m-openai-chat-x"))
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := Run(dir, Options{Sweep: so, MaxErrorRate: maxErrorRate, ExportPrefix: export.DefaultExportPrefix, Stages: f, Stdout: &out, Stderr: &errb})
	return code, dir, out.String(), errb.String()
}

func readDoc(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func point(c float64) Point { return Point{{Flag: "concurrency", Name: "concurrency", Value: c}} }

// TestRunRepeats: of three runs of a point, the one whose requests failed beyond the bound
// does not count: the aggregate is over the other two, the runs have their own
// directories, and the point fails, saying which run and why.
func TestRunRepeats(t *testing.T) {
	f := &fakeStages{outcome: func(_, run int) outcome {
		if run == 2 {
			return outcome{ttft95: 30, errors: 4}
		}
		return outcome{ttft95: 10 * float64(run)}
	}}
	code, dir, stdout, stderr := runFake(t, f, &SweepOptions{Points: []Point{nil}, Runs: 3, Level: 0.95}, 0)
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for i := 1; i <= 3; i++ {
		if _, err := os.Stat(filepath.Join(dir, "profile_runs", fmt.Sprintf("run_%04d", i))); err != nil {
			t.Error(err)
		}
	}
	var agg struct {
		Metadata struct {
			Runs       int      `json:"num_profile_runs"`
			Successful int      `json:"num_successful_runs"`
			Labels     []string `json:"run_labels"`
			Valid      bool
		}
		Metrics map[string]struct {
			Mean  float64
			Count int
		}
	}
	readDoc(t, filepath.Join(dir, "aggregate", "profile_export_aiperf_aggregate.json"), &agg)
	if md := agg.Metadata; md.Runs != 3 || md.Successful != 2 || strings.Join(md.Labels, ",") != "run_0001,run_0003" || md.Valid {
		t.Errorf("metadata %+v", md)
	}
	if m := agg.Metrics["time_to_first_token_p95"]; m.Count != 2 || m.Mean != 20 {
		t.Errorf("time_to_first_token_p95 %+v: want the mean of runs 1 and 3 (10, 30)", m)
	}
	var pooled struct {
		Metrics map[string]struct {
			Combined struct{ Count int }
		}
	}
	readDoc(t, filepath.Join(dir, "aggregate", "profile_export_aiperf_collated.json"), &pooled)
	if n := pooled.Metrics["time_to_first_token"].Combined.Count; n != 20 {
		t.Errorf("pooled over %d requests, want 20 (the two valid runs')", n)
	}
	for _, want := range []string{"profile: run 2 of 3 in ", "profile: INVALID RUN run_0002: 4 of 10 profile requests failed", "profile: 2 of 3 runs valid"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if !strings.Contains(stdout, "Confidence over 2 of 3 runs, the valid ones") {
		t.Errorf("stdout:\n%s", stdout)
	}
}

// TestRunInterrupted: an interrupted run ends the repeats; the command exits 130.
func TestRunInterrupted(t *testing.T) {
	f := &fakeStages{outcome: func(_, run int) outcome {
		if run == 2 {
			return outcome{replay: 130, ttft95: 10}
		}
		return outcome{ttft95: 10}
	}}
	code, _, _, stderr := runFake(t, f, &SweepOptions{Points: []Point{nil}, Runs: 5, Level: 0.95}, 0)
	if code != 130 || len(f.analysed) != 2 {
		t.Fatalf("exit %d after %d runs, want 130 after 2\n%s", code, len(f.analysed), stderr)
	}
}

// TestRunSweep: each point gets a directory named by its load; the point whose requests
// failed is invalid, never best, and fails the sweep.
func TestRunSweep(t *testing.T) {
	f := &fakeStages{outcome: func(c, _ int) outcome {
		if c == 4 {
			return outcome{ttft95: 5, errors: 10}
		}
		return outcome{ttft95: 10 * float64(c)}
	}}
	code, dir, stdout, stderr := runFake(t, f, &SweepOptions{Points: []Point{point(1), point(2), point(4)}, Runs: 1, Level: 0.95}, 0)
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var doc struct {
		Points []struct {
			Valid       bool
			ArtifactDir string `json:"artifact_dir"`
		} `json:"per_combination_metrics"`
		Best map[string]struct{ Parameters map[string]float64 } `json:"best_configurations"`
	}
	readDoc(t, filepath.Join(dir, "aggregate", "profile_export_aiperf_sweep.json"), &doc)
	if len(doc.Points) != 3 || !doc.Points[0].Valid || !doc.Points[1].Valid || doc.Points[2].Valid || doc.Points[2].ArtifactDir != "concurrency4" {
		t.Fatalf("points %+v", doc.Points)
	}
	if b := doc.Best["best_throughput"]; b.Parameters["concurrency"] != 1 {
		t.Errorf("best_throughput %+v: want concurrency 1 (the invalid point has the most)", b)
	}
	if !strings.Contains(stderr, "profile: sweep: 1 of 3 points invalid (concurrency=4)") || !strings.Contains(stdout, "invalid concurrency=4: run_0001: 10 of 10 profile requests failed") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
}

// TestRunSearch: TTFT grows with concurrency (10 ms a session); under a TTFT p95 SLA of
// 45 ms the search's boundary is 4, written to search_history.json and said on stdout.
func TestRunSearch(t *testing.T) {
	sla, _ := sweep.ParseSLA("time_to_first_token:p95:le:45")
	g, err := judge.ParseGate(sla.String())
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeStages{outcome: func(c, _ int) outcome { return outcome{ttft95: 10 * float64(c)} }}
	so := &SweepOptions{Points: []Point{nil}, Runs: 1, Level: 0.95, Search: SearchMaxConcurrency, Dimension: "concurrency",
		Bounds: sweep.SearchOptions{Min: 1, Max: 64, Integer: true, Precision: 0.05, MaxIterations: 30}, SLAs: []SLAGate{{SLA: sla, Gate: g}}, MaxErrorRate: -1}
	code, dir, stdout, stderr := runFake(t, f, so, 0)
	if code != 0 || !strings.Contains(stdout, "Search max-concurrency-under-sla: boundary concurrency=4 (passing 4, failing 5;") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var h struct {
		Boundary   *float64
		Iterations []struct {
			Outcome     string
			ArtifactDir string `json:"artifact_dir"`
		}
	}
	readDoc(t, filepath.Join(dir, "search_history.json"), &h)
	if h.Boundary == nil || *h.Boundary != 4 || len(h.Iterations) == 0 || h.Iterations[0].ArtifactDir != "search_iter_0000-concurrency1" {
		t.Fatalf("history %+v", h)
	}
}

// TestRunBadPlan: a plan the compiler refuses (bad input only it could see) exits 2 and
// leaves no artifact directory.
func TestRunBadPlan(t *testing.T) {
	f := &fakeStages{compile: 2, outcome: func(int, int) outcome { return outcome{ttft95: 1} }}
	code, dir, _, _ := runFake(t, f, &SweepOptions{Points: []Point{nil}, Runs: 1, Level: 0.95}, 0)
	if _, err := os.Stat(dir); code != 2 || !os.IsNotExist(err) {
		t.Fatalf("exit %d, directory %v: want 2 and no directory", code, err)
	}
}

// TestErrorBound: --error-rate-sla bounds a search's probes, the stricter of it and
// --max-error-rate when both are given; without it --max-error-rate holds.
func TestErrorBound(t *testing.T) {
	for _, c := range []struct {
		sla, max float64
		given    bool
		want     float64
	}{{-1, 0.2, true, 0.2}, {0.1, 0, false, 0.1}, {0.1, 0.05, true, 0.05}, {0.1, 0.3, true, 0.1}} {
		if got := ErrorBound(c.sla, c.max, c.given); got != c.want {
			t.Errorf("ErrorBound(%v, %v, %v) = %v, want %v", c.sla, c.max, c.given, got, c.want)
		}
	}
}
