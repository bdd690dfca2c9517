package endpoint

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// chatChunk is a typical vLLM streaming chunk (one token of content).
const chatChunk = `{"id":"chatcmpl-5b1e3a7c2d4f4e8f9a0b1c2d3e4f5a6b","object":"chat.completion.chunk","created":1722880000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":{"content":" Paris"},"logprobs":null,"finish_reason":null}]}`

// result is what a whole stream or body adds up to.
type result struct {
	content, reasoning string
	usage              Usage
	done               bool
	items              int
	errMsg             string
	contentEvents      int // events with content or reasoning (AIPerf's content responses)
}

func u(prompt, completion, total, reasoning, cached int, has UsageField) Usage {
	return Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: total, ReasoningTokens: reasoning, CachedPromptTokens: cached, Has: has}
}

const (
	pct  = UsagePrompt | UsageCompletion | UsageTotal
	pctr = pct | UsageReasoning
	all  = pctr | UsageCachedPrompt
)

// streamCases are real-world shaped streams from each server family (testdata/streams).
var streamCases = []struct {
	file, endpoint string
	want           result
}{
	{"vllm_chat_usage.sse", "chat", result{content: "The capital of France is Paris — café 😀.", usage: u(42, 9, 51, 0, 0, pct), done: true, contentEvents: 7}},
	{"vllm_chat_reasoning.sse", "chat", result{content: "\n\nHi!", reasoning: "Okay, the user asks.\n", usage: u(10, 12, 22, 7, 0, pctr), done: true, contentEvents: 6}},
	{"vllm_chat_reasoning_field.sse", "chat", result{content: "42", reasoning: "Let me think step by step.", done: true, contentEvents: 3}},
	{"sglang_chat.sse", "chat", result{content: "Bonjour à tous", reasoning: "Hmm", usage: u(17, 9, 26, 0, 16, all), done: true, contentEvents: 3}},
	{"openai_chat_tools_crlf.sse", "chat", result{content: `get_weather{"location":"Paris, France"}`, usage: u(81, 17, 98, 0, 64, all|UsagePromptAudio|UsageCompletionAudio), done: true, contentEvents: 6}},
	{"vllm_completions.sse", "completions", result{content: " is a city in\n", usage: u(4, 5, 9, 0, 0, pct), done: true, contentEvents: 5}},
	{"anthropic_thinking.sse", "anthropic_messages", result{content: "27 * 453 = **12,231**", reasoning: "Let me solve this. 27 * 453 = 12231", usage: u(2520, 86, 0, 0, 2048, UsagePrompt|UsageCompletion|UsageCachedPrompt), done: true, contentEvents: 4}},
	{"anthropic_tool_use.sse", "anthropic_messages", result{content: `Checking.get_weather{"location": "San Francisco, CA"}`, usage: u(472, 89, 0, 0, 0, UsagePrompt|UsageCompletion), done: true, contentEvents: 4}},
	{"anthropic_error.sse", "anthropic_messages", result{usage: u(10, 1, 0, 0, 0, UsagePrompt|UsageCompletion), errMsg: "Overloaded"}},
	{"tgi_generate_stream.sse", "huggingface_generate", result{content: "Deep learning is", usage: u(7, 4, 0, 0, 0, UsagePrompt|UsageCompletion), done: true, contentEvents: 3}},
	{"openai_responses_text.sse", "responses", result{content: "Hi there!", usage: u(37, 11, 48, 0, 0, all), done: true, contentEvents: 2}},
	{"vllm_responses_reasoning_tools.sse", "responses", result{content: `get_weather{"city":"Oslo"}`, reasoning: "The user wants weather.", usage: u(120, 30, 150, 18, 96, all), done: true, contentEvents: 5}},
	{"vllm_chat_error_cr.sse", "chat", result{content: "Par", errMsg: "The model ran out of KV cache blocks", done: true, contentEvents: 1}},
}

