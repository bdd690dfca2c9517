package mockllm

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

var fuzzRoutes = []string{"/v1/chat/completions", "/v1/completions", "/v1/responses", "/v1/messages", "/generate",
	"/generate_stream", "/v1/embeddings", "/v1/ranking", "/rerank", "/v2/rerank", "/v1/images/generations"}

// FuzzRequest feeds arbitrary bodies to every POST route: the server
// must answer 200 with well-formed JSON or SSE, or a 4xx with a JSON
// error body, and never panic.
func FuzzRequest(f *testing.F) {
	seeds := []string{
		`{"messages":[{"role":"user","content":"hi"}],"stream":true,"max_tokens":3}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"max_completion_tokens":2,"tools":[{"type":"function","function":{"name":"f"}}]}`,
		`{"prompt":[1,2,3],"max_tokens":2,"stream":true,"stream_options":{"include_usage":true}}`,
		`{"input":[{"role":"user","content":[{"type":"input_text","text":"x"}]}],"max_output_tokens":4,"stream":true}`,
		`{"system":[{"type":"text","text":"s"}],"messages":[{"role":"user","content":"x"}],"max_tokens":3,"stream":true}`,
		`{"inputs":"x","parameters":{"max_new_tokens":3}}`,
		`{"input":["a","b"],"encoding_format":"base64","dimensions":4}`,
		`{"query":{"text":"q"},"passages":[{"text":"a"}]}`,
		`{"query":"q","texts":["a"],"documents":["b",{"text":"c"}],"top_n":1}`,
		`{"prompt":"p","n":2,"size":"10x20","response_format":"url","stream":false}`,
		`{"prompt":"p","stream":true,"partial_images":1}`,
		`{"max_tokens":1e400}`, `[]`, `null`, `{"messages":[{"content":null}]}`, "\xff",
	}
	for i, s := range seeds {
		f.Add(uint8(i), []byte(s))
	}
	o := testOptions()
	o.ReasoningTokens = 2
	o.ToolCallRate = 0.5
	o.EmbeddingDim = 8
	o.NaturalTokens = 4
	o.Strict = true // vLLM's request validation (vllm.go) reads the same outside bytes
	s, err := New(o)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		p := fuzzRoutes[int(route)%len(fuzzRoutes)]
		req := httptest.NewRequest(http.MethodPost, p, bytes.NewReader(body))
		req.Header.Set("anthropic-version", "2023-06-01")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		out := w.Body.Bytes()
		switch {
		case w.Code == 200 && strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream"):
			for _, line := range strings.Split(string(out), "\n") {
				if d, ok := strings.CutPrefix(line, "data: "); ok && d != "[DONE]" && !json.Valid([]byte(d)) {
					t.Fatalf("%s: bad SSE data %q", p, d)
				}
			}
		case w.Code == 200 || w.Code == 400 || w.Code == 413:
			if !json.Valid(out) {
				t.Fatalf("%s: status %d with invalid JSON %q", p, w.Code, out)
			}
		default:
			t.Fatalf("%s: status %d: %s", p, w.Code, out)
		}
	})
}

// FuzzImageContentPath: arbitrary image names never panic and only
// well-formed ones serve a PNG.
func FuzzImageContentPath(f *testing.F) {
	f.Add("0123456789abcdef-64x32.png")
	f.Add("zz-1x1.png")
	f.Add("0123456789abcdef-0x99999999999.png")
	s, err := New(testOptions())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, name string) {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.URL.Path = imageContentPrefix + name
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code == 200 && !bytes.HasPrefix(w.Body.Bytes(), []byte("\x89PNG")) {
			t.Fatalf("200 without a PNG for %q", name)
		}
		if w.Code != 200 && w.Code != 404 {
			t.Fatalf("status %d for %q", w.Code, name)
		}
	})
}
