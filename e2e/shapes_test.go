package e2e_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// garbage answers every route with 200 and a body no API of that route would send, each in
// its own way: truncated JSON, a body of another shape, HTML, an event stream whose events
// are not JSON.
func garbage() http.Handler {
	mux := http.NewServeMux()
	write := func(ctype, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ctype)
			fmt.Fprint(w, body)
		}
	}
	mux.Handle("/truncated", write("application/json", `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"content":"hel`))
	mux.Handle("/foreign", write("application/json", `{"status":"ok","result":{"text":"hello"}}`))
	mux.Handle("/html", write("text/html", "<html><body>502 Bad Gateway</body></html>"))
	mux.Handle("/sse-garbage", write("text/event-stream",
		"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"hi\"}\n\n"+
			"data: {not json at all}\n\ndata: [DONE]\n\n"))
	mux.Handle("/array", write("application/json", `[1,2,3]`))
	return mux
}

// TestUnexpectedShapes: a response in a shape the plan's endpoint type does not produce is an
// error record naming that type — replay completes, analyze counts the request as failed
// (exit 1 from the error-rate gate, never bad input or a crash) and says which API it
// expected.
func TestUnexpectedShapes(t *testing.T) {
	t.Parallel()
	srv := startMock(t, mockTiming...)
	junk := httptest.NewServer(garbage())
	t.Cleanup(junk.Close)
	const n = 4
	cases := []struct {
		name, typ, url, path string
		args                 []string
		kind                 string // error kind of every request
		msg                  string // in every error message, after "endpoint TYPE: "
	}{
		// mockllm's image route answers a completions plan with an image body (it carries
		// "usage", which must not pass for a usage-only chunk).
		{name: "completions-at-images", typ: "completions", url: srv.URL, path: "/v1/images/generations",
			kind: "invalid_response", msg: `unexpected response shape: missing "choices" (has "data"`},
		{name: "chat-at-embeddings", typ: "chat", url: srv.URL, path: "/v1/embeddings",
			kind: "invalid_response", msg: `unexpected response shape: missing "choices" (has "data"`},
		{name: "chat-at-completions", typ: "chat", url: srv.URL, path: "/v1/completions", args: []string{"--extra-inputs", "prompt:hello"},
			kind: "invalid_response", msg: `unexpected response shape: choices[0] has "text"`},
		{name: "responses-stream-at-chat", typ: "responses", url: srv.URL, path: "/v1/chat/completions",
			args: []string{"--streaming", "--extra-inputs", `messages:[{"role":"user","content":"hi"}]`},
			kind: "invalid_response", msg: `unexpected response shape: missing "type" or "output"`},
		{name: "chat-truncated", typ: "chat", url: junk.URL, path: "/truncated", kind: "invalid_response", msg: "invalid JSON at byte"},
		{name: "huggingface-foreign", typ: "huggingface_generate", url: junk.URL, path: "/foreign", kind: "invalid_response", msg: "unexpected response shape"},
		{name: "embeddings-html", typ: "embeddings", url: junk.URL, path: "/html", kind: "invalid_response", msg: "response body is neither JSON nor an event stream"},
		{name: "responses-sse-garbage", typ: "responses", url: junk.URL, path: "/sse-garbage", args: []string{"--streaming"},
			kind: "invalid_response", msg: "invalid JSON at byte"},
		{name: "anthropic-array", typ: "anthropic_messages", url: junk.URL, path: "/array",
			kind: "invalid_response", msg: "unexpected response shape"},
		{name: "cohere-foreign", typ: "cohere_rankings", url: junk.URL, path: "/foreign",
			args: []string{"--input-file", testdata(t, "rankings.jsonl"), "--custom-dataset-type", "single_turn"},
			kind: "invalid_response", msg: "unexpected response shape"},
		// A template plan whose --response-field points where the server puts nothing has no
		// content, where the same plan auto-detected (TestEndpointTypes) has all of it:
		// analyze reads the field from the plan.
		{name: "template-response-field", typ: "template", url: srv.URL, path: "/v1/chat/completions",
			args: []string{"--payload-template", chatTemplate, "--response-field", "choices.0.message.refusal"},
			kind: "no_content", msg: "response has no content"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			args := append([]string{"--model", "mock", "--endpoint-type", c.typ, "--custom-endpoint", c.path, "--isl", "16",
				"--osl", "4", "--request-count", strconv.Itoa(n), "--concurrency", strconv.Itoa(n)}, c.args...)
			planPath := compile(t, dir, args...)
			runDir := replayBadServer(t, filepath.Join(dir, "run"), planPath, []string{c.url})
			out := filepath.Join(dir, "client")
			if code := analyzeRun(t, runDir, out); code != 1 {
				t.Errorf("analyze exit %d, want 1 (the error-rate gate fails)", code)
			}
			s := readSummary(t, out)
			if v := s.must(t, "request_count").Avg; v != 0 {
				t.Errorf("request_count %v, want 0", v)
			}
			if v := s.must(t, "error_request_count").Avg; v != n {
				t.Errorf("error_request_count %v, want %d", v, n)
			}
			want := "endpoint " + c.typ + ": " + c.msg
			es := s.errorSummary(t)
			if len(es) != 1 || es[0].Details.Type != c.kind || es[0].Count != n || !strings.Contains(es[0].Details.Message, want) {
				t.Errorf("error_summary %+v, want %d × %s with %q", es, n, c.kind, want)
			}
			recs := readRecords(t, out)
			if len(recs) != n {
				t.Fatalf("%d records, want %d", len(recs), n)
			}
			for _, r := range recs {
				if r.Error == nil || r.Error.Type != c.kind || !strings.Contains(r.Error.Message, want) || r.Metadata.HTTPStatus != 200 {
					t.Errorf("request %d: status %d error %+v, want %s naming %q", r.Metadata.RequestIndex, r.Metadata.HTTPStatus, r.Error, c.kind, want)
				}
			}
		})
	}
}

