package mockllm

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

var finishNames = map[string][2]string{ // api → {natural stop, budget exhausted}
	"chat":        {"stop", "length"},
	"completions": {"stop", "length"},
	"responses":   {"completed", "incomplete"},
	"anthropic":   {"end_turn", "max_tokens"},
	"tgi":         {"eos_token", "length"},
}

// reasoningAPIs carry reasoning text.
var reasoningAPIs = map[string]bool{"chat": true, "responses": true, "anthropic": true}

// TestTextAPIsCountsAreExact checks every text API, streaming and not:
// the text re-tokenizes to exactly the counts the server reports, the
// end marker and finish reason are right, and max/min/ignore_eos hold.
func TestTextAPIsCountsAreExact(t *testing.T) {
	o := testOptions()
	o.ReasoningTokens = 3
	base := startServer(t, o)
	prompt := fakeTok.Count("hello world wide")
	cases := []struct {
		name       string
		extra      map[string]any
		wantTotal  int // 0: natural length, not fixed
		wantLength bool
	}{
		{"ignore_eos", map[string]any{"max": 9, "ignore_eos": true}, 9, true},
		{"natural", map[string]any{}, 0, false},
		{"max below natural", map[string]any{"max": 4}, 4, true},
		{"min_tokens", map[string]any{"min_tokens": 60}, 60, false},
		{"budget all reasoning", map[string]any{"max": 2, "ignore_eos": true}, 2, true},
	}
	for _, api := range textAPIs {
		for _, stream := range []bool{true, false} {
			for _, tc := range cases {
				if api.api == "tgi" && tc.name == "min_tokens" {
					tc.extra = map[string]any{"min_tokens": 60} // top-level extension, as with vLLM
				}
				t.Run(fmt.Sprintf("%s/stream=%v/%s", api.api, stream, tc.name), func(t *testing.T) {
					r, _ := api.call(t, base, stream, tc.extra)
					if !r.done || !r.hasUsage {
						t.Fatalf("done=%v usage=%v", r.done, r.hasUsage)
					}
					wantR := 0
					if reasoningAPIs[api.api] {
						wantR = min(3, max(tc.wantTotal, 3))
						if tc.wantTotal > 0 {
							wantR = min(3, tc.wantTotal)
						}
					}
					if got := fakeTok.Count(r.reasoning); got != wantR {
						t.Errorf("reasoning %q is %d tokens, want %d", r.reasoning, got, wantR)
					}
					if api.api != "anthropic" && api.api != "tgi" && r.reasoningTokens != wantR {
						t.Errorf("usage says %d reasoning tokens, want %d", r.reasoningTokens, wantR)
					}
					got := fakeTok.Count(r.reasoning) + fakeTok.Count(r.content)
					if got != r.completion {
						t.Errorf("text is %d tokens (reasoning %q, content %q), usage says %d", got, r.reasoning, r.content, r.completion)
					}
					if tc.wantTotal > 0 && r.completion != tc.wantTotal {
						t.Errorf("completion tokens %d, want %d", r.completion, tc.wantTotal)
					}
					if tc.wantTotal == 0 && (r.completion < 10+wantR || r.completion > 30+wantR) {
						t.Errorf("natural length %d outside [10,30]+reasoning", r.completion)
					}
					if api.api != "tgi" || stream {
						if r.prompt != prompt {
							t.Errorf("prompt tokens %d, want %d", r.prompt, prompt)
						}
					}
					wantFinish := finishNames[api.api][0]
					if tc.wantLength {
						wantFinish = finishNames[api.api][1]
					}
					if r.finish != wantFinish {
						t.Errorf("finish %q, want %q", r.finish, wantFinish)
					}
					if r.content != "" && strings.HasPrefix(r.content, " ") {
						t.Errorf("content starts with a space: %q", r.content)
					}
				})
			}
		}
	}
}

