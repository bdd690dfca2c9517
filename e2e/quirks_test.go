package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLlamaCppQuirks runs profile, as an AIPerf user would, against mockllm playing
// llama.cpp's llama-server (b7588): it ignores max_completion_tokens, closes the connection
// after every response while announcing keep-alive, and answers /metrics 501 with a hint.
//
// With the default body the run says to compile with --use-legacy-max-tokens (the preflight
// and the analysis note: it used to advise ignore_eos/min_tokens), shows the server's own
// /metrics message (it used to be a bare "HTTP 501"), and keeps its schedule with the
// server's closes named as the server's (it used to write every request on a dead
// connection and pay a reconnect in its dispatch lag). With --use-legacy-max-tokens every
// output has exactly the requested length. The per-request export shows the connections.
func TestLlamaCppQuirks(t *testing.T) {
	mock := startMock(t, "--ttft", "5ms", "--itl", "1ms", "--natural-tokens", "60",
		"--ignore-max-completion-tokens", "--close-after-response", "--no-metrics")
	work := t.TempDir()
	run := func(name string, extra ...string) (result, string) {
		dir := filepath.Join(work, name)
		args := append([]string{"--model", "mock-llm", "--tokenizer", "builtin", "--endpoint-type", "chat", "--streaming",
			"--url", mock.URL, "--concurrency", "2", "--request-count", "30", "--synthetic-input-tokens-mean", "20",
			"--output-tokens-mean", "8", "--output-dir", dir, "--no-pin", "--no-gpu-telemetry", "--ui-type", "none", "--no-html",
			"--max-schedule-lag", "50ms"}, extra...)
		return command(t, bin.profile, args...), dir
	}

	r, dir := run("default")
	if r.code != 0 {
		t.Fatalf("profile: exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{
		"ignored max_completion_tokens (asked for 2 output tokens, got at least",
		"and honours max_tokens: compile the plan with --use-legacy-max-tokens",
		"closes the connection after each response although it announces keep-alive",
		`/metrics: HTTP 501: "mockllm: this server does not serve metrics (started with --no-metrics); start it without --no-metrics"`,
	} {
		if strings.Count(r.stderr, want) != 1 {
			t.Errorf("stderr should say once %q:\n%s", want, r.stderr)
		}
	}
	for _, want := range []string{
		"30 of 30 requests (100.00%) produced more output tokens than requested (osl_mismatch_count), and the bodies set max_completion_tokens",
		"compile the plan with --use-legacy-max-tokens",
		"Verdict: schedule kept",
		"the server closed the connection after each response: 0 reconnects, 30 of 30 requests on a new connection for it",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "set ignore_eos/min_tokens") {
		t.Errorf("stdout still advises ignore_eos/min_tokens:\n%s", r.stdout)
	}
	var m struct {
		Preflight struct {
			Targets []struct {
				Connection    string `json:"connection"`
				LimitHonoured *bool  `json:"limit_honoured"`
				Server        string `json:"server"`
			} `json:"targets"`
		} `json:"preflight"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil || len(m.Preflight.Targets) != 1 || m.Preflight.Targets[0].Connection != "closes-after-response" ||
		m.Preflight.Targets[0].Server != "mockllm" || m.Preflight.Targets[0].LimitHonoured == nil || *m.Preflight.Targets[0].LimitHonoured {
		t.Errorf("run.json preflight %+v (%v)", m.Preflight, err)
	}

	// Without the preflight the workers learn the policy from the first closed connection:
	// at most one reconnect per slot, each visible in the per-request export.
	r, dir = run("no-preflight", "--no-preflight", "--use-legacy-max-tokens")
	if r.code != 0 {
		t.Fatalf("profile --no-preflight: exit %d\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "replay: preflight") || !strings.Contains(r.stdout, "Verdict: schedule kept") ||
		!strings.Contains(r.stdout, "the server closed the connection after each response") {
		t.Errorf("--no-preflight:\nstderr:\n%s\nstdout:\n%s", r.stderr, r.stdout)
	}
	reconnects := 0
	recs := readRecords(t, dir)
	for i := range recs {
		rec := &recs[i]
		if v, ok := rec.num("http_req_connection_reused"); !ok || v != 0 {
			t.Errorf("request %d: http_req_connection_reused %v (%v): a server that closes every connection reused one", i, v, ok)
		}
		if v, _ := rec.num("output_sequence_length"); v != 8 {
			t.Errorf("request %d: --use-legacy-max-tokens: OSL %v, want 8", i, v)
		}
		v, ok := rec.num("http_req_reconnects")
		if !ok {
			t.Fatalf("request %d has no http_req_reconnects", i)
		}
		reconnects += int(v)
	}
	if reconnects > 2 {
		t.Errorf("%d reconnects over 30 requests at concurrency 2, want at most 2", reconnects)
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
