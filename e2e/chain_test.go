package e2e_test

import (
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
)

// rawRequest is what replay logged about one request, with its plan record.
type rawRequest struct {
	index    uint32
	urlIndex int
	session  uint32
	phase    mmapds.Phase
	status   int
	body     string
	// reactNs is the client's own scheduling delay: from when the request could be sent to
	// when the worker began writing it (-1 when it was not sent).
	reactNs int64
}

// readRaw reads every request record of a run directory (the raw logs, not analyze's view)
// and joins it with the plan's record.
func readRaw(t testing.TB, runDir, planPath string) (*rawlog.Manifest, []rawRequest) {
	t.Helper()
	return readRawPart(t, runDir, planPath, -1)
}

// readRawPart is readRaw for a run that holds want of the plan's requests (-1: all of them,
// else one shard of a distributed run).
func readRawPart(t testing.TB, runDir, planPath string, want int) (*rawlog.Manifest, []rawRequest) {
	t.Helper()
	m, err := rawlog.ReadManifest(runDir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := mmapds.Open(planPath, mmapds.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var out []rawRequest
	for _, w := range m.Workers {
		r, err := rawlog.Open(filepath.Join(runDir, w.Log))
		if err != nil {
			t.Fatal(err)
		}
		for {
			k, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", w.Log, err)
			}
			if k != rawlog.KindRequest {
				continue
			}
			q := r.Request()
			rec, _, err := p.Record(int(q.Index))
			if err != nil {
				t.Fatal(err)
			}
			react := int64(-1)
			if q.ReadyNs >= 0 && q.WriteStartNs >= q.ReadyNs {
				react = q.WriteStartNs - q.ReadyNs
			}
			out = append(out, rawRequest{index: q.Index, urlIndex: q.URLIndex, session: rec.Session, phase: rec.Phase,
				status: q.Status, body: string(q.Body), reactNs: react})
		}
		r.Close()
	}
	if want < 0 {
		want = p.Len()
	}
	if len(out) != want {
		t.Fatalf("the logs hold %d requests, want %d (the plan has %d)", len(out), want, p.Len())
	}
	slices.SortFunc(out, func(a, b rawRequest) int { return int(a.index) - int(b.index) })
	return m, out
}

// TestToolCallsCountAsOutput: with mockllm answering every request with a tool call, the
// streamed function name and argument deltas are the output. Each request's OSL is the
// requested 32 tokens, the same count the server's usage reports, and the first event (the
// name) is the first token.
func TestToolCallsCountAsOutput(t *testing.T) {
	srv := startMock(t, append(slices.Clone(mockTiming), "--tool-call-rate", "1")...)
	markers := map[string]string{
		"chat":      `"tool_calls":[{"index":0,"id":`,
		"responses": `"type":"response.function_call_arguments.delta"`,
	}
	var runs []*chainRun
	for _, typ := range []string{"chat", "responses"} {
		runs = append(runs, &chainRun{srv: srv, c: endpointCase{name: typ, typ: typ, streaming: true, tokens: true,
			serverTokens: true, synthetic: true, toolCalls: true, timed: true}})
	}
	runTimed(t, runs, func(t *testing.T, r *chainRun) {
		_, raws := readRaw(t, r.runDir, r.plan)
		for _, q := range raws {
			if !strings.Contains(q.body, markers[r.c.typ]) {
				t.Fatalf("request %d was not answered with a tool call (no %s):\n%.400s", q.index, markers[r.c.typ], q.body)
			}
		}
		checkRun(t, r)
		for _, rec := range readRecords(t, filepath.Join(r.dir, "client")) {
			if v, _ := rec.num("output_token_count"); v != osl {
				t.Errorf("request %d: output_token_count %v, want %d (tool name + arguments)", rec.Metadata.RequestIndex, v, osl)
			}
		}
	})
}

// TestURLRoundRobin: --url twice with --url-strategy round_robin spreads sessions over both
// servers, every turn of a session on its session's server; each server's own request
// counter agrees with replay's logs.
func TestURLRoundRobin(t *testing.T) {
	t.Parallel()
	a, b := startMock(t, mockTiming...), startMock(t, mockTiming...)
	dir := t.TempDir()
	const sessions, turns = 6, 3
	planPath := compile(t, dir, "--model", "mock", "--endpoint-type", "chat", "--isl", "32", "--osl", "4",
		"--extra-inputs", "ignore_eos:true", "--conversation-turn-mean", strconv.Itoa(turns), "--num-sessions", strconv.Itoa(sessions),
		"--concurrency", "4", "--random-seed", "3")
	runDir := replayPlan(t, dir, planPath, []string{a.URL, b.URL}, "--url-strategy", "round_robin")
	out := filepath.Join(dir, "client")
	if code := analyzeRun(t, runDir, out); code != 0 {
		t.Errorf("analyze exit %d, want 0", code)
	}
	s := readSummary(t, out)
	if n := s.must(t, "request_count").Avg; n != sessions*turns {
		t.Errorf("request_count %v, want %d", n, sessions*turns)
	}
	if n := s.must(t, "error_request_count").Avg; n != 0 {
		t.Errorf("error_request_count %v: %+v", n, s.errorSummary(t))
	}
	m, raws := readRaw(t, runDir, planPath)
	if !slices.Equal(m.URLs, []string{a.URL, b.URL}) {
		t.Fatalf("run.json urls %q, want %q", m.URLs, []string{a.URL, b.URL})
	}
	perURL := make([]int, 2)
	sessionURL := map[uint32]int{}
	for _, q := range raws {
		if q.urlIndex < 0 || q.urlIndex > 1 {
			t.Fatalf("request %d: url_index %d", q.index, q.urlIndex)
		}
		perURL[q.urlIndex]++
		if u, ok := sessionURL[q.session]; ok && u != q.urlIndex {
			t.Errorf("session %d moved from URL %d to %d at request %d", q.session, u, q.urlIndex, q.index)
		}
		sessionURL[q.session] = q.urlIndex
		if want := int(q.session) % 2; q.urlIndex != want {
			t.Errorf("request %d of session %d went to URL %d, want %d (session mod 2)", q.index, q.session, q.urlIndex, want)
		}
	}
	if len(sessionURL) != sessions {
		t.Errorf("%d sessions in the logs, want %d", len(sessionURL), sessions)
	}
	for i, srv := range []*mockServer{a, b} {
		// One more than the run's: the preflight's one request to each URL (on by default).
		got := srv.requestsTotal(t)
		if perURL[i] == 0 || got != perURL[i]+1 {
			t.Errorf("URL %d (%s): server counted %d requests, replay logged %d and the preflight sent 1", i, srv.URL, got, perURL[i])
		}
	}
}

// TestAPIKeyHeaders: with --api-key, replay sends the key the way each API wants it —
// "x-api-key" to Anthropic's Messages API (its plan carries anthropic-version), "Authorization:
// Bearer" to the others — so a server that checks keys (mockllm --api-key) rejects nothing.
func TestAPIKeyHeaders(t *testing.T) {
	t.Parallel()
	const key = "sk-e2e-0123"
	srv := startMock(t, append(slices.Clone(mockTiming), "--api-key", key)...)
	for _, typ := range []string{"anthropic_messages", "chat"} {
		t.Run(typ, func(t *testing.T) { checkAPIKey(t, srv, typ, key) })
	}
	if n := srv.metric(t, "mockllm_unauthorized_total")[""]; n != 0 {
		t.Errorf("mockllm rejected %v requests as unauthorized", n)
	}
	if n := srv.requestsTotal(t); n != 8 {
		t.Errorf("mockllm served %d requests, want 8", n)
	}
}

// checkAPIKey runs a small streaming plan of typ against srv with --api-key key: no request
// may fail, and run.json must not hold the key.
func checkAPIKey(t *testing.T, srv *mockServer, typ, key string) {
	t.Helper()
	dir := t.TempDir()
	planPath := compile(t, dir, "--model", "mock", "--endpoint-type", typ, "--streaming", "--isl", "16", "--osl", "4",
		"--request-count", "4", "--concurrency", "4")
	// --no-preflight: its GET /v1/models carries the Messages API's x-api-key, which mockllm
	// takes on /v1/messages only, and this test counts every refusal.
	runDir := replayPlan(t, dir, planPath, []string{srv.URL}, "--api-key", key, "--no-preflight")
	out := filepath.Join(dir, "client")
	if code := analyzeRun(t, runDir, out); code != 0 {
		t.Errorf("analyze exit %d: %+v", code, readSummary(t, out).errorSummary(t))
	}
	if b, err := os.ReadFile(filepath.Join(runDir, rawlog.ManifestName)); err != nil || strings.Contains(string(b), key) {
		t.Errorf("run.json holds the key (or is unreadable: %v)", err)
	}
}

// TestReasoningDeltas: with mockllm thinking first (--reasoning-tokens 8), the reasoning deltas
// of chat (reasoning_content), responses (response.reasoning_text.delta) and
// anthropic_messages (thinking_delta) count as reasoning: 8 reasoning and 24 output tokens of
// the 32, the first output token the server's token event 8 (due 8 ITLs after the first), and
// the server's usage agrees (Anthropic's usage has no reasoning split: only the totals are
// compared). The three run at once on one server; its schedule log tells them apart by
// endpoint.
func TestReasoningDeltas(t *testing.T) {
	t.Parallel()
	const reasoning = 8
	srv := startMock(t, append(slices.Clone(mockTiming), "--reasoning-tokens", strconv.Itoa(reasoning))...)
	for _, typ := range []string{"chat", "responses", "anthropic_messages"} {
		t.Run(typ, func(t *testing.T) {
			t.Parallel()
			c := endpointCase{name: typ, typ: typ, streaming: true, tokens: true, serverTokens: true, synthetic: true}
			dir := t.TempDir()
			planPath := compile(t, dir, c.planArgs()...)
			runDir := replayPlan(t, dir, planPath, []string{srv.URL})
			out, srvOut := filepath.Join(dir, "client"), filepath.Join(dir, "server")
			if code := analyzeRun(t, runDir, out); code != 0 {
				t.Fatalf("analyze exit %d: %+v", code, readSummary(t, out).errorSummary(t))
			}
			if code := analyzeRun(t, runDir, srvOut, "--use-server-token-count"); code != 0 {
				t.Fatalf("analyze --use-server-token-count exit %d", code)
			}
			s, recs := readSummary(t, out), readRecords(t, out)
			checkClean(t, s, recs, &c)
			server := byIndex(readRecords(t, srvOut))
			for _, r := range recs {
				i := r.Metadata.RequestIndex
				rt, _ := r.num("reasoning_token_count")
				ot, _ := r.num("output_token_count")
				osl, _ := r.num("output_sequence_length")
				if rt != reasoning || ot != osl-reasoning || osl != 32 {
					t.Errorf("request %d: reasoning %v, output %v, OSL %v; want %d, %d, 32", i, rt, ot, osl, reasoning, 32-reasoning)
				}
				tags := []string{"output_sequence_length"}
				if typ != "anthropic_messages" {
					tags = append(tags, "reasoning_token_count", "output_token_count")
				}
				for _, tag := range tags {
					cv, _ := r.num(tag)
					if sv, ok := server[i].num(tag); !ok || sv != cv {
						t.Errorf("request %d %s: client %v, server-count mode %v (present %v)", i, tag, cv, sv, ok)
					}
				}
			}
			// The first visible token is the server's token event 8, due 8 ITLs after the
			// first (reasoning) one. The client's TTFO − TTFT is what the server's log says
			// for the same request (event 8 sent − event 0 sent), give or take the lateness
			// of two deliveries: the median difference stays within the run's noise bound,
			// however late a loaded machine made the server.
			sr, sessions := srv.serverRunOf(t, runDir, planPath, typ, true)
			sr.checkPlanned(t, 32, true, false)
			var diffs []float64
			for _, r := range recs {
				ttft, ok1 := r.num("time_to_first_token")
				ttfo, ok2 := r.num("time_to_first_output_token")
				if !ok1 || !ok2 {
					t.Fatalf("request %d: TTFT present %v, TTFO present %v", r.Metadata.RequestIndex, ok1, ok2)
				}
				sv := sr.server(t, r, sessions)
				diffs = append(diffs, math.Abs(ttfo-ttft-ms(sv.SentNs[reasoning]-sv.SentNs[0])))
			}
			med := median(diffs)
			t.Logf("%s: median |(TTFO − TTFT) − server's (event %d − event 0)| %.3f ms; bound %.3f ms (scheduling noise p90 %.3f ms)",
				typ, reasoning, med, sr.boundMs, sr.noiseMs)
			if med > sr.boundMs {
				t.Errorf("TTFO − TTFT differs from the server's event %d − event 0 by %.3f ms in the median, want <= %.3f ms", reasoning, med, sr.boundMs)
			}
		})
	}
}
