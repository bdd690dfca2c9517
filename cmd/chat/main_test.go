package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/noise"
	"github.com/llmbench/llmbench/mockllm"
	"github.com/llmbench/llmbench/redact"
	"github.com/llmbench/llmbench/tokenizer"
)

// mock is a mockllm server on a loopback port that keeps its schedule log and every request
// body it was sent.
type mock struct {
	url    string
	mu     sync.Mutex
	sched  bytes.Buffer
	bodies []string
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func startMock(t *testing.T, edit func(*mockllm.Options)) *mock {
	t.Helper()
	tok, err := tokenizer.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	m := &mock{}
	o := mockllm.DefaultOptions()
	o.Tokenizer = tok
	o.ScheduleLog = lockedWriter{&m.mu, &m.sched}
	if edit != nil {
		edit(&o)
	}
	s, err := mockllm.New(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		m.mu.Lock()
		m.bodies = append(m.bodies, string(b))
		m.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		s.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { srv.Close(); s.Close() })
	m.url = srv.URL
	return m
}

func (m *mock) schedule(t *testing.T) []mockllm.ScheduleRecord {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	recs, err := mockllm.ReadSchedule(bytes.NewReader(m.sched.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func (m *mock) requests() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.bodies...)
}

func runChat(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), append([]string{"chat"}, args...), strings.NewReader(stdin), &out, &errb, func(string) string { return "" })
	return code, out.String(), errb.String()
}

var ttftLine = regexp.MustCompile(`(?m)^TTFT: ([0-9.]+) ms$`)

// TestQuickTTFTAgainstSchedule: `chat --quick` against mockllm prints the turn's TTFT, and it
// is what the server did for that very request, by its own schedule log: the first event was
// due at the configured TTFT, and the client read it after the server sent it (never before)
// and within a bound set by the machine's scheduling noise meanwhile (1 ms + 4 × the p99
// lateness of a 200 µs sleep), not a fixed figure a loaded machine would break. A miss is
// measured again: a client that adds real delay misses every time.
func TestQuickTTFTAgainstSchedule(t *testing.T) {
	const ttft = 50 * time.Millisecond
	m := startMock(t, func(o *mockllm.Options) { o.TTFT, o.ITL = ttft, 5*time.Millisecond })
	var fails []string
	for attempt := range 3 {
		ns := noise.Start(-1)
		code, out, errs := runChat(t, "", "-m", "mock", "--url", m.url, "--quick", "--output-tokens-mean", "8")
		late := ns.Stop()
		if code != 0 {
			t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
		}
		got := ttftLine.FindStringSubmatch(out)
		if got == nil {
			t.Fatalf("no TTFT line in:\n%s", out)
		}
		ms, _ := strconv.ParseFloat(got[1], 64)
		client := time.Duration(ms * 1e6)
		recs := m.schedule(t)
		if len(recs) != attempt+1 {
			t.Fatalf("%d requests in the schedule log after %d turns", len(recs), attempt+1)
		}
		r := recs[attempt]
		if len(r.DueNs) == 0 || len(r.SentNs) == 0 {
			t.Fatalf("schedule record without events: %+v", r)
		}
		if due := time.Duration(r.DueNs[0]); due != ttft {
			t.Fatalf("first event due at %v, mockllm was configured for %v", due, ttft)
		}
		server := time.Duration(r.SentNs[0])
		over := client - server
		bound := time.Millisecond + 4*late.Quantile(0.99)
		t.Logf("attempt %d: chat TTFT %v, server sent the first event at %v (%v after due): client − server %v, bound %v",
			attempt, client, server, server-ttft, over, bound)
		if over < -10*time.Microsecond { // the printed figure is rounded to 10 µs
			t.Fatalf("chat's TTFT %v is before the server sent its first event (%v)", client, server)
		}
		if over <= bound {
			if !strings.Contains(out, "ITL:  ") || !strings.Contains(out, "TPS:  ") {
				t.Errorf("the figures lack TPS or ITL:\n%s", out)
			}
			return
		}
		fails = append(fails, "client − server "+over.String()+" over "+bound.String())
	}
	t.Fatalf("every attempt missed: %v", fails)
}

