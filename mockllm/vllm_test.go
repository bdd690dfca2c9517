package mockllm

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// Strict validation refuses what vLLM refuses, in vLLM's words and error type, and serves what
// vLLM serves (unknown fields included).
func TestStrictValidation(t *testing.T) {
	o := testOptions()
	o.Strict = true
	base := startServer(t, o)
	lax := startServer(t, testOptions())
	msgs := `"messages":[{"role":"user","content":"hi"}]`
	cases := []struct {
		name, path, body string
		want             string // "" for 200, else a piece of the 400's message
	}{
		{"plain chat", "/v1/chat/completions", `{` + msgs + `,"max_tokens":4}`, ""},
		{"unknown field accepted", "/v1/chat/completions", `{` + msgs + `,"max_tokens":4,"chat_template_kwargs":{"enable_thinking":false},"whatever":1}`, ""},
		{"min_tokens equal to max", "/v1/chat/completions", `{` + msgs + `,"max_tokens":4,"min_tokens":4,"ignore_eos":true}`, ""},
		{"stream with options", "/v1/chat/completions", `{` + msgs + `,"max_tokens":2,"stream":true,"stream_options":{"include_usage":true}}`, ""},
		{"nulls are absent", "/v1/chat/completions", `{` + msgs + `,"max_tokens":null,"temperature":null,"stream_options":null}`, ""},
		{"min_tokens over max_tokens", "/v1/chat/completions", `{` + msgs + `,"max_tokens":2,"min_tokens":128}`, "min_tokens must be less than or equal to max_tokens=2, got 128."},
		{"min_tokens over max_completion_tokens", "/v1/chat/completions", `{` + msgs + `,"max_completion_tokens":2,"min_tokens":3}`, "min_tokens must be less than or equal to max_tokens=2, got 3."},
		{"negative min_tokens", "/v1/completions", `{"prompt":"hi","min_tokens":-1}`, "min_tokens must be greater than or equal to 0, got -1."},
		{"max_tokens 0", "/v1/completions", `{"prompt":"hi","max_tokens":0}`, "max_tokens must be at least 1, got 0."},
		{"negative temperature", "/v1/chat/completions", `{` + msgs + `,"temperature":-0.5}`, "temperature must be non-negative, got -0.5."},
		{"top_p 0", "/v1/chat/completions", `{` + msgs + `,"top_p":0}`, "top_p must be in (0, 1], got 0.0."},
		{"top_k -2", "/v1/chat/completions", `{` + msgs + `,"top_k":-2}`, "top_k must be 0 (disable), or at least 1, got -2."},
		{"presence_penalty 3", "/v1/chat/completions", `{` + msgs + `,"presence_penalty":3}`, "presence_penalty must be in [-2, 2], got 3.0."},
		{"n 0", "/v1/chat/completions", `{` + msgs + `,"n":0}`, "n must be at least 1, got 0."},
		{"stream_options without stream", "/v1/chat/completions", `{` + msgs + `,"stream_options":{"include_usage":true}}`, "Stream options can only be defined when `stream=True`."},
		{"max_tokens a string", "/v1/chat/completions", `{` + msgs + `,"max_tokens":"4"}`, "ChatCompletionRequest: max_tokens: Input should be a valid integer"},
		{"max_tokens fractional", "/v1/completions", `{"prompt":"hi","max_tokens":2.5}`, "CompletionRequest: max_tokens: Input should be a valid integer"},
		{"ignore_eos a string", "/v1/chat/completions", `{` + msgs + `,"ignore_eos":"yes"}`, "ignore_eos: Input should be a valid boolean"},
		{"temperature a string", "/v1/chat/completions", `{` + msgs + `,"temperature":"hot"}`, "temperature: Input should be a valid number"},
		{"stop a number", "/v1/chat/completions", `{` + msgs + `,"stop":5}`, "stop: Input should be a valid string or a list of strings"},
		{"model a number", "/v1/chat/completions", `{"model":5,` + msgs + `}`, "model: Input should be a valid string"},
		{"chat logprobs an int", "/v1/chat/completions", `{` + msgs + `,"logprobs":5}`, "logprobs: Input should be a valid boolean"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := post(t, base+c.path, c.body)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if c.want == "" {
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("status %d, want 200: %s", resp.StatusCode, body)
				}
				return
			}
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", resp.StatusCode, body)
			}
			m := jsonOf(t, string(body))
			if got := str(path(m, "error.message")); !strings.Contains(got, c.want) {
				t.Errorf("message %q, want it to contain %q", got, c.want)
			}
			if got := str(path(m, "error.type")); got != "BadRequestError" {
				t.Errorf("type %q, want BadRequestError", got)
			}
			if got := num(path(m, "error.code")); got != 400 {
				t.Errorf("code %d, want 400", got)
			}
		})
	}
	// Without Strict the mock stays lenient about what it does not read.
	resp := post(t, lax+"/v1/chat/completions", `{`+msgs+`,"temperature":-1,"top_p":0}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("lenient server: status %d, want 200", resp.StatusCode)
	}
}

// With served model names, another model is answered 404 as vLLM does; the served names,
// and no model at all, are served; /v1/models lists the names.
func TestServedModelNames(t *testing.T) {
	o := testOptions()
	o.ServedModelNames = []string{"Qwen/Qwen3-0.6B", "qwen-small"}
	base := startServer(t, o)
	msgs := `"messages":[{"role":"user","content":"hi"}],"max_tokens":2`
	for _, c := range []struct {
		path, model string
		status      int
		echo        string
	}{
		{"/v1/chat/completions", `"Qwen/Qwen3-0.6B"`, 200, "Qwen/Qwen3-0.6B"},
		{"/v1/chat/completions", `"qwen-small"`, 200, "qwen-small"},
		{"/v1/chat/completions", `""`, 200, "Qwen/Qwen3-0.6B"},
		{"/v1/chat/completions", `"Qwen/Qwen3-8B"`, 404, ""},
		{"/v1/completions", `"gpt2"`, 404, ""},
	} {
		body := `{"model":` + c.model + `,` + msgs + `}`
		if c.path == "/v1/completions" {
			body = `{"model":` + c.model + `,"prompt":"hi","max_tokens":2}`
		}
		resp := post(t, base+c.path, body)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s model %s: status %d, want %d: %s", c.path, c.model, resp.StatusCode, c.status, b)
			continue
		}
		m := jsonOf(t, string(b))
		if c.status == 200 {
			if got := str(m["model"]); got != c.echo {
				t.Errorf("model %s: echoed %q, want %q", c.model, got, c.echo)
			}
			continue
		}
		want := "The model `" + strings.Trim(c.model, `"`) + "` does not exist."
		if got := str(path(m, "error.message")); got != want {
			t.Errorf("404 message %q, want %q", got, want)
		}
		if got := str(path(m, "error.type")); got != "NotFoundError" {
			t.Errorf("404 type %q, want NotFoundError", got)
		}
		if got := num(path(m, "error.code")); got != 404 {
			t.Errorf("404 code %d, want 404", got)
		}
	}
	resp, err := http.Get(base + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := jsonOf(t, string(b))
	if a, b := str(path(m, "data.0.id")), str(path(m, "data.1.id")); a != "Qwen/Qwen3-0.6B" || b != "qwen-small" {
		t.Errorf("/v1/models lists %q, %q; want the served names", a, b)
	}
	bad := testOptions()
	bad.ServedModelNames = []string{" "}
	if err := bad.Validate(); err == nil {
		t.Error("an empty served model name was accepted")
	}
}

