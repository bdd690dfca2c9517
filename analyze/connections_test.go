package analyze

import (
	"strings"
	"testing"

	"github.com/llmbench/llmbench/rawlog"
)

// A server that closes every connection after its response (llama.cpp) costs the requests
// the client had to send again a reconnect: their dispatch lag counts from the first attempt,
// so the verdict keeps the run and names the closes as the server's, instead of "schedule NOT
// kept ... the numbers describe the client" (3 ms lost on every tenth request used to make
// the p99 lag 3 ms against a 5 ms TTFT). The per-request export shows each reconnect.
func TestServerClosesAreNotTheClients(t *testing.T) {
	base := scenario{n: 100, concurrency: 2, ttft: 5 * ms, itl: 1 * ms, tokens: 4, streaming: true, cpuPct: 20}
	for _, c := range []struct {
		name       string
		closes     bool
		reconnects int
		preflight  bool
		want       string
	}{
		{"closes learned", true, 10, false, "the server closed the connection after each response: 9 reconnects, 98 of 100 requests on a new connection for it (the server's doing, not the client's"},
		{"closes seen by the preflight", true, 0, true, "the server closed the connection after each response: 0 reconnects, 98 of 100 requests"},
		{"keeps connections", false, 0, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := base
			sc.closesAfterResponse, sc.reconnectEvery = c.closes, c.reconnects
			dir := sc.build(t, t.TempDir())
			if c.preflight {
				m, err := rawlog.ReadManifest(dir)
				if err != nil {
					t.Fatal(err)
				}
				m.Preflight = &rawlog.Preflight{Targets: []rawlog.PreflightTarget{{Status: 200, Connection: rawlog.ConnClosesAfterResponse}}}
				if err := rawlog.WriteManifest(dir, m); err != nil {
					t.Fatal(err)
				}
			}
			s, records := analyseDir(t, Options{}, dir)
			line := VerdictLine(s)
			if !s.Verdict.Kept || !strings.Contains(line, "schedule kept") {
				t.Fatalf("verdict not kept: %s", line)
			}
			if p99 := s.Verdict.DispatchLagP99Ms; p99 >= 1 {
				t.Errorf("dispatch lag p99 %v ms carries the server's reconnects", p99)
			}
			if c.want == "" {
				if strings.Contains(line, "server closed") {
					t.Errorf("a keep-alive server blamed: %s", line)
				}
			} else if !strings.Contains(line, c.want) {
				t.Errorf("verdict line %q lacks %q", line, c.want)
			}
			if c.reconnects > 0 {
				if got := strings.Count(string(records), `"http_req_reconnects":{"value":1,`); got != 9 {
					t.Errorf("%d records with http_req_reconnects 1, want 9", got)
				}
				if s.Verdict.Server.Reconnects != 9 || !s.Verdict.Server.AfterEachResponse {
					t.Errorf("server connections %+v", s.Verdict.Server)
				}
			}
			if g := GeneratorClaimWithout(s); g.Status == StatusFailed {
				t.Errorf("generator claim failed: %s", g.Evidence)
			}
		})
	}
}

// When nearly every output overran the requested length and the bodies set a limit field,
// the server ignores the field: the note says so and names the fix (for chat, the flag that
// sends the other field), instead of suggesting ignore_eos/min_tokens, which make outputs
// longer, not shorter. Outputs that overrun only now and then keep the general note.
func TestIgnoredLimitNote(t *testing.T) {
	for _, c := range []struct {
		name      string
		endpoint  string
		field     string
		produced  int
		context   bool
		want, not string
	}{
		{"llama.cpp ignores max_completion_tokens", "chat", "max_completion_tokens", 60, false,
			"40 of 40 requests (100.00%) produced more output tokens than requested (osl_mismatch_count), and the bodies set max_completion_tokens: the server ignores that field (llama.cpp's server reads only max_tokens): compile the plan with --use-legacy-max-tokens", "ignore_eos"},
		{"and runs out of context", "chat", "max_completion_tokens", 60, true,
			"40 of 40 requests (100.00%) produced more output tokens than requested (osl_mismatch_count; 40 of them failed once past it (see Errors: a server ignoring the limit runs out of context)), and the bodies set max_completion_tokens: the server ignores that field (llama.cpp's server reads only max_tokens): compile the plan with --use-legacy-max-tokens", "ignore_eos"},
		{"a server that reads only max_completion_tokens", "chat", "max_tokens", 60, false,
			"the bodies set max_tokens: the server ignores that field: compile the plan without --use-legacy-max-tokens", "ignore_eos"},
		{"another field", "chat", "max_output_tokens", 60, false, "the bodies set max_output_tokens: the server ignores that field, so the output lengths are not the plan's", "--use-legacy-max-tokens"},
		{"no limit field", "chat", "", 60, false, "set ignore_eos/min_tokens", "ignores that field"},
		{"short outputs", "chat", "max_completion_tokens", 2, false, "set ignore_eos/min_tokens", "ignores that field"},
		{"honoured", "chat", "max_completion_tokens", 0, false, "", "osl_mismatch_count"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := scenario{n: 40, concurrency: 4, ttft: 5 * ms, itl: 1 * ms, tokens: 8, streaming: true, endpoint: c.endpoint,
				produced: c.produced, limitField: c.field, contextExceeded: c.context}
			s, _ := analyseDir(t, Options{}, sc.build(t, t.TempDir()))
			all := strings.Join(s.Notes, "\n")
			if c.want != "" && !strings.Contains(all, c.want) {
				t.Errorf("notes lack %q:\n%s", c.want, all)
			}
			if strings.Contains(all, c.not) {
				t.Errorf("notes hold %q:\n%s", c.not, all)
			}
		})
	}
}
