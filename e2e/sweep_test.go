package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProfileSweepRepeatSearch drives profile's multi-run modes against a mockllm that
// serves two requests at once (--max-batch 2), so a third request waits a whole request
// (TTFT 80 ms + 2 tokens) before its own first token: a concurrency sweep sees TTFT rise past
// 2, repeats converge and report intervals, and the SLA search finds the boundary 2. The
// verdict bounds are wide so that a loaded machine cannot turn a point invalid; the search's
// client-limited stop is covered by the sweep and profile packages' unit tests.
func TestProfileSweepRepeatSearch(t *testing.T) {
	mock := startMock(t, "--ttft", "80ms", "--itl", "1ms", "--max-batch", "2")
	work := t.TempDir()
	common := []string{"--model", "m", "--tokenizer", "builtin", "--endpoint-type", "chat", "--streaming", "--url", mock.URL,
		"--synthetic-input-tokens-mean", "16", "--output-tokens-mean", "2", "--extra-inputs", "ignore_eos:true", "--ui-type", "none",
		"--max-schedule-lag", "10s", "--max-worker-cpu", "100000"}
	profile := func(t *testing.T, args ...string) result {
		t.Helper()
		r := command(t, bin.profile, append(append([]string{"--artifact-dir", filepath.Join(work, t.Name())}, common...), args...)...)
		if r.code != 0 {
			t.Fatalf("profile %q: exit %d\nstderr:\n%s", args, r.code, r.stderr)
		}
		return r
	}
	read := func(t *testing.T, path string, v any) {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	type conf struct {
		Mean      float64
		CILow     float64  `json:"ci_low"`
		CIHigh    float64  `json:"ci_high"`
		TCritical *float64 `json:"t_critical"`
	}

	t.Run("sweep", func(t *testing.T) {
		r := profile(t, "--concurrency", "1,4", "--request-count", "8")
		dir := filepath.Join(work, t.Name(), "m-openai-chat-concurrency_sweep")
		var doc struct {
			NumRuns    int `json:"num_profile_runs"`
			Successful int `json:"num_successful_runs"`
			Metadata   struct {
				Params []struct {
					Name   string
					Values []float64
				} `json:"sweep_parameters"`
			}
			Points []struct {
				Parameters  map[string]float64
				Metrics     map[string]conf
				Valid       bool
				ArtifactDir string `json:"artifact_dir"`
			} `json:"per_combination_metrics"`
			Best   map[string]struct{ Parameters map[string]float64 } `json:"best_configurations"`
			Pareto []map[string]float64                               `json:"pareto_optimal"`
		}
		read(t, filepath.Join(dir, "aggregate", "profile_export_aiperf_sweep.json"), &doc)
		if doc.NumRuns != 2 || doc.Successful != 2 || len(doc.Points) != 2 || len(doc.Metadata.Params) != 1 ||
			doc.Metadata.Params[0].Name != "concurrency" || len(doc.Metadata.Params[0].Values) != 2 {
			t.Fatalf("sweep aggregate: %+v", doc)
		}
		for i, c := range []float64{1, 4} {
			p := doc.Points[i]
			if p.Parameters["concurrency"] != c || !p.Valid || p.ArtifactDir != "concurrency"+map[float64]string{1: "1", 4: "4"}[c] {
				t.Errorf("point %d: %+v", i, p.Parameters)
			}
			if n := len(readRecords(t, filepath.Join(dir, p.ArtifactDir))); n != 8 {
				t.Errorf("point %v: %d records, want 8", c, n)
			}
		}
		// Two slots: at concurrency 4 half the requests wait a whole request for a slot.
		if lo, hi := doc.Points[0].Metrics["time_to_first_token_p99"].Mean, doc.Points[1].Metrics["time_to_first_token_p99"].Mean; !(hi > lo) {
			t.Errorf("TTFT p99: concurrency 1 %v ms, concurrency 4 %v ms; want it to rise once requests queue", lo, hi)
		}
		// Every point's plan comes from the same seed and dataset: the same prompts.
		var bodies [2]string
		for i, d := range []string{"concurrency1", "concurrency4"} {
			in := command(t, bin.plan, "inspect", "--json", "--requests", "8", filepath.Join(dir, d, "plan.llmplan"))
			var pl struct {
				Requests []struct{ Body json.RawMessage }
			}
			if err := json.Unmarshal([]byte(in.stdout), &pl); err != nil || len(pl.Requests) != 8 {
				t.Fatalf("plan inspect %s: %v (%d requests)", d, err, len(pl.Requests))
			}
			for _, r := range pl.Requests {
				bodies[i] += string(r.Body) + "\n"
			}
		}
		if bodies[0] != bodies[1] {
			t.Errorf("the points sent different prompts:\n%s\n%s", bodies[0], bodies[1])
		}
		if _, err := os.Stat(filepath.Join(dir, "aggregate", "sweep.html")); err != nil {
			t.Errorf("no sweep page: %v", err)
		}
		if _, ok := doc.Best["best_throughput"]; !ok || len(doc.Pareto) == 0 {
			t.Errorf("best %+v, pareto %+v", doc.Best, doc.Pareto)
		}
		if _, err := os.Stat(filepath.Join(dir, "aggregate", "profile_export_aiperf_sweep.csv")); err != nil {
			t.Error(err)
		}
		if !strings.Contains(r.stdout, "Sweep: 2 points") || !strings.Contains(r.stdout, "concurrency=4") {
			t.Errorf("stdout lacks the sweep table:\n%s", r.stdout)
		}
	})

	t.Run("repeats", func(t *testing.T) {
		// request_count is 4 in every run: its CV is 0, so the repeats stop after min(3, 5).
		profile(t, "--concurrency", "2", "--request-count", "4", "--num-profile-runs", "5",
			"--convergence-metric", "request_count", "--convergence-mode", "cv", "--convergence-threshold", "0.01")
		dir := filepath.Join(work, t.Name(), "m-openai-chat-concurrency2")
		var agg struct {
			Metadata struct {
				Runs       int    `json:"num_profile_runs"`
				Successful int    `json:"num_successful_runs"`
				Converged  string `json:"converged"`
			}
			Metrics map[string]conf
		}
		read(t, filepath.Join(dir, "aggregate", "profile_export_aiperf_aggregate.json"), &agg)
		ttft := agg.Metrics["time_to_first_token_avg"]
		if agg.Metadata.Runs != 3 || agg.Metadata.Successful != 3 || !strings.Contains(agg.Metadata.Converged, "converged after 3 of 5 runs") {
			t.Errorf("metadata %+v", agg.Metadata)
		}
		if ttft.TCritical == nil || *ttft.TCritical < 4.3026 || *ttft.TCritical > 4.3027 || !(ttft.CILow <= ttft.Mean && ttft.Mean <= ttft.CIHigh) {
			t.Errorf("time_to_first_token_avg %+v: want t(0.975, 2) = 4.30265 and the mean inside the interval", ttft)
		}
		for i := 1; i <= 3; i++ {
			if _, err := os.Stat(filepath.Join(dir, "profile_runs", "run_000"+string(rune('0'+i)), "profile_export_aiperf.json")); err != nil {
				t.Error(err)
			}
		}
		var pooled struct {
			Metrics map[string]struct {
				Combined struct{ Count int }
				PerRun   []struct{ Count int } `json:"per_run"`
			}
		}
		read(t, filepath.Join(dir, "aggregate", "profile_export_aiperf_collated.json"), &pooled)
		if m := pooled.Metrics["time_to_first_token"]; m.Combined.Count != 12 || len(m.PerRun) != 3 {
			t.Errorf("pooled TTFT: %+v, want 12 requests over 3 runs", m)
		}
	})

	t.Run("search", func(t *testing.T) {
		// A mock of its own with a longer TTFT: TTFT p95 is about 200 ms up to concurrency 2 and
		// about 400 ms beyond, so the 300 ms SLA leaves 100 ms of margin either side (a loaded
		// machine was seen to add 48 ms to an 80 ms TTFT).
		slow := startMock(t, "--ttft", "200ms", "--itl", "1ms", "--max-batch", "2")
		args := append([]string{"--artifact-dir", filepath.Join(work, t.Name())}, common...)
		for i := range args {
			if args[i] == mock.URL {
				args[i] = slow.URL
			}
		}
		r := command(t, bin.profile, append(args, "--search", "max-concurrency-under-sla", "--ttft-sla-ms", "300", "--search-max", "16")...)
		if r.code != 0 {
			t.Fatalf("profile search: exit %d\nstderr:\n%s", r.code, r.stderr)
		}
		var h struct {
			Iterations []struct {
				Values   map[string]float64 `json:"variation_values"`
				Feasible bool
			}
			Reason   string   `json:"convergence_reason"`
			Boundary *float64 `json:"boundary"`
		}
		read(t, filepath.Join(work, t.Name(), "m-openai-chat-max_concurrency_under_sla", "search_history.json"), &h)
		var probed []float64
		for _, it := range h.Iterations {
			probed = append(probed, it.Values["concurrency"])
		}
		if h.Boundary == nil || *h.Boundary != 2 || h.Reason != "monotonic_precision_reached" || len(probed) != 4 {
			t.Fatalf("boundary %v, reason %q, probes %v; want 2 after probing 1, 2, 4, 3\nstdout:\n%s", h.Boundary, h.Reason, probed, r.stdout)
		}
		if !strings.Contains(r.stdout, "Search max-concurrency-under-sla: boundary concurrency=2 (passing 2, failing 3;") {
			t.Errorf("stdout lacks the answer:\n%s", r.stdout)
		}
	})
}

// TestCompareMisbehavingCandidate: one plan replayed against a healthy mockllm and against
// servers that fail every request (HTTP 500), cut every stream after an error event, or
// drop every connection mid-stream: analyze compare --fail-on-regression exits 1 for each
// candidate, saying in one line that it failed and why, and never prints "Differences"
// with nothing under it; two healthy runs pass (the threshold is far beyond what a loaded
// machine moves TTFT by: the failures alone must fail the comparison).
func TestCompareMisbehavingCandidate(t *testing.T) {
	work := t.TempDir()
	plan := filepath.Join(work, "p.llmplan")
	if r := command(t, bin.plan, "--model", "m", "--tokenizer", "builtin", "--endpoint-type", "chat", "--streaming",
		"--synthetic-input-tokens-mean", "16", "--output-tokens-mean", "4", "--extra-inputs", "ignore_eos:true",
		"--concurrency", "2", "--request-count", "12", "-o", plan); r.code != 0 {
		t.Fatalf("plan: %d %s", r.code, r.stderr)
	}
	// replayTo replays the plan against a mockllm with mockArgs; a run in which every request
	// failed at the HTTP level is one replay itself calls failed (exit 1, its last line saying
	// so); an error event inside a 200 stream is the analysis's to find (replay exit 0).
	replayTo := func(name string, want int, mockArgs ...string) string {
		mock := startMock(t, append([]string{"--ttft", "5ms", "--itl", "1ms"}, mockArgs...)...)
		dir := filepath.Join(work, name)
		r := command(t, bin.replay, "--plan", plan, "--url", mock.URL, "--output-dir", dir, "--workers", "1", "--no-pin")
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if r.code != want || (want == 1 && !strings.HasPrefix(lines[len(lines)-1], "replay: FAILED: every request sent failed")) {
			t.Fatalf("replay %s: exit %d (want %d) %s", name, r.code, want, r.stderr)
		}
		return dir
	}
	base, again := replayTo("base", 0), replayTo("again", 0)
	for _, c := range []struct {
		name, dir string
		code      int
		why       string
	}{
		{"healthy", again, 0, ""},
		{"every request 500", replayTo("all-500", 1, "--error-rate", "1"), 1, "run all-500 (candidate) failed: 12 of 12 profile requests failed (100.00%"},
		{"stream errors", replayTo("stream-error", 0, "--stream-error-rate", "1"), 1, "run stream-error (candidate) failed: 12 of 12 profile requests failed"},
		{"dropped connections", replayTo("disconnect", 1, "--disconnect-rate", "1"), 1, "run disconnect (candidate) failed: 12 of 12 profile requests failed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := command(t, bin.analyze, "compare", "--fail-on-regression", "time_to_first_token:500", "--no-html",
				"--output-dir", filepath.Join(work, "cmp-"+filepath.Base(c.dir)), base, c.dir)
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if r.code != c.code || (c.code == 1 && (len(lines) != 1 || !strings.Contains(lines[0], "REGRESSION: "+c.why))) {
				t.Fatalf("exit %d (want %d), stderr:\n%s\nwant one line ~ %q\nstdout:\n%s", r.code, c.code, r.stderr, c.why, r.stdout)
			}
			i := strings.Index(r.stdout, "Differences against")
			if i < 0 || !strings.HasPrefix(strings.SplitN(r.stdout[i:], "\n", 3)[1], "  ") {
				t.Errorf("\"Differences\" without a line under it:\n%s", r.stdout)
			}
		})
	}
}