// bodyCases are whole non-streaming bodies (testdata/bodies).
var bodyCases = []struct {
	file, endpoint string
	want           result
}{
	{"vllm_chat_completion.json", "chat", result{content: "Hello! How can I help?", reasoning: "Simple greeting.", usage: u(9, 16, 25, 0, 0, pct), done: true}},
	{"openai_chat_tool_calls.json", "chat", result{content: "get_current_weather{\n\"location\": \"Boston, MA\"\n}", usage: u(82, 17, 99, 0, 0, pctr), done: true}},
	{"vllm_completion.json", "completions", result{content: " San Francisco is a city in California.", usage: u(5, 8, 13, 0, 0, pct)}},
	{"openai_response.json", "responses", result{content: `Under the soft glow of the moon, Luna the unicorn danced.save_story{"title":"Luna"}`, reasoning: "**Planning** the answer.", usage: u(36, 87, 123, 64, 0, all), done: true}},
	{"anthropic_message.json", "anthropic_messages", result{content: `Hello!lookup{"q": "hi"}`, reasoning: "The user wants a greeting.", usage: u(162, 30, 0, 0, 50, UsagePrompt|UsageCompletion|UsageCachedPrompt), done: true}},
	{"tgi_generate.json", "huggingface_generate", result{content: "Deep learning is a subset of machine learning", usage: u(0, 9, 0, 0, 0, UsageCompletion), done: true}},
	{"tgi_generate_array.json", "huggingface_generate", result{content: " a test", done: true}},
	{"openai_embeddings.json", "embeddings", result{items: 2, usage: u(8, 0, 8, 0, 0, UsagePrompt|UsageTotal), done: true}},
	{"openai_embeddings.json", "nim_embeddings", result{items: 2, usage: u(8, 0, 8, 0, 0, UsagePrompt|UsageTotal), done: true}},
	{"nim_rankings.json", "nim_rankings", result{items: 3, usage: u(60, 0, 60, 0, 0, UsagePrompt|UsageTotal), done: true}},
	{"tei_rerank.json", "hf_tei_rankings", result{items: 2, done: true}},
	{"cohere_rerank.json", "cohere_rankings", result{items: 3, usage: u(120, 0, 0, 0, 0, UsagePrompt|UsageCompletion), done: true}},
	{"openai_image.json", "image_generation", result{items: 1, usage: u(50, 50, 100, 0, 0, pct), done: true}},
	{"vllm_error.json", "chat", result{errMsg: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens."}},
	{"vllm_error_legacy.json", "completions", result{errMsg: "The model `foo` does not exist."}},
	{"tgi_error.json", "huggingface_generate", result{errMsg: "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096"}},
	{"tgi_error.json", "hf_tei_rankings", result{errMsg: "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096"}},
	{"anthropic_error.json", "anthropic_messages", result{errMsg: "max_tokens: Field required"}},
	{"vllm_error.json", "embeddings", result{errMsg: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens."}},
}

func readTestdata(t testing.TB, dir, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", dir, file))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// parseStream frames the stream with SSEScanner, fed in reads of readSize bytes, and
// parses every event into one accumulating Delta (and a per-event one for counting).
func parseStream(t testing.TB, ep *Endpoint, stream []byte, readSize int) result {
	t.Helper()
	var sc SSEScanner
	var total, one Delta
	var r result
	handle := func(e Event) {
		one.Reset()
		if err := ep.ParseEvent(e.Data, &one); err != nil {
			t.Fatalf("event %q: %v", e.Data, err)
		}
		if one.HasContent() {
			r.contentEvents++
		}
		if err := ep.ParseEvent(e.Data, &total); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < len(stream); i += readSize {
		sc.Feed(stream[i:min(i+readSize, len(stream))], i)
		for {
			e, ok := sc.Next()
			if !ok {
				break
			}
			handle(e)
		}
	}
	for {
		e, ok := sc.Flush()
		if !ok {
			break
		}
		handle(e)
	}
	r.content, r.reasoning, r.usage, r.done, r.items, r.errMsg = string(total.Content), string(total.Reasoning), total.Usage, total.Done, total.Items, total.ErrorMsg
	return r
}

func TestParseStreams(t *testing.T) {
	for _, tc := range streamCases {
		t.Run(tc.file, func(t *testing.T) {
			stream := readTestdata(t, "streams", tc.file)
			for _, name := range []string{tc.endpoint, "raw"} {
				ep, err := Lookup(name)
				if err != nil {
					t.Fatal(err)
				}
				for _, rs := range []int{1, 7, 64, len(stream)} {
					if got := parseStream(t, ep, stream, rs); got != tc.want {
						t.Fatalf("%s, reads of %d bytes:\n got %+v\nwant %+v", name, rs, got, tc.want)
					}
				}
			}
		})
	}
}

func TestParseBodies(t *testing.T) {
	for _, tc := range bodyCases {
		t.Run(tc.endpoint+"/"+tc.file, func(t *testing.T) {
			body := readTestdata(t, "bodies", tc.file)
			for _, name := range []string{tc.endpoint, "raw"} {
				ep, _ := Lookup(name)
				var d Delta
				if err := ep.ParseEvent(body, &d); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				got := result{content: string(d.Content), reasoning: string(d.Reasoning), usage: d.Usage, done: d.Done, items: d.Items, errMsg: d.ErrorMsg}
				want := tc.want
				if name == "raw" && tc.endpoint == "completions" && want.errMsg == "" {
					want.done = false
				}
				if got != want {
					t.Fatalf("%s:\n got %+v\nwant %+v", name, got, want)
				}
			}
		})
	}
}

// TestParseEvents covers single-event details and the error shapes.
func TestParseEvents(t *testing.T) {
	cases := []struct {
		endpoint, field, in string
		want                result
		err                 string // error prefix; "" = none
	}{
		// Empty deltas: role-only, empty content, usage-only, finish-only, null choices.
		{"chat", "", `{"choices":[{"index":0,"delta":{"role":"assistant"}}]}`, result{}, ""},
		{"chat", "", `{"choices":[{"index":0,"delta":{"content":""},"finish_reason":"stop"}]}`, result{}, ""},
		{"chat", "", `{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`, result{usage: u(1, 2, 3, 0, 0, pct)}, ""},
		{"chat", "", `{"choices":[{"index":0,"delta":{}}],"usage":null}`, result{}, ""},
		{"chat", "", `{"usage":{"prompt_tokens":5}}`, result{usage: u(5, 0, 0, 0, 0, UsagePrompt)}, ""},
		{"chat", "", ` [DONE] `, result{done: true}, ""},
		// reasoning_content wins over reasoning unless empty; content and tool calls both count.
		{"chat", "", `{"choices":[{"delta":{"reasoning":"b","reasoning_content":"a"}}]}`, result{reasoning: "a"}, ""},
		{"chat", "", `{"choices":[{"delta":{"reasoning_content":"","reasoning":"b"}}]}`, result{reasoning: "b"}, ""},
		{"chat", "", `{"choices":[{"delta":{"content":"x","tool_calls":[{"function":{"name":"f","arguments":"{}"}},{"function":{"arguments":"[]"}}]}}]}`, result{content: "xf{}[]"}, ""},
		// Only choices[0] counts.
		{"chat", "", `{"choices":[{"delta":{"content":"a"}},{"delta":{"content":"b"}}]}`, result{content: "a"}, ""},
		// Escapes: surrogate pair, lone surrogate, escaped quote, raw UTF-8, invalid UTF-8.
		{"chat", "", `{"choices":[{"delta":{"content":"\ud83d\ude80 \"q\" \ud800 日本 \u00e9"}}]}`, result{content: "🚀 \"q\" \uFFFD 日本 é"}, ""},
		{"chat", "", "{\"choices\":[{\"delta\":{\"content\":\"a\xffb\"}}]}", result{content: "a\uFFFDb"}, ""},
		// Escaped key names are matched after unescaping.
		{"chat", "", `{"choices":[{"delta":{"cont\u0065nt":"k"}}]}`, result{content: "k"}, ""},
		// Errors as data, not parse errors.
		{"chat", "", `{"error":"plain string"}`, result{errMsg: "plain string"}, ""},
		{"chat", "", `{"error":{"code":500}}`, result{errMsg: `{"code":500}`}, ""},
		{"chat", "", `{"object":"error","message":"bad","code":400}`, result{errMsg: "bad"}, ""},
		// Shape errors name the endpoint.
		{"chat", "", `{"foo":1}`, result{}, `endpoint chat: unexpected response shape: missing "choices"`},
		{"chat", "", `[1,2]`, result{}, `endpoint chat: unexpected response shape: expected a JSON object`},
		{"chat", "", `{"choices":[{"delta":{"content":"x"}}]`, result{}, `endpoint chat: invalid JSON at byte`},
		{"chat", "", `{"choices":[{"delta":{"content":"x"}}]} trailing`, result{}, `endpoint chat: invalid JSON at byte 40: data after top-level value`},
		{"chat", "", ``, result{}, `endpoint chat: invalid JSON at byte 0: unexpected end of input`},
		{"completions", "", `{"choices":[{"text":"t"}]}`, result{content: "t"}, ""},
		{"completions", "", `{"text":"t"}`, result{}, `endpoint completions: unexpected response shape: missing "choices"`},
		// Another API's body (it carries "usage" too) is not a usage-only chunk; nor is a
		// choice of the other OpenAI dialect. Usage-only chunks without choices still parse.
		{"chat", "", `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1]}],"usage":{"prompt_tokens":3,"total_tokens":3}}`, result{}, `endpoint chat: unexpected response shape: missing "choices" (has "data": another API's response)`},
		{"completions", "", `{"created":1,"data":[{"b64_json":"AA=="}],"usage":{"input_tokens":3,"output_tokens":1,"total_tokens":4}}`, result{}, `endpoint completions: unexpected response shape: missing "choices" (has "data": another API's response)`},
		{"completions", "", `{"id":"r","object":"response","status":"completed","usage":{"input_tokens":3,"output_tokens":1,"total_tokens":4}}`, result{}, `endpoint completions: unexpected response shape: missing "choices" (object is not a chat.completion, chat.completion.chunk or text_completion)`},
		{"chat", "", `{"type":"message","role":"assistant","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":3,"output_tokens":1}}`, result{}, `endpoint chat: unexpected response shape: missing "choices" (has "type": another API's response)`},
		{"chat", "", `{"object":"text_completion","choices":[{"index":0,"text":"t"}]}`, result{}, `endpoint chat: unexpected response shape: choices[0] has "text", not "message" or "delta" (a completions response)`},
		{"completions", "", `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"t"}}]}`, result{}, `endpoint completions: unexpected response shape: choices[0] has "message" or "delta", not "text" (a chat response)`},
		{"completions", "", `{"object":"text_completion","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`, result{usage: u(1, 2, 3, 0, 0, pct)}, ""},
		{"chat", "", `{"id":"x","object":"chat.completion.chunk","usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`, result{usage: u(1, 2, 3, 0, 0, pct)}, ""},
		{"raw", "", `{"object":"list","data":[{"index":0}],"usage":{"prompt_tokens":3,"total_tokens":3}}`, result{items: 1, done: true, usage: u(3, 0, 3, 0, 0, UsagePrompt|UsageTotal)}, ""},
		{"responses", "", `{"type":"response.output_text.delta","delta":"d"}`, result{content: "d"}, ""},
		{"responses", "", `{"delta":"r","type":"response.reasoning_summary_text.delta"}`, result{reasoning: "r"}, ""},
		{"responses", "", `{"type":"response.output_text.done","text":"whole"}`, result{}, ""},
		{"responses", "", `{"type":"response.output_item.done","item":{"type":"function_call","name":"f","arguments":"{}"}}`, result{}, ""},
		{"responses", "", `{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"boom"},"usage":null}}`, result{done: true, errMsg: "boom"}, ""},
		{"responses", "", `{"type":"error","code":"ERR_SOMETHING","message":"Something went wrong","param":null,"sequence_number":1}`, result{errMsg: "Something went wrong"}, ""},
		{"responses", "", `{"id":"x"}`, result{}, `endpoint responses: unexpected response shape: missing "type" or "output"`},
		{"anthropic_messages", "", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`, result{content: "hi"}, ""},
		{"anthropic_messages", "", `{"type":"ping"}`, result{}, ""},
		{"anthropic_messages", "", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":10,"cache_read_input_tokens":5,"output_tokens":7}}`, result{usage: u(15, 7, 0, 0, 5, UsagePrompt|UsageCompletion|UsageCachedPrompt)}, ""},
		// Token counts beyond int saturate (Go's conversion of an out-of-range float is
		// undefined; on amd64 1e300 became -9223372036854775808), and so do their sums.
		{"chat", "", `{"usage":{"prompt_tokens":1e300,"completion_tokens":-1e300,"total_tokens":99999999999999999999999}}`,
			result{usage: u(math.MaxInt, math.MinInt, math.MaxInt, 0, 0, pct)}, ""},
		{"chat", "", `{"usage":{"prompt_tokens":1e999}}`, result{usage: u(math.MaxInt, 0, 0, 0, 0, UsagePrompt)}, ""},
		{"anthropic_messages", "", `{"type":"message_delta","usage":{"input_tokens":9223372036854775807,"cache_read_input_tokens":5,"cache_creation_input_tokens":9223372036854775807}}`,
			result{usage: u(math.MaxInt, 0, 0, 0, 5, UsagePrompt|UsageCachedPrompt)}, ""},
		{"anthropic_messages", "", `{"delta":{"text":"x"}}`, result{content: "x"}, `endpoint anthropic_messages: unexpected response shape: missing "type"`},
		{"huggingface_generate", "", `{"token":{"id":1,"text":"a","special":false}}`, result{content: "a"}, ""},
		{"huggingface_generate", "", `{"token":{"text":"</s>","special":true},"generated_text":"x","details":null}`, result{done: true}, ""},
		{"huggingface_generate", "", `{"generated":"x"}`, result{}, `endpoint huggingface_generate: unexpected response shape: missing "generated_text" or "token"`},
		{"embeddings", "", `{"data":[]}`, result{done: true}, ""},
		{"embeddings", "", `{"object":"list"}`, result{}, `endpoint embeddings: unexpected response shape: missing "data"`},
		{"nim_rankings", "", `{"results":[1]}`, result{}, `endpoint nim_rankings: unexpected response shape: missing "rankings"`},
		{"hf_tei_rankings", "", `"x"`, result{}, `endpoint hf_tei_rankings: unexpected response shape: expected a JSON array`},
		{"image_generation", "", `{"type":"image_generation.partial_image","b64_json":"AAAA","partial_image_index":0}`, result{}, ""},
		{"image_generation", "", `{"type":"image_generation.completed","b64_json":"AAAA","usage":{"input_tokens":5,"output_tokens":6,"total_tokens":11}}`, result{items: 1, usage: u(5, 6, 11, 0, 0, pct), done: true}, ""},
		{"image_generation", "", `{"created":1}`, result{}, `endpoint image_generation: unexpected response shape: missing "data"`},
		// raw/template with a response field path.
		{"raw", "choices.0.delta.content", chatChunk, result{content: " Paris"}, ""},
		{"raw", "choices.0.delta.content", `{"choices":[],"usage":{"prompt_tokens":3}}`, result{usage: u(3, 0, 0, 0, 0, UsagePrompt)}, ""},
		{"template", "generated_text", `{"generated_text":"g","details":null}`, result{content: "g"}, ""},
		{"template", "data", `{"data":[{},{}]}`, result{items: 2}, ""},
		{"template", "out.n", `{"out":{"n":12.5}}`, result{content: "12.5"}, ""},
		{"template", "out", `{"out":{"n":1}}`, result{}, `endpoint template: unexpected response shape: response field is an object`},
		{"template", "0.text", `[{"text":"a"},{"text":"b"}]`, result{content: "a"}, ""},
		{"template", "1.text", `[{"text":"a"},{"text":"b"}]`, result{content: "b"}, ""},
		{"template", "x", `{"x":"a"`, result{}, `endpoint template: invalid JSON`},
		{"raw", "", `{"weird":true}`, result{}, `endpoint raw: unexpected response shape: unrecognized`},
		{"raw", "", `{"type":"message_stop"}`, result{done: true}, ""},
		{"raw", "", `{"type":"response.completed","response":{"usage":{"input_tokens":1}}}`, result{done: true, usage: u(1, 0, 0, 0, 0, UsagePrompt)}, ""},
		{"raw", "", `[]`, result{done: true}, ""},
		{"raw", "", `3`, result{}, `endpoint raw: unexpected response shape: expected a JSON object or array`},
	}
	for _, tc := range cases {
		ep, err := Lookup(tc.endpoint)
		if err != nil {
			t.Fatal(err)
		}
		ep.ResponseField = tc.field
		var d Delta
		err = ep.ParseEvent([]byte(tc.in), &d)
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("%s %s: err = %v, want prefix %q", tc.endpoint, tc.in, err, tc.err)
			}
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Endpoint != tc.endpoint || !(errors.Is(err, ErrUnexpectedShape) || errors.Is(err, ErrInvalidJSON)) {
				t.Errorf("%s %s: error %v is not a *ParseError for the endpoint", tc.endpoint, tc.in, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %s: %v", tc.endpoint, tc.in, err)
			continue
		}
		got := result{content: string(d.Content), reasoning: string(d.Reasoning), usage: d.Usage, done: d.Done, items: d.Items, errMsg: d.ErrorMsg}
		if got != tc.want {
			t.Errorf("%s %s:\n got %+v\nwant %+v", tc.endpoint, tc.in, got, tc.want)
		}
	}
}

// TestParseZeroAlloc: parsing a chat chunk into a Delta with capacity allocates nothing, for
// every token-producing API type's typical event.
func TestParseZeroAlloc(t *testing.T) {
	cases := []struct{ endpoint, event string }{
		{"chat", chatChunk},
		{"chat", `{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"reasoning_content":"\u00e9t\u00e9 \ud83d\ude00"}}]}`},
		{"chat", `{"id":"x","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3,"completion_tokens_details":{"reasoning_tokens":1}}}`},
		{"chat", `{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":"}}]}}]}`},
		{"completions", `{"object":"text_completion","choices":[{"index":0,"text":" is","logprobs":null,"finish_reason":null}]}`},
		{"responses", `{"content_index":0,"delta":" say","item_id":"04429e29","output_index":0,"sequence_number":11,"type":"response.reasoning_text.delta"}`},
		{"anthropic_messages", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`},
		{"huggingface_generate", `{"index":2,"token":{"id":6975,"text":" learning","logprob":-0.02,"special":false},"generated_text":null,"details":null}`},
		{"raw", chatChunk},
		{"chat", "[DONE]"},
	}
	for _, tc := range cases {
		ep, _ := Lookup(tc.endpoint)
		ev := []byte(tc.event)
		d := Delta{Content: make([]byte, 0, 256), Reasoning: make([]byte, 0, 256)}
		n := testing.AllocsPerRun(200, func() {
			d.Reset()
			if err := ep.ParseEvent(ev, &d); err != nil {
				t.Fatal(err)
			}
		})
		if n != 0 {
			t.Errorf("%s %s: %v allocations per event", tc.endpoint, tc.event, n)
		}
	}
}