// With PromptTokensDetails, usage reports the prompt tokens the prefix cache held, as vLLM
// does: absent on a first prompt, then the whole 16-token blocks of a repeated prefix; on the
// Responses API as input_tokens_details.cached_tokens. Without it, nothing is reported.
func TestCachedTokensInUsage(t *testing.T) {
	prefix := strings.Repeat("bak dek fig kol mup ", 8)
	// The tokens the two prompts share, in whole blocks: what a prefix cache can hit.
	a, b := fakeTok.Encode(prefix+"one"), fakeTok.Encode(prefix+"two")
	shared := 0
	for shared < min(len(a), len(b)) && a[shared] == b[shared] {
		shared++
	}
	want := shared / PrefixBlockTokens * PrefixBlockTokens
	if want == 0 {
		t.Fatalf("the prompts share %d tokens: not a whole block", shared)
	}
	for _, enabled := range []bool{true, false} {
		o := testOptions()
		o.PromptTokensDetails = enabled
		base := startServer(t, o)
		chat := func(content string, stream bool) map[string]any {
			body := `{"messages":[{"role":"user","content":"` + content + `"}],"max_tokens":2`
			if !stream {
				return postJSON(t, base+"/v1/chat/completions", body+`}`)
			}
			resp := post(t, base+"/v1/chat/completions", body+`,"stream":true,"stream_options":{"include_usage":true}}`)
			defer resp.Body.Close()
			evs, err := readSSE(resp.Body)
			if err != nil || len(evs) < 2 {
				t.Fatalf("stream: %v, %d events", err, len(evs))
			}
			return jsonOf(t, evs[len(evs)-2].data) // the usage chunk, before [DONE]
		}
		first := chat(prefix+"one", false)
		if d := path(first, "usage.prompt_tokens_details"); d != nil {
			t.Errorf("enabled=%v: first prompt reports details %v, want none (nothing cached yet)", enabled, d)
		}
		second := chat(prefix+"two", true)
		got := path(second, "usage.prompt_tokens_details.cached_tokens")
		if !enabled {
			if got != nil {
				t.Errorf("disabled: cached_tokens %v reported", got)
			}
			continue
		}
		if num(got) != want {
			t.Errorf("repeated prefix: cached_tokens %v, want %d (usage %v)", got, want, path(second, "usage"))
		}
		if p := num(path(second, "usage.prompt_tokens")); p <= num(got) {
			t.Errorf("prompt_tokens %d not above cached_tokens %v", p, got)
		}
		r := postJSON(t, base+"/v1/responses", `{"input":"`+prefix+`three","max_output_tokens":2}`)
		if c := num(path(r, "usage.input_tokens_details.cached_tokens")); c != want {
			t.Errorf("responses: cached_tokens %d, want %d", c, want)
		}
	}
}
