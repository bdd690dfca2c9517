package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmbench/llmbench/mockllm"
	"github.com/llmbench/llmbench/replay"
	"github.com/llmbench/llmbench/replay/probe"
)

// TestMain makes the test binary act as replay's worker when started as one, so profile
// runs in-process against the misbehaving servers below.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == replay.WorkerArg {
		os.Exit(replay.WorkerMain(os.Stdin, os.Stdout))
	}
	// These tests judge the workflow, not whether this (often loaded) machine kept a schedule:
	// a schedule miss is accepted, and still said (docs/exit-codes.md).
	os.Setenv("LLMBENCH_ACCEPT_SCHEDULE_MISS", "1")
	os.Exit(m.Run())
}

// faultServer is mockllm (TTFT 5 ms, ITL 1 ms) behind a handler that answers the inference
// requests fail picks with HTTP 500; n counts them from 1 in arrival order, the preflight's
// left out (it is no request of the run). It returns the server's URL.
func faultServer(t *testing.T, fail func(n int64) bool) string {
	t.Helper()
	o := mockllm.DefaultOptions()
	o.TTFT, o.ITL = 5*time.Millisecond, time.Millisecond
	mock, err := mockllm.New(o)
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		preflight := strings.HasSuffix(r.UserAgent(), probe.PreflightUserAgentSuffix)
		if r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1/") && !preflight && fail(n.Add(1)) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte(`{"error":{"message":"injected failure","type":"server_error"}}`))
			return
		}
		mock.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { srv.Close(); mock.Close() })
	return srv.URL
}

