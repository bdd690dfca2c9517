package mockllm

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// result is what a client gathers from one response of any API.
type result struct {
	reasoning, content string
	toolName, toolArgs string
	prompt, completion int // usage
	reasoningTokens    int
	hasUsage           bool
	finish             string
	done               bool // the API's end marker was seen
	tokenEvents        int  // events that carried reasoning, content or tool text
	errorEvent         bool
	eventTimes         []int // indexes into evs of token events
}

// collectStream folds the SSE events of one API into a result.
func collectStream(t *testing.T, api string, evs []sseEv) result {
	t.Helper()
	var r result
	for i, e := range evs {
		if e.name == "error" {
			r.errorEvent = true
			continue
		}
		if e.data == "[DONE]" {
			r.done = true
			continue
		}
		m := jsonOf(t, e.data)
		before := len(r.reasoning) + len(r.content) + len(r.toolName) + len(r.toolArgs)
		switch api {
		case "chat", "completions":
			if u, ok := m["usage"].(map[string]any); ok {
				r.hasUsage = true
				r.prompt, r.completion = num(u["prompt_tokens"]), num(u["completion_tokens"])
				r.reasoningTokens = num(path(u, "completion_tokens_details.reasoning_tokens"))
			}
			if f := str(path(m, "choices.0.finish_reason")); f != "" {
				r.finish = f
			}
			if api == "completions" {
				r.content += str(path(m, "choices.0.text"))
				break
			}
			d, _ := path(m, "choices.0.delta").(map[string]any)
			r.reasoning += str(d["reasoning_content"])
			r.content += str(d["content"])
			r.toolName += str(path(d, "tool_calls.0.function.name"))
			r.toolArgs += str(path(d, "tool_calls.0.function.arguments"))
		case "responses":
			if e.name != str(m["type"]) {
				t.Fatalf("responses: event %q carries type %q", e.name, m["type"])
			}
			switch e.name {
			case "response.reasoning_text.delta":
				r.reasoning += str(m["delta"])
			case "response.output_text.delta":
				r.content += str(m["delta"])
			case "response.function_call_arguments.delta":
				r.toolArgs += str(m["delta"])
			case "response.output_item.added":
				if str(path(m, "item.type")) == "function_call" {
					r.toolName += str(path(m, "item.name"))
				}
			case "response.completed":
				r.done = true
				u := path(m, "response.usage").(map[string]any)
				r.hasUsage = true
				r.prompt, r.completion = num(u["input_tokens"]), num(u["output_tokens"])
				r.reasoningTokens = num(path(u, "output_tokens_details.reasoning_tokens"))
				r.finish = str(path(m, "response.status"))
			}
		case "anthropic":
			if e.name != str(m["type"]) {
				t.Fatalf("anthropic: event %q carries type %q", e.name, m["type"])
			}
			switch e.name {
			case "message_start":
				r.prompt = num(path(m, "message.usage.input_tokens"))
			case "content_block_start":
				if str(path(m, "content_block.type")) == "tool_use" {
					r.toolName += str(path(m, "content_block.name"))
				}
			case "content_block_delta":
				d := m["delta"].(map[string]any)
				r.reasoning += str(d["thinking"])
				r.content += str(d["text"])
				r.toolArgs += str(d["partial_json"])
			case "message_delta":
				r.hasUsage = true
				r.completion = num(path(m, "usage.output_tokens"))
				r.finish = str(path(m, "delta.stop_reason"))
			case "message_stop":
				r.done = true
			}
		case "tgi":
			r.content += str(path(m, "token.text"))
			if gt, ok := m["generated_text"].(string); ok {
				r.done = true
				r.hasUsage = true
				r.completion = num(path(m, "details.generated_tokens"))
				r.prompt = num(path(m, "details.input_length"))
				r.finish = str(path(m, "details.finish_reason"))
				if gt != r.content {
					t.Fatalf("tgi: generated_text %q != streamed %q", gt, r.content)
				}
			}
		}
		if len(r.reasoning)+len(r.content)+len(r.toolName)+len(r.toolArgs) > before {
			r.tokenEvents++
			r.eventTimes = append(r.eventTimes, i)
		}
	}
	return r
}