// TestConversationFromStdin: without a terminal, messages come one a line on stdin; each turn
// is sent with the conversation so far (the previous reply included), and --no-history sends
// each on its own.
func TestConversationFromStdin(t *testing.T) {
	for _, noHist := range []bool{false, true} {
		m := startMock(t, func(o *mockllm.Options) { o.TTFT, o.ITL = time.Millisecond, time.Millisecond })
		args := []string{"-m", "mock", "--url", m.url, "--output-tokens-mean", "4", "--system-prompt", "be brief"}
		if noHist {
			args = append(args, "--no-history")
		}
		code, out, errs := runChat(t, "first question\n\nsecond question\n", args...)
		if code != 0 {
			t.Fatalf("no-history %v: exit %d\nstderr: %s", noHist, code, errs)
		}
		if n := len(ttftLine.FindAllString(out, -1)); n != 2 {
			t.Fatalf("no-history %v: %d turns' figures (the empty line is no message), want 2:\n%s", noHist, n, out)
		}
		reqs := m.requests()
		if len(reqs) != 2 {
			t.Fatalf("no-history %v: %d requests, want 2", noHist, len(reqs))
		}
		type msg struct{ Role, Content string }
		var first, second struct{ Messages []msg }
		if json.Unmarshal([]byte(reqs[0]), &first) != nil || json.Unmarshal([]byte(reqs[1]), &second) != nil {
			t.Fatalf("bodies are not JSON: %q", reqs)
		}
		want := []msg{{"system", "be brief"}, {"user", "second question"}}
		if !noHist {
			reply := strings.SplitN(out, "\nTTFT:", 2)[0] // the first reply, as streamed to stdout
			want = []msg{{"system", "be brief"}, {"user", "first question"}, {"assistant", strings.TrimSpace(reply)}, {"user", "second question"}}
		}
		if len(second.Messages) != len(want) {
			t.Fatalf("no-history %v: second request's messages %+v, want %+v", noHist, second.Messages, want)
		}
		for i := range want {
			got := second.Messages[i]
			if got.Role != want[i].Role || strings.TrimSpace(got.Content) != want[i].Content {
				t.Errorf("no-history %v: message %d = %+v, want %+v", noHist, i, got, want[i])
			}
		}
	}
}

// TestReasoningCounted: a reasoning model's reasoning tokens are counted as analyze counts
// them (here the server's usage), and shown on the TPS line.
func TestReasoningCounted(t *testing.T) {
	m := startMock(t, func(o *mockllm.Options) { o.TTFT, o.ITL, o.ReasoningTokens = time.Millisecond, time.Millisecond, 3 })
	code, out, errs := runChat(t, "", "-m", "mock", "--url", m.url, "--quick", "--use-server-token-count", "--output-tokens-mean", "7", "what", "is", "2+2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "(7 tokens, 3 reasoning in ") {
		t.Errorf("TPS line lacks the counts:\n%s", out)
	}
	var body struct{ Messages []struct{ Content string } }
	if err := json.Unmarshal([]byte(m.requests()[0]), &body); err != nil || body.Messages[len(body.Messages)-1].Content != "what is 2+2" {
		t.Errorf("the --quick message is not the arguments joined: %v %+v", err, body)
	}
}

// TestFlags: bad input is one line and exit 2, before anything is sent; a server that does not
// answer is a failed turn, exit 1.
func TestFlags(t *testing.T) {
	m := startMock(t, nil)
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	cases := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no model", []string{"--quick"}, 2, "chat: --model is required\n"},
		{"typo", []string{"-m", "x", "--no-histroy"}, 2, "unknown flag: --no-histroy (did you mean --no-history?)"},
		{"argument without quick", []string{"-m", "x", "hello"}, 2, `unexpected argument "hello"`},
		{"endpoint type", []string{"-m", "x", "--endpoint-type", "embeddings"}, 2, "--endpoint-type embeddings: chat talks to a streaming API"},
		{"unknown endpoint type", []string{"-m", "x", "--endpoint-type", "chatt"}, 2, "--endpoint-type: "},
		{"timeout", []string{"-m", "x", "--request-timeout-seconds", "0"}, 2, "--request-timeout-seconds 0"},
		{"bad header", []string{"-m", "x", "--url", m.url, "-H", "nocolon"}, 2, "want 'Name: value'"},
		{"bad url", []string{"-m", "x", "--url", "ftp://h"}, 2, "scheme must be http or https"},
		{"server gone", []string{"-m", "x", "--url", deadURL, "--quick"}, 1, "chat: the turn failed: connection_refused"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(m.requests())
			code, _, errs := runChat(t, "", c.args...)
			if code != c.code || !strings.Contains(errs, c.stderr) {
				t.Fatalf("exit %d (want %d), stderr %q, want ~ %q", code, c.code, errs, c.stderr)
			}
			if c.code == 2 && len(m.requests()) != before {
				t.Errorf("bad input sent a request")
			}
		})
	}
	if code, out, _ := runChat(t, "", "--help"); code != 0 || !strings.Contains(out, "--no-history") {
		t.Errorf("--help: exit %d, %s", code, out)
	}
}