// cutServer answers every request 200 with a stream of content events and closes it
// without the end marker, as a server that dies mid-answer does.
func cutServer(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Connection", "close")
		for i := 0; i < 3; i++ {
			w.Write([]byte(`data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"w"}}]}` + "\n\n"))
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// profileRun is one in-process profile command line's outcome.
type profileRun struct {
	code           int
	stdout, stderr string
	dir            string // the artifact folder (--artifact-dir)
}

// runProfile runs profile against url with a small streaming chat workload and verdict
// bounds wide enough that a loaded machine never turns a point invalid on its own.
func runProfile(t *testing.T, url string, args ...string) profileRun {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "artifacts")
	argv := append([]string{"profile", "--model", "m", "--tokenizer", "builtin", "--endpoint-type", "chat", "--streaming", "--url", url,
		"--synthetic-input-tokens-mean", "16", "--output-tokens-mean", "3", "--extra-inputs", "ignore_eos:true", "--ui-type", "none",
		"--max-schedule-lag", "10s", "--max-worker-cpu", "100000", "--workers", "1", "--no-pin", "--artifact-dir", dir}, args...)
	var out, errb bytes.Buffer
	code := run(argv, &out, &errb, func(string) string { return "" })
	return profileRun{code, out.String(), errb.String(), dir}
}

// readJSON decodes the one file matching pattern (a glob under dir) into v.
func readJSON(t *testing.T, dir, pattern string, v any) {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil || len(m) != 1 {
		t.Fatalf("%s in %s: %v %v", pattern, dir, m, err)
	}
	b, err := os.ReadFile(m[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", m[0], err)
	}
}

// sweepDoc is what these tests read of profile_export_aiperf_sweep.json.
type sweepDoc struct {
	Successful int `json:"num_successful_runs"`
	Failed     []struct {
		Label, Error string
	} `json:"failed_runs"`
	Points []struct {
		Parameters map[string]float64
		Valid      bool
		Reasons    []string `json:"invalid_reasons"`
		Pareto     bool     `json:"pareto_optimal"`
		Metrics    map[string]struct {
			Mean  float64
			Count int
		}
	} `json:"per_combination_metrics"`
	Best   map[string]struct{ Parameters map[string]float64 } `json:"best_configurations"`
	Pareto []map[string]float64                               `json:"pareto_optimal"`
}

// TestSweepFailedPoint: a sweep point whose every request failed is invalid, says why in
// one line, never empties the best configurations or the Pareto set of the flawless point
// beside it, and fails the sweep.
func TestSweepFailedPoint(t *testing.T) {
	// The first point's 8 requests succeed; every later request fails.
	url := faultServer(t, func(n int64) bool { return n > 8 })
	r := runProfile(t, url, "--concurrency", "1,2", "--request-count", "8")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (a point failed)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	var doc sweepDoc
	readJSON(t, r.dir, "*/aggregate/profile_export_aiperf_sweep.json", &doc)
	if len(doc.Points) != 2 || !doc.Points[0].Valid || doc.Points[1].Valid {
		var valid []bool
		for _, p := range doc.Points {
			valid = append(valid, p.Valid)
		}
		t.Fatalf("points valid %v: want concurrency 1 valid, 2 invalid", valid)
	}
	if why := strings.Join(doc.Points[1].Reasons, "; "); !strings.Contains(why, "8 of 8 profile requests failed (100.00%") {
		t.Errorf("invalid_reasons %q: want the failed requests", why)
	}
	for _, name := range []string{"best_throughput", "best_latency_p99", "best_output_token_throughput"} {
		if b, ok := doc.Best[name]; !ok || b.Parameters["concurrency"] != 1 {
			t.Errorf("%s = %+v, want concurrency 1 (the only valid point)", name, b)
		}
	}
	if len(doc.Pareto) != 1 || doc.Pareto[0]["concurrency"] != 1 || doc.Points[1].Pareto {
		t.Errorf("pareto %+v: want concurrency 1 only", doc.Pareto)
	}
	if doc.Successful != 1 || len(doc.Failed) != 1 || !strings.Contains(doc.Failed[0].Error, "profile requests failed") {
		t.Errorf("successful %d, failed_runs %+v", doc.Successful, doc.Failed)
	}
	if !strings.Contains(r.stdout, "invalid concurrency=2: run_0001: 8 of 8 profile requests failed") ||
		!strings.Contains(r.stderr, "profile: sweep: 1 of 2 points invalid (concurrency=2)") {
		t.Errorf("the console does not say which point failed and why:\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
}

// TestRepeatsFailedRuns: of three runs, two with 85% and 100% failed requests do not count:
// the aggregate is over the one valid run, says so in every metric and on the console, and
// the command fails.
func TestRepeatsFailedRuns(t *testing.T) {
	// Run 1: requests 1-20 succeed; run 2: 3 of 20 succeed; run 3: none.
	url := faultServer(t, func(n int64) bool { return n > 23 })
	r := runProfile(t, url, "--concurrency", "2", "--request-count", "20", "--num-profile-runs", "3")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	var agg struct {
		Metadata struct {
			Runs       int      `json:"num_profile_runs"`
			Successful int      `json:"num_successful_runs"`
			Labels     []string `json:"run_labels"`
			Valid      bool
			Failed     []struct{ Label, Error string } `json:"failed_runs"`
		}
		Metrics map[string]struct {
			Mean  float64
			Count int
		}
	}
	readJSON(t, r.dir, "*/aggregate/profile_export_aiperf_aggregate.json", &agg)
	md := agg.Metadata
	if md.Runs != 3 || md.Successful != 1 || len(md.Labels) != 1 || md.Labels[0] != "run_0001" || md.Valid || len(md.Failed) != 2 {
		t.Fatalf("metadata %+v: want 1 successful run of 3 (run_0001), invalid", md)
	}
	if !strings.Contains(md.Failed[0].Error, "17 of 20 profile requests failed (85.00%") || !strings.Contains(md.Failed[1].Error, "20 of 20 profile requests failed (100.00%") {
		t.Errorf("failed_runs %+v", md.Failed)
	}
	if len(agg.Metrics) == 0 {
		t.Fatal("no metrics")
	}
	for k, m := range agg.Metrics {
		if m.Count != 1 {
			t.Errorf("%s over %d runs, want 1 (the valid run only)", k, m.Count)
		}
	}
	if m := agg.Metrics["request_count_avg"]; m.Mean != 20 {
		t.Errorf("request_count_avg %v, want 20 (run 1's)", m.Mean)
	}
	for _, want := range []string{"profile: INVALID RUN run_0002: 17 of 20 profile requests failed", "profile: INVALID RUN run_0003: 20 of 20", "1 of 3 runs valid"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if !strings.Contains(r.stdout, "Confidence over 1 of 3 runs") {
		t.Errorf("stdout does not say the aggregate is over 1 of 3 runs:\n%s", r.stdout)
	}
}

// TestSearchErrors: against a server that fails every second request (or every request, or
// cuts every stream), no probe of any search mode passes: each says why, the search says
// no probe passed and exits 1. With a bound that allows the failures, the search finds its
// boundary again.
func TestSearchErrors(t *testing.T) {
	everySecond := func(n int64) bool { return n%2 == 0 }
	all := func(int64) bool { return true }
	cases := []struct {
		name   string
		url    func(t *testing.T) string
		args   []string
		code   int
		stdout string
	}{
		{"concurrency, every second request fails", func(t *testing.T) string { return faultServer(t, everySecond) },
			[]string{"--search", "max-concurrency-under-sla", "--ttft-sla-ms", "100"}, 1, "no probe passed"},
		{"rate, every request fails", func(t *testing.T) string { return faultServer(t, all) },
			[]string{"--search", "max-rate-under-sla", "--e2e-sla-ms", "1000", "--search-min", "50", "--search-max", "200"}, 1, "no probe passed"},
		{"goodput, every second request fails", func(t *testing.T) string { return faultServer(t, everySecond) },
			[]string{"--search", "max-goodput", "--goodput", "time_to_first_token:100"}, 1, "no probe passed"},
		{"concurrency, streams cut", cutServer,
			[]string{"--search", "max-concurrency-under-sla", "--ttft-sla-ms", "100"}, 1, "no probe passed"},
		{"the bound allows the failures", func(t *testing.T) string { return faultServer(t, everySecond) },
			[]string{"--search", "max-concurrency-under-sla", "--ttft-sla-ms", "1000", "--max-error-rate", "0.6"}, 0, "boundary concurrency=4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runProfile(t, c.url(t), append([]string{"--request-count", "8", "--search-max", "4"}, c.args...)...)
			if r.code != c.code || !strings.Contains(r.stdout, c.stdout) {
				t.Fatalf("exit %d (want %d), stdout lacks %q?\nstdout:\n%s\nstderr:\n%s", r.code, c.code, c.stdout, r.stdout, r.stderr)
			}
			var h struct {
				Iterations []struct {
					Outcome  string
					Reason   string
					Feasible bool
				}
				Boundary *float64
			}
			readJSON(t, r.dir, "*/search_history.json", &h)
			for i, it := range h.Iterations {
				if c.code == 1 && (it.Feasible || it.Outcome != "fail" || !strings.Contains(it.Reason, "profile requests failed")) {
					t.Errorf("probe %d: %+v: want a fail naming the failed requests", i, it)
				}
			}
			if (h.Boundary == nil) != (c.code == 1) {
				t.Errorf("boundary %v", h.Boundary)
			}
		})
	}
}