// TestInjectedFaults: mockllm's fault knobs (HTTP 500s, error events mid-stream, dropped
// connections) become error records of the matching kinds, exactly as many of each as the
// server says it injected (its /metrics), and every other request stays valid.
func TestInjectedFaults(t *testing.T) {
	t.Parallel()
	srv := startMock(t, append(slices.Clone(mockTiming), "--error-rate", "0.25", "--stream-error-rate", "0.25", "--disconnect-rate", "0.125")...)
	dir := t.TempDir()
	c := endpointCase{typ: "chat", streaming: true, tokens: true, synthetic: true}
	planPath := compile(t, dir, c.planArgs()...) // no warmup: the server's tally covers the profile
	runDir := replayPlan(t, dir, planPath, []string{srv.URL})
	out := filepath.Join(dir, "client")
	if code := analyzeRun(t, runDir, out); code != 1 {
		t.Errorf("analyze exit %d, want 1", code)
	}
	s := readSummary(t, out)
	kinds := map[string]int{}
	for _, e := range s.errorSummary(t) {
		kinds[e.Details.Type] += e.Count
	}
	faults := srv.metric(t, "mockllm_faults_total")
	t.Logf("client errors %v; server injected %v", kinds, faults)
	injected := int(faults["error"] + faults["stream_error"] + faults["disconnect"])
	if injected == 0 || faults["stall"] != 0 {
		t.Fatalf("server injected %v", faults)
	}
	// A dropped connection is a transport error (the text says the response was cut).
	dropped := kinds["transport_error"] + kinds["eof"] + kinds["connection_reset"]
	// mockllm spreads faults evenly over arrivals: each kind within 2 of 16 × its rate.
	for kind, want := range map[string]float64{"error": 4, "stream_error": 4, "disconnect": 2} {
		if d := faults[kind] - want; d < -2 || d > 2 {
			t.Errorf("server injected %v %s faults in %d arrivals, want %v ± 2", faults[kind], kind, nRequests, want)
		}
	}
	if kinds["http_500"] != int(faults["error"]) || kinds["stream_error"] != int(faults["stream_error"]) ||
		dropped != int(faults["disconnect"]) || s.must(t, "error_request_count").Avg != float64(injected) {
		t.Errorf("errors by kind %v, server injected %v", kinds, faults)
	}
	if v := s.must(t, "request_count").Avg; v != float64(nRequests-injected) {
		t.Errorf("request_count %v, want %d", v, nRequests-injected)
	}
	for _, r := range readRecords(t, out) {
		if r.Error == nil {
			if v, _ := r.num("output_sequence_length"); v != osl {
				t.Errorf("valid request %d: OSL %v", r.Metadata.RequestIndex, v)
			}
		} else if r.Error.Message == "" {
			t.Errorf("request %d: %s without a message", r.Metadata.RequestIndex, r.Error.Type)
		}
	}
}
