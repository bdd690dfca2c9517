package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// preflightFinding is what a test reads of run.json's preflight.
type preflightFinding struct {
	Targets []struct {
		Connection    string `json:"connection"`
		LimitHonoured *bool  `json:"limit_honoured"`
		Server        string `json:"server"`
	} `json:"targets"`
}

// TestLlamaCppQuirks runs profile, as an AIPerf user would, against mockllm playing
// llama.cpp's llama-server (b7588), one quirk flag at a time and all three together:
//
//   - --ignore-max-completion-tokens: with the default body the run says to compile with
//     --use-legacy-max-tokens (the preflight and the analysis note; it used to advise
//     ignore_eos/min_tokens, which cannot help); with that flag every output has exactly the
//     requested length and nothing is said.
//   - --close-after-response (keep-alive announced, the connection closed after every
//     response): the schedule is kept and the closes are named as the server's, with the
//     preflight's finding (no reconnect at all) and without it (the workers learn it: at most
//     one reconnect per slot, each visible in the per-request export); it used to write every
//     request on a dead connection and pay the reconnect in its dispatch lag, unrecorded.
//   - --no-metrics (/metrics 501 with a hint): the server's own message is shown once (it
//     used to be a bare "HTTP 501").
func TestLlamaCppQuirks(t *testing.T) {
	const (
		limitNamed = "and honours max_tokens: compile the plan with --use-legacy-max-tokens"
		closes     = "closes the connection after each response although it announces keep-alive"
		metrics501 = `/metrics: HTTP 501: "mockllm: this server does not serve metrics (started with --no-metrics); start it without --no-metrics"`
		noteLimit  = "30 of 30 requests (100.00%) produced more output tokens than requested (osl_mismatch_count), and the bodies set max_completion_tokens"
		noteFlag   = "compile the plan with --use-legacy-max-tokens"
		closedAll  = "the server closed the connection after each response: 0 reconnects, 30 of 30 requests on a new connection for it"
		closedAny  = "the server closed the connection after each response"
		kept       = "Verdict: schedule kept"
	)
	type run struct {
		name  string
		flags []string
		// stderr is said exactly once each; stdout holds each of stdout; neither holds any
		// of never (both streams).
		stderr, stdout, never []string
		// osl, when > 0, is every request's output length; maxReconnects bounds their sum.
		osl, maxReconnects int
		// conn and limitHonoured are the preflight's findings ("" / nil: no preflight ran).
		conn          string
		limitHonoured *bool
	}
	yes, no := true, false
	for _, c := range []struct {
		name  string
		quirk []string
		runs  []run
	}{
		{"ignore-max-completion-tokens", []string{"--ignore-max-completion-tokens"}, []run{
			{name: "default body", stderr: []string{limitNamed}, stdout: []string{noteLimit, noteFlag, kept},
				never: []string{"set ignore_eos/min_tokens", closedAny}, conn: "keep-alive", limitHonoured: &no},
			{name: "legacy", flags: []string{"--use-legacy-max-tokens"}, stdout: []string{kept}, osl: 8,
				never: []string{"--use-legacy-max-tokens", "osl_mismatch_count", closedAny}, conn: "keep-alive", limitHonoured: &yes},
		}},
		{"close-after-response", []string{"--close-after-response"}, []run{
			{name: "preflight", stderr: []string{closes}, stdout: []string{kept, closedAll}, osl: 8,
				never: []string{"--use-legacy-max-tokens"}, conn: "closes-after-response", limitHonoured: &yes},
			{name: "no preflight", flags: []string{"--no-preflight"}, stdout: []string{kept, closedAny}, osl: 8, maxReconnects: 2,
				never: []string{"replay: preflight"}},
		}},
		{"no-metrics", []string{"--no-metrics"}, []run{
			{name: "default", stderr: []string{metrics501}, stdout: []string{kept, metrics501}, osl: 8,
				never: []string{closedAny, "--use-legacy-max-tokens"}, conn: "keep-alive", limitHonoured: &yes},
		}},
		{"all three", []string{"--ignore-max-completion-tokens", "--close-after-response", "--no-metrics"}, []run{
			{name: "default body", stderr: []string{limitNamed, closes, metrics501}, stdout: []string{noteLimit, noteFlag, kept, closedAll},
				never: []string{"set ignore_eos/min_tokens"}, conn: "closes-after-response", limitHonoured: &no},
			{name: "legacy, no preflight", flags: []string{"--no-preflight", "--use-legacy-max-tokens"}, stdout: []string{kept, closedAny}, osl: 8, maxReconnects: 2,
				never: []string{"replay: preflight", "osl_mismatch_count"}},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			mock := startMock(t, append([]string{"--ttft", "5ms", "--itl", "1ms", "--natural-tokens", "60"}, c.quirk...)...)
			for _, rc := range c.runs {
				t.Run(rc.name, func(t *testing.T) {
					dir := filepath.Join(t.TempDir(), "run")
					args := append([]string{"--model", "mock-llm", "--tokenizer", "builtin", "--endpoint-type", "chat", "--streaming",
						"--url", mock.URL, "--concurrency", "2", "--request-count", "30", "--synthetic-input-tokens-mean", "20",
						"--output-tokens-mean", "8", "--output-dir", dir, "--no-pin", "--no-gpu-telemetry", "--ui-type", "none", "--no-html",
						"--max-schedule-lag", "50ms"}, rc.flags...)
					r := command(t, bin.profile, args...)
					if r.code != 0 {
						t.Fatalf("profile: exit %d\n%s", r.code, r.stderr)
					}
					checkQuirkRun(t, rc.stderr, rc.stdout, rc.never, r)
					var m struct {
						Preflight *preflightFinding `json:"preflight"`
					}
					b, err := os.ReadFile(filepath.Join(dir, "run.json"))
					if err != nil {
						t.Fatal(err)
					}
					if err := json.Unmarshal(b, &m); err != nil {
						t.Fatal(err)
					}
					switch pf := m.Preflight; {
					case rc.conn == "" && pf != nil:
						t.Errorf("run.json has a preflight although none ran: %+v", *pf)
					case rc.conn != "" && (pf == nil || len(pf.Targets) != 1):
						t.Errorf("run.json preflight %+v, want one target", pf)
					case rc.conn != "":
						pt := pf.Targets[0]
						if pt.Connection != rc.conn || pt.Server != "mockllm" || pt.LimitHonoured == nil || *pt.LimitHonoured != *rc.limitHonoured {
							t.Errorf("run.json preflight %+v, want connection %q, server mockllm, limit_honoured %v", pt, rc.conn, *rc.limitHonoured)
						}
					}
					recs := readRecords(t, dir)
					if len(recs) != 30 {
						t.Fatalf("%d per-request records, want 30 (the preflight is never one of them)", len(recs))
					}
					reconnects, closing := 0, slices.Contains(c.quirk, "--close-after-response")
					for i := range recs {
						rec := &recs[i]
						if v, _ := rec.num("output_sequence_length"); rc.osl > 0 && v != float64(rc.osl) {
							t.Errorf("request %d: OSL %v, want %d", i, v, rc.osl)
						}
						if v, ok := rec.num("http_req_connection_reused"); closing && (!ok || v != 0) {
							t.Errorf("request %d: http_req_connection_reused %v (%v): a server that closes every connection reused one", i, v, ok)
						}
						v, ok := rec.num("http_req_reconnects")
						if !ok {
							t.Fatalf("request %d has no http_req_reconnects", i)
						}
						reconnects += int(v)
					}
					if reconnects > rc.maxReconnects {
						t.Errorf("%d reconnects over 30 requests at concurrency 2, want at most %d", reconnects, rc.maxReconnects)
					}
				})
			}
		})
	}
}