// TestChatStreamShape pins the vLLM chunk sequence: a role-only first
// chunk, content chunks, finish_reason on the last, a usage-only chunk,
// then [DONE].
func TestChatStreamShape(t *testing.T) {
	base := startServer(t, testOptions())
	r, evs := textAPIs[0].call(t, base, true, map[string]any{"max": 3, "ignore_eos": true})
	if len(evs) != 1+3+1+1 {
		t.Fatalf("%d events, want role + 3 content + usage + [DONE]", len(evs))
	}
	first := jsonOf(t, evs[0].data)
	if path(first, "choices.0.delta.role") != "assistant" || path(first, "choices.0.delta.content") != "" {
		t.Errorf("first chunk %s is not role-only", evs[0].data)
	}
	if first["object"] != "chat.completion.chunk" {
		t.Errorf("object %v", first["object"])
	}
	for i := 1; i <= 2; i++ {
		if f := path(jsonOf(t, evs[i].data), "choices.0.finish_reason"); f != nil {
			t.Errorf("chunk %d has finish_reason %v", i, f)
		}
	}
	usage := jsonOf(t, evs[4].data)
	if ch, _ := usage["choices"].([]any); len(ch) != 0 || usage["usage"] == nil {
		t.Errorf("usage chunk %s", evs[4].data)
	}
	if evs[5].data != "[DONE]" || r.tokenEvents != 3 {
		t.Errorf("last event %q, token events %d", evs[5].data, r.tokenEvents)
	}
	// Without include_usage there is no usage chunk.
	resp := post(t, base+"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"stream":true,"max_tokens":2,"ignore_eos":true}`)
	evs, _ = readSSE(resp.Body)
	resp.Body.Close()
	for _, e := range evs {
		if strings.Contains(e.data, `"usage"`) {
			t.Errorf("usage sent without include_usage: %s", e.data)
		}
	}
}

// TestAnthropicAndResponsesEventOrder checks the block/item framing with
// reasoning, text and a tool call.
func TestAnthropicAndResponsesEventOrder(t *testing.T) {
	o := testOptions()
	o.ReasoningTokens = 2
	base := startServer(t, o)
	names := func(evs []sseEv) string {
		var s []string
		for _, e := range evs {
			s = append(s, e.name)
		}
		return strings.Join(s, ",")
	}
	_, evs := textAPIs[3].call(t, base, true, map[string]any{"max": 4, "ignore_eos": true})
	want := "message_start,ping,content_block_start,content_block_delta,content_block_delta,content_block_delta,content_block_stop," +
		"content_block_start,content_block_delta,content_block_delta,content_block_stop,message_delta,message_stop"
	if got := names(evs); got != want {
		t.Errorf("anthropic events:\n got %s\nwant %s", got, want)
	}
	_, evs = textAPIs[2].call(t, base, true, map[string]any{"max": 4, "ignore_eos": true})
	want = "response.created,response.in_progress,response.output_item.added,response.content_part.added," +
		"response.reasoning_text.delta,response.reasoning_text.delta,response.reasoning_text.done,response.content_part.done,response.output_item.done," +
		"response.output_item.added,response.content_part.added,response.output_text.delta,response.output_text.delta," +
		"response.output_text.done,response.content_part.done,response.output_item.done,response.completed"
	if got := names(evs); got != want {
		t.Errorf("responses events:\n got %s\nwant %s", got, want)
	}
	for i, e := range evs {
		if n := num(jsonOf(t, e.data)["sequence_number"]); n != i {
			t.Errorf("event %d has sequence_number %d", i, n)
		}
	}
}

func TestDeterminism(t *testing.T) {
	o := testOptions()
	o.Seed = 7
	a := startServer(t, o)
	b := startServer(t, o)
	o.Seed = 8
	c := startServer(t, o)
	for _, api := range textAPIs {
		t.Run(api.api, func(t *testing.T) {
			x := map[string]any{}
			r1, _ := api.call(t, a, true, x)
			// Other requests in between must not change the answer.
			api.call(t, b, true, map[string]any{"max": 3})
			r2, _ := api.call(t, b, true, x)
			r3, _ := api.call(t, a, false, x)
			r4, _ := api.call(t, c, true, x)
			if r1.content != r2.content || r1.completion != r2.completion {
				t.Errorf("same seed, same request: %q vs %q", r1.content, r2.content)
			}
			if api.api != "tgi" && r3.content != r1.content {
				t.Errorf("streaming and non-streaming differ: %q vs %q", r1.content, r3.content)
			}
			if r4.content == r1.content {
				t.Errorf("seeds 7 and 8 gave the same text %q", r1.content)
			}
		})
	}
}

func TestTokensPerChunk(t *testing.T) {
	for _, k := range []int{1, 3, 8} {
		t.Run(fmt.Sprint(k), func(t *testing.T) {
			o := testOptions()
			o.TokensPerChunk = k
			o.ReasoningTokens = 4
			base := startServer(t, o)
			for _, api := range textAPIs {
				r, evs := api.call(t, base, true, map[string]any{"max": 14, "ignore_eos": true})
				wantR, wantC := 0, 14
				if reasoningAPIs[api.api] {
					wantR, wantC = 4, 10
				}
				want := (wantR+k-1)/k + (wantC+k-1)/k
				if r.tokenEvents != want {
					t.Errorf("%s: %d token events, want %d", api.api, r.tokenEvents, want)
				}
				// Every event but the last of each kind carries k tokens.
				if api.api == "chat" {
					for _, i := range r.eventTimes {
						d := path(jsonOf(t, evs[i].data), "choices.0.delta").(map[string]any)
						text := str(d["content"]) + str(d["reasoning_content"])
						if n := fakeTok.Count(strings.TrimPrefix(text, " ")); n > k {
							t.Errorf("event %q has %d tokens, want at most %d", text, n, k)
						}
					}
				}
			}
		})
	}
}

func TestRoutesAndErrors(t *testing.T) {
	o := testOptions()
	base := startServer(t, o)
	cases := []struct {
		method, path, body string
		hdr                []string
		code               int
		errPath            string // JSON path that must be a non-empty string
	}{
		{"GET", "/nope", "", nil, 404, "error.message"},
		{"POST", "/v1/chat/completions/x", "{}", nil, 404, "error.message"},
		{"GET", "/v1/chat/completions", "", nil, 405, "error.message"},
		{"POST", "/v1/chat/completions", "{", nil, 400, "error.message"},
		{"POST", "/v1/chat/completions", "", nil, 400, "error.message"},
		{"POST", "/v1/chat/completions", `{"messages":[]}`, nil, 400, "error.message"},
		{"POST", "/v1/chat/completions", `{"messages":"hi"}`, nil, 400, "error.message"},
		{"POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":5}]}`, nil, 400, "error.message"},
		{"POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"max_tokens":0}`, nil, 400, "error.message"},
		{"POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"max_tokens":-3}`, nil, 400, "error.message"},
		{"POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"max_tokens":"many"}`, nil, 400, "error.message"},
		{"POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"max_tokens":5,"min_tokens":9}`, nil, 400, "error.message"},
		{"POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"n":2}`, nil, 400, "error.message"},
		{"POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}]} {}`, nil, 400, "error.message"},
		{"POST", "/v1/completions", `{"model":"m"}`, nil, 400, "error.message"},
		{"POST", "/v1/completions", `{"prompt":{"a":1}}`, nil, 400, "error.message"},
		{"POST", "/v1/responses", `{"model":"m"}`, nil, 400, "error.message"},
		{"POST", "/v1/responses", `{"input":5}`, nil, 400, "error.message"},
		{"POST", "/v1/messages", `{"messages":[{"role":"user","content":"x"}],"max_tokens":5}`, nil, 400, "error.message"},
		{"POST", "/v1/messages", `{"messages":[{"role":"user","content":"x"}]}`, []string{"anthropic-version", "2023-06-01"}, 400, "error.message"},
		{"POST", "/generate", `{"parameters":{}}`, nil, 400, "error"},
		{"POST", "/generate_stream", `[1]`, nil, 400, "error"},
		{"POST", "/v1/embeddings", `{"model":"m"}`, nil, 400, "error.message"},
		{"POST", "/v1/embeddings", `{"input":"x","input_type":"banana"}`, nil, 400, "error.message"},
		{"POST", "/v1/embeddings", `{"input":"x","encoding_format":"hex"}`, nil, 400, "error.message"},
		{"POST", "/v1/ranking", `{"passages":[{"text":"a"}]}`, nil, 400, "detail"},
		{"POST", "/v1/ranking", `{"query":{"text":"q"},"passages":[]}`, nil, 400, "detail"},
		{"POST", "/rerank", `{"query":"q"}`, nil, 400, "error"},
		{"POST", "/v2/rerank", `{"query":"q","documents":[5]}`, nil, 400, "message"},
		{"POST", "/v1/images/generations", `{"n":1}`, nil, 400, "error.message"},
		{"POST", "/v1/images/generations", `{"prompt":"p","size":"big"}`, nil, 400, "error.message"},
		{"POST", "/v1/images/generations", `{"prompt":"p","n":11}`, nil, 400, "error.message"},
		{"POST", "/v1/images/generations", `{"prompt":"p","response_format":"gif"}`, nil, 400, "error.message"},
		{"GET", "/v1/images/content/zzz.png", "", nil, 404, "error.message"},
	}
	for _, tc := range cases {
		t.Run(tc.method+" "+tc.path+" "+tc.body, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, base+tc.path, strings.NewReader(tc.body))
			for i := 0; i+1 < len(tc.hdr); i += 2 {
				req.Header.Set(tc.hdr[i], tc.hdr[i+1])
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.code {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.code, b)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("content type %q", ct)
			}
			if msg := str(path(jsonOf(t, string(b)), tc.errPath)); msg == "" {
				t.Errorf("no error message at %s in %s", tc.errPath, b)
			}
		})
	}
}

func TestModelsHealthMetrics(t *testing.T) {
	o := testOptions()
	o.Model = "my-model"
	base := startServer(t, o)
	get := func(p string) (int, string) {
		resp, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := get("/v1/models")
	if code != 200 || path(jsonOf(t, body), "data.0.id") != "my-model" || jsonOf(t, body)["object"] != "list" {
		t.Errorf("models: %d %s", code, body)
	}
	if code, body = get("/health"); code != 200 {
		t.Errorf("health: %d %s", code, body)
	}
	textAPIs[0].call(t, base, true, map[string]any{"max": 5, "ignore_eos": true})
	textAPIs[0].call(t, base, false, map[string]any{"max": 5, "ignore_eos": true})
	code, body = get("/metrics")
	if code != 200 {
		t.Fatalf("metrics: %d", code)
	}
	for _, want := range []string{
		"mockllm_requests_running 0", "mockllm_requests_waiting 0",
		`mockllm_requests_total{endpoint="chat"} 2`,
		"mockllm_generation_tokens_total 10",
		"mockllm_emit_lag_seconds_count 6",
		`mockllm_emit_lag_seconds{quantile="0.99"}`,
		"vllm:num_requests_running 0",
		"# TYPE mockllm_emit_lag_seconds summary",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q:\n%s", want, body)
		}
	}
	// Every sample line is "name{labels} value" with a numeric value.
	for _, line := range strings.Split(strings.TrimSpace(body), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		var v float64
		if len(f) != 2 || func() bool { _, err := fmt.Sscan(f[1], &v); return err != nil }() {
			t.Errorf("bad sample line %q", line)
		}
	}
}