// collectBody reads a non-streaming body of one API into a result.
func collectBody(t *testing.T, api, body string) result {
	t.Helper()
	var r result
	r.done = true
	if api == "tgi" {
		m := jsonOf(t, body)
		r.content = str(m["generated_text"])
		r.completion = num(path(m, "details.generated_tokens"))
		r.finish = str(path(m, "details.finish_reason"))
		toks, _ := path(m, "details.tokens").([]any)
		var sb strings.Builder
		for _, tk := range toks {
			sb.WriteString(str(path(tk, "text")))
		}
		if sb.String() != r.content {
			t.Fatalf("tgi: details.tokens spell %q, generated_text is %q", sb.String(), r.content)
		}
		r.hasUsage = true
		return r
	}
	m := jsonOf(t, body)
	switch api {
	case "chat", "completions":
		u := m["usage"].(map[string]any)
		r.prompt, r.completion = num(u["prompt_tokens"]), num(u["completion_tokens"])
		r.reasoningTokens = num(path(u, "completion_tokens_details.reasoning_tokens"))
		r.finish = str(path(m, "choices.0.finish_reason"))
		if api == "completions" {
			r.content = str(path(m, "choices.0.text"))
		} else {
			r.content = str(path(m, "choices.0.message.content"))
			r.reasoning = str(path(m, "choices.0.message.reasoning_content"))
			r.toolName = str(path(m, "choices.0.message.tool_calls.0.function.name"))
			r.toolArgs = str(path(m, "choices.0.message.tool_calls.0.function.arguments"))
		}
	case "responses":
		if m["object"] != "response" {
			t.Fatalf("responses: object %v", m["object"])
		}
		for _, it := range m["output"].([]any) {
			switch str(path(it, "type")) {
			case "reasoning":
				r.reasoning += str(path(it, "content.0.text"))
			case "message":
				r.content += str(path(it, "content.0.text"))
			case "function_call":
				r.toolName, r.toolArgs = str(path(it, "name")), str(path(it, "arguments"))
			}
		}
		u := m["usage"].(map[string]any)
		r.prompt, r.completion = num(u["input_tokens"]), num(u["output_tokens"])
		r.reasoningTokens = num(path(u, "output_tokens_details.reasoning_tokens"))
		r.finish = str(m["status"])
	case "anthropic":
		for _, blk := range m["content"].([]any) {
			switch str(path(blk, "type")) {
			case "thinking":
				r.reasoning += str(path(blk, "thinking"))
			case "text":
				r.content += str(path(blk, "text"))
			case "tool_use":
				r.toolName = str(path(blk, "name"))
				in, _ := json.Marshal(path(blk, "input"))
				r.toolArgs = string(in)
			}
		}
		r.prompt = num(path(m, "usage.input_tokens"))
		r.completion = num(path(m, "usage.output_tokens"))
		r.finish = str(m["stop_reason"])
	}
	r.hasUsage = true
	return r
}

// apiCase describes how to call one text API.
type apiCase struct {
	api, path string
	hdr       []string
	body      func(stream bool, extra map[string]any) map[string]any
}

var msgs = []map[string]any{{"role": "system", "content": "hello"}, {"role": "user", "content": []map[string]any{{"type": "text", "text": "world wide"}}}}

var textAPIs = []apiCase{
	{"chat", "/v1/chat/completions", nil, func(stream bool, x map[string]any) map[string]any {
		b := map[string]any{"model": "m", "messages": msgs, "stream": stream, "stream_options": map[string]any{"include_usage": true}}
		return merge(b, x, "max_completion_tokens")
	}},
	{"completions", "/v1/completions", nil, func(stream bool, x map[string]any) map[string]any {
		b := map[string]any{"model": "m", "prompt": "hello world wide", "stream": stream, "stream_options": map[string]any{"include_usage": true}}
		return merge(b, x, "max_tokens")
	}},
	{"responses", "/v1/responses", nil, func(stream bool, x map[string]any) map[string]any {
		b := map[string]any{"model": "m", "instructions": "hello", "input": []map[string]any{{"role": "user", "content": []map[string]any{{"type": "input_text", "text": "world wide"}}}}, "stream": stream}
		return merge(b, x, "max_output_tokens")
	}},
	{"anthropic", "/v1/messages", []string{"anthropic-version", "2023-06-01"}, func(stream bool, x map[string]any) map[string]any {
		b := map[string]any{"model": "m", "system": "hello", "messages": []map[string]any{{"role": "user", "content": "world wide"}}, "stream": stream, "max_tokens": 4096}
		return merge(b, x, "max_tokens")
	}},
	{"tgi", "/generate", nil, func(stream bool, x map[string]any) map[string]any {
		b := map[string]any{"inputs": "hello world wide", "parameters": map[string]any{}}
		if v, ok := x["max"]; ok {
			b["parameters"] = map[string]any{"max_new_tokens": v}
		}
		return merge(b, x, "")
	}},
}

// merge adds extra fields; "max" becomes the API's max-tokens field.
func merge(b, x map[string]any, maxField string) map[string]any {
	for k, v := range x {
		if k == "max" {
			if maxField != "" {
				b[maxField] = v
			}
			continue
		}
		b[k] = v
	}
	return b
}

func (c apiCase) url(base string, stream bool) string {
	if c.api == "tgi" && stream {
		return base + "/generate_stream"
	}
	return base + c.path
}

// call runs one request of an API and collects its result.
func (c apiCase) call(t *testing.T, base string, stream bool, extra map[string]any) (result, []sseEv) {
	t.Helper()
	resp := post(t, c.url(base, stream), c.body(stream, extra), c.hdr...)
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s: status %d: %s", c.api, resp.StatusCode, b)
	}
	if !stream {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return collectBody(t, c.api, string(b)), nil
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("%s: content type %q", c.api, ct)
	}
	evs, err := readSSE(resp.Body)
	if err != nil {
		t.Fatalf("%s: reading stream: %v", c.api, err)
	}
	return collectStream(t, c.api, evs), evs
}