// TestEchoedCredentialsHidden: a server that refuses the turn and echoes the API key and a
// secret header's value in its error body (plainly, not after "Bearer") fails the turn with
// one line on stderr that holds neither, as main writes it (through redact.Writer).
func TestEchoedCredentialsHidden(t *testing.T) {
	const key, tok = "sk-CHATKEY-0123456789", "chatTOKEN-0123456789"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, "forbidden: key %s with token %s not valid", strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "),
			r.Header.Get("X-Upstream-Token"))
	}))
	t.Cleanup(srv.Close)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"chat", "-m", "m", "-u", srv.URL, "--tokenizer", "builtin", "--api-key", key,
		"-H", "X-Upstream-Token: " + tok, "--quick", "hi"}, strings.NewReader(""), redact.NewWriter(&out), redact.NewWriter(&errb),
		func(string) string { return "" })
	if code != 1 || !strings.Contains(errb.String(), "http_403") {
		t.Fatalf("exit %d, stderr %q: want 1 and the turn's failure", code, errb.String())
	}
	for _, s := range []string{key, tok} {
		if strings.Contains(out.String()+errb.String(), s) {
			t.Errorf("%q printed: stdout %q stderr %q", s, out.String(), errb.String())
		}
	}
}

// TestImpossibleServerCounts: under --use-server-token-count a negative or absurd usage
// count gives no TPS (it printed "TPS: -275.00 tokens/s", or 9.86e9 tokens/s), and the line
// says why; with the tokenizer's counts the TPS stands and a note names the bad usage
// (#38 item 4).
func TestImpossibleServerCounts(t *testing.T) {
	for _, c := range []struct {
		name, usage string
		server      bool
		want, not   string
	}{
		{"negative", `{"prompt_tokens":-5,"completion_tokens":-7,"total_tokens":-12}`, true,
			"TPS:  not measured: the server's usage has negative token counts (treated as absent)", "TPS:  -"},
		{"absurd", `{"prompt_tokens":5,"completion_tokens":1000000000,"total_tokens":1000000005}`, true,
			"TPS:  not measured: the server's usage has 1000000000 completion tokens for 32 bytes of text in 8 content events", "tokens/s"},
		{"sane", `{"prompt_tokens":5,"completion_tokens":8,"total_tokens":13}`, true, "TPS:  ", "not measured"},
		{"tokenizer counts", `{"prompt_tokens":-5,"completion_tokens":-7,"total_tokens":-12}`, false,
			"Note: the server's usage has negative token counts (treated as absent) (the TPS counts tokens with the tokenizer)", "TPS:  -"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				for i := 0; i < 8; i++ {
					fmt.Fprintf(w, "data: %s\n\n", `{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" the"}}]}`)
					w.(http.Flusher).Flush()
					time.Sleep(time.Millisecond)
				}
				fmt.Fprintf(w, "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":%s}\n\ndata: [DONE]\n\n", c.usage)
			}))
			t.Cleanup(srv.Close)
			args := []string{"-m", "m", "--url", srv.URL, "--quick"}
			if c.server {
				args = append(args, "--use-server-token-count")
			} else {
				args = append(args, "--tokenizer", "builtin")
			}
			code, out, errs := runChat(t, "", append(args, "hi")...)
			if code != 0 || !strings.Contains(out, c.want) || strings.Contains(out, c.not) {
				t.Fatalf("exit %d; want %q and not %q in:\n%s\nstderr: %s", code, c.want, c.not, out, errs)
			}
		})
	}
}
