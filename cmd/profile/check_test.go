package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/llmbench/llmbench/mmapds"
)

// countingServer is a loopback server that counts every request it gets (inference,
// readiness probes, /metrics scrapes) and answers none usefully.
func countingServer(t *testing.T) (string, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n.Add(1)
		http.Error(w, "counted", http.StatusTeapot)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &n
}

// writeSharedPlan writes a one-request plan that does not stream, for --plan.
func writeSharedPlan(t *testing.T, path string) {
	w, err := mmapds.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(mmapds.Record{SendOffsetNs: mmapds.NoSendOffset, DelayNs: -1, Phase: mmapds.PhaseProfile}, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Close(&mmapds.Meta{Endpoint: "chat", Model: "m", Paths: []string{"/v1/chat/completions"}, Method: "POST", TimingMode: "concurrency", Concurrency: 1}); err != nil {
		t.Fatal(err)
	}
}

// TestBadFlagsSendNothing (issue 24 defects 5, 9, 10, 12): a bad flag of any stage (plan,
// replay, analyze, sweep, repeat, search), at any sweep point, is refused before the
// first request: exit 2, one line naming the flag, no artifact directory, and the server
// never hears of it. Before the fix the analyze flags were refused only after each point's
// full run, the plan's sizes and instants at compile time inside the artifact directory,
// and a TTFT SLA on a non-streaming plan not at all.
func TestBadFlagsSendNothing(t *testing.T) {
	url, hits := countingServer(t)
	shared := filepath.Join(t.TempDir(), "shared.llmplan")
	writeSharedPlan(t, shared)
	missing := filepath.Join(t.TempDir(), "missing")
	base := []string{"--model", "m", "--url", url, "--request-count", "2", "--ui-type", "none"}
	cases := []struct {
		name string
		args []string
		want string
	}{
		// analyze, under profile
		{"gate typo", []string{"--gate", "time_to_frist_token.p99<400", "--streaming"}, `--gate "time_to_frist_token.p99<400": unknown metric "time_to_frist_token" (did you mean time_to_first_token?`},
		{"gate nan", []string{"--gate", "request_latency.p99<nan"}, `"nan" is not a finite number`},
		{"gate inf", []string{"--gate", "request_latency.p99<inf"}, `"inf" is not a finite number`},
		{"gate stat typo", []string{"--gate", "request_latency.p999.9<4"}, `unknown statistic "p999.9"`},
		{"server gate typo", []string{"--gate", "server.generation_tokns.rate>1"}, "did you mean server.generation_tokens?"},
		{"max error rate 2", []string{"--max-error-rate", "2"}, "--max-error-rate 2: want a fraction between 0 and 1"},
		{"max error rate nan", []string{"--max-error-rate", "nan"}, "--max-error-rate NaN"},
		{"max schedule lag", []string{"--max-schedule-lag", "-1ms"}, "--max-schedule-lag -1ms: must be positive"},
		{"max worker cpu nan", []string{"--max-worker-cpu", "nan"}, "--max-worker-cpu NaN"},
		{"max worker cpu inf", []string{"--max-worker-cpu", "inf"}, "--max-worker-cpu +Inf"},
		{"goodput nan", []string{"--goodput", "request_latency:nan"}, `--goodput: "request_latency:nan": threshold "nan" is not a positive finite number`},
		{"goodput negative", []string{"--goodput", "request_latency:-5"}, `threshold "-5" is not a positive finite number`},
		{"goodput typo", []string{"--goodput", "request_latncy:5"}, "did you mean request_latency?"},
		{"export level", []string{"--export-level", "all"}, `--export-level "all"`},
		{"export prefix", []string{"--profile-export-prefix", "a/b"}, "--profile-export-prefix"},
		{"parallelism", []string{"--parallelism", "-1"}, "--parallelism -1"},
		{"slice duration nan", []string{"--slice-duration", "nan"}, `invalid argument "nan" for "--slice-duration"`},
		{"slice duration huge", []string{"--slice-duration", "1e300"}, `"--slice-duration" flag: want a positive duration of at most 365 days`},
		{"html and no-html", []string{"--html", "r.html", "--no-html"}, "--html r.html and --no-html contradict each other"},
		{"html directory", []string{"--html", missing + "/r.html"}, "--html " + missing + "/r.html: its directory " + missing + " does not exist"},
		{"gates file", []string{"--gates", missing}, "--gates: open " + missing},
		{"validate shape reference", []string{"--validate-shape", missing}, "--validate-shape " + missing},
		{"generator validation file", []string{"--generator-validation", missing}, "--generator-validation: "},
		// metrics a run without --streaming cannot give
		{"ttft gate without streaming", []string{"--gate", "time_to_first_token.p99<400"}, `--gate "time_to_first_token.p99<400": the plan does not stream`},
		{"itl goodput without streaming", []string{"--goodput", "inter_token_latency:20"}, "--goodput inter_token_latency:20: the plan does not stream"},
		{"ttft sla without streaming", []string{"--search", "max-concurrency-under-sla", "--ttft-sla-ms", "100"}, "SLA time_to_first_token.p95<=100: the plan does not stream"},
		{"convergence without streaming", []string{"--num-profile-runs", "3", "--convergence-metric", "time_to_first_token"}, "--convergence-metric time_to_first_token: the plan does not stream"},
		{"shared plan without streaming", []string{"--plan", shared, "--gate", "time_to_first_token.p50<4"}, `the plan does not stream`},
		// sweeps, repeats and searches: every point is checked before the first runs
		{"repeats with a bad gate", []string{"--num-profile-runs", "3", "--gate", "request_latncy.p99<1"}, `unknown metric "request_latncy"`},
		{"sweep with a bad gate", []string{"--concurrency", "1,2", "--max-error-rate", "-0.5"}, "--max-error-rate -0.5"},
		{"sweep point out of range", []string{"--concurrency", "1,2,2000000"}, "sweep point concurrency=2000000: --concurrency 2000000: want sessions in [0, 1048576]"},
		{"sweep rate spans centuries", []string{"--request-rate", "1,1e-9"}, "sweep point request_rate=0.000000001: --request-rate 1e-09 for 2 requests: the schedule would span 63 years"},
		{"search range too slow", []string{"--search", "max-rate-under-sla", "--e2e-sla-ms", "100", "--search-min", "1e-9"}, "search probe request-rate=0.000000001 (--search-min)"},
		{"search range too large", []string{"--search", "max-concurrency-under-sla", "--e2e-sla-ms", "100", "--search-max", "4000000"}, "search probe concurrency=4000000 (--search-max): --concurrency 4000000"},
		{"cooldown huge", []string{"--num-profile-runs", "2", "--profile-run-cooldown-seconds", "1e300"}, "--profile-run-cooldown-seconds 1e+300: want seconds in [0, 31536000]"},
		// replay
		{"request timeout huge", []string{"--request-timeout-seconds", "1e300"}, "--request-timeout-seconds 1e+300: want seconds in (0, 31536000]"},
		{"request timeout nan", []string{"--request-timeout-seconds", "nan"}, "--request-timeout-seconds NaN"},
		{"grace nan", []string{"--benchmark-grace-period", "nan"}, "--benchmark-grace-period NaN"},
		{"wait timeout inf", []string{"--wait-for-model-timeout", "inf"}, "--wait-for-model-timeout +Inf"},
		{"workers", []string{"--workers", "100000"}, "workers 100000: each worker needs its own CPU"},
		{"url scheme", []string{"--url", "ftp://x"}, `url "ftp://x": scheme must be http or https`},
		{"header", []string{"-H", "no colon"}, "header"},
		{"spin", []string{"--spin", "1s"}, "spin 1s: must be between 0 and 10ms"},
		{"max response bytes", []string{"--max-response-bytes", "0"}, "--max-response-bytes 0"},
		{"validation duration", []string{"--validate-generator", "--validate-duration", "0s"}, "--validate-duration 0s: must be positive"},
		// plan sizes and instants
		{"dataset entries", []string{"--num-dataset-entries", "100000000"}, "--num-dataset-entries 100000000: want conversations in [0, 1048576]"},
		{"turn delay", []string{"--conversation-turn-mean", "2", "--conversation-turn-delay-mean", "1e13"}, "--conversation-turn-delay-mean 10000000000000"},
		{"request rate 1e-10", []string{"--request-rate", "1e-10"}, "--request-rate 1e-10 for 2 requests: the schedule would span 634 years"},
		{"plan size", []string{"--shared-system-prompt-length", "16000000", "--num-dataset-entries", "1000", "--request-count", "1000"}, "more than --max-plan-bytes"},
		{"images", []string{"--image-width-mean", "16384", "--image-height-mean", "16384", "--image-batch-size", "64"}, "of them media"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			args := append(append([]string{"profile"}, base...), c.args...)
			if strings.Contains(strings.Join(c.args, " "), "--plan ") {
				args = append([]string{"profile", "--url", url, "--ui-type", "none"}, c.args...)
			}
			var out, errb bytes.Buffer
			code := run(args, &out, &errb, func(string) string { return "" })
			line := errb.String()
			t.Log(strings.TrimSpace(line))
			if code != 2 || strings.Count(line, "\n") != 1 || !strings.Contains(line, c.want) || !strings.HasPrefix(line, "profile: ") {
				t.Fatalf("exit %d, stderr %q; want exit 2 and one line containing %q", code, line, c.want)
			}
			if _, err := os.Stat("artifacts"); err == nil {
				t.Error("bad input left an artifact directory")
			}
			if n := hits.Load(); n != 0 {
				t.Fatalf("the server got %d requests", n)
			}
		})
	}
}