// checkQuirkRun holds a run's output to what it must say: each of stderr exactly once on
// stderr, each of stdout on stdout, none of never on either.
func checkQuirkRun(t *testing.T, stderr, stdout, never []string, r result) {
	t.Helper()
	for _, want := range stderr {
		if strings.Count(r.stderr, want) != 1 {
			t.Errorf("stderr should say once %q:\n%s", want, r.stderr)
		}
	}
	for _, want := range stdout {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, bad := range never {
		if strings.Contains(r.stdout, bad) || strings.Contains(r.stderr, bad) {
			t.Errorf("the run says %q:\nstdout:\n%s\nstderr:\n%s", bad, r.stdout, r.stderr)
		}
	}
}

// TestLlamaCppContextExceeded: llama.cpp ignoring the limit runs each output into its
// context and ends the stream with "Context size has been exceeded." (mockllm
// --context-tokens): every request fails, and the note still names --use-legacy-max-tokens,
// counting the requests that failed past the requested length.
func TestLlamaCppContextExceeded(t *testing.T) {
	mock := startMock(t, "--ttft", "2ms", "--itl", "0s", "--natural-tokens", "400",
		"--ignore-max-completion-tokens", "--context-tokens", "120")
	r := command(t, bin.profile, "--model", "mock-llm", "--tokenizer", "builtin", "--endpoint-type", "chat", "--streaming",
		"--url", mock.URL, "--concurrency", "2", "--request-count", "6", "--synthetic-input-tokens-mean", "20",
		"--output-tokens-mean", "8", "--output-dir", filepath.Join(t.TempDir(), "run"), "--no-pin", "--no-gpu-telemetry",
		"--ui-type", "none", "--no-html", "--no-server-metrics")
	if r.code != 1 {
		t.Fatalf("profile: exit %d, want 1 (every request failed)\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		`stream_error ×6 ("Context size has been exceeded.")`,
		"6 of 6 requests (100.00%) produced more output tokens than requested (osl_mismatch_count; 6 of them failed once past it",
		"compile the plan with --use-legacy-max-tokens",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "compile the plan with --use-legacy-max-tokens") {
		t.Errorf("the preflight did not name the flag:\n%s", r.stderr)
	}
}
