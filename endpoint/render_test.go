package endpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/render")

var convo = []Message{
	{Role: "system", Content: "You are terse."},
	{Role: "user", Content: "Name a \"prime\" number."},
	{Role: "assistant", Content: "7"},
	{Role: "user", Content: "Another one,\tplease.\n"},
}

// renderCases covers every API type and each option that changes the body.
var renderCases = []struct {
	name, endpoint string
	req            Request
}{
	{"chat_basic", "chat", Request{Model: "meta-llama/Llama-3.1-8B-Instruct", Messages: convo[:2], MaxTokens: 128}},
	{"chat_stream_usage", "chat", Request{Model: "m", Messages: convo, MaxTokens: 256, Streaming: true, IncludeUsage: true,
		Extra: map[string]any{"ignore_eos": true, "min_tokens": float64(256), "temperature": 0.0, "top_p": 0.95, "seed": json.Number("42")}}},
	{"chat_legacy_max_tokens", "chat", Request{Model: "m", Messages: convo[1:2], MaxTokens: 10, LegacyMaxTokens: true, Streaming: true}},
	{"chat_prompt_only", "chat", Request{Model: "m", Prompt: "quote\" backslash\\ nl\n tab\t ctl\x01 html<>& ls\u2028 bad\xff é 😀"}},
	{"chat_extra_override", "chat", Request{Model: "m", Messages: convo[1:2], MaxTokens: 10, Streaming: true, IncludeUsage: true,
		Extra: map[string]any{
			"stream": false, "max_completion_tokens": 7, "model": "override",
			"stream_options": map[string]any{"include_usage": false, "continuous_usage_stats": true},
			"tools":          []any{map[string]any{"type": "function", "function": map[string]any{"name": "f", "parameters": map[string]any{"type": "object"}}}},
			"stop":           []string{"</s>", "<|eot_id|>"},
			"nil":            nil,
		}}},
	{"chat_no_model", "chat", Request{Messages: convo[1:2]}},
	{"completions_stream", "completions", Request{Model: "facebook/opt-125m", Prompt: "San Francisco is a", MaxTokens: 32, Streaming: true, IncludeUsage: true}},
	{"completions_from_messages", "completions", Request{Model: "m", Messages: convo, MaxTokens: 5}},
	{"responses_stream", "responses", Request{Model: "gpt-4.1", Messages: convo, MaxTokens: 100, Streaming: true, IncludeUsage: true}},
	{"responses_prompt", "responses", Request{Model: "gpt-4.1", Prompt: "Say hi."}},
	{"anthropic_stream", "anthropic_messages", Request{Model: "claude-sonnet-4-5", Messages: append([]Message{{Role: "system", Content: "Be brief."}}, convo...), MaxTokens: 1024, Streaming: true}},
	{"anthropic_extra_max_tokens", "anthropic_messages", Request{Model: "claude-sonnet-4-5", Prompt: "Hi", Extra: map[string]any{"max_tokens": 64, "thinking": map[string]any{"type": "enabled", "budget_tokens": 1024}}}},
	{"huggingface_generate", "huggingface_generate", Request{Model: "ignored", Prompt: "What is deep learning?", MaxTokens: 64, Streaming: true}},
	{"huggingface_generate_messages", "huggingface_generate", Request{Messages: convo[:2]}},
	{"embeddings_batch", "embeddings", Request{Model: "BAAI/bge-m3", Texts: []string{"alpha", "beta \"b\"", "gamma"}}},
	{"embeddings_single", "embeddings", Request{Model: "BAAI/bge-m3", Prompt: "one text", Extra: map[string]any{"encoding_format": "float"}}},
	{"chat_embeddings", "chat_embeddings", Request{Model: "TIGER-Lab/VLM2Vec-Full", Messages: convo[:2]}},
	{"nim_embeddings_passage", "nim_embeddings", Request{Model: "nvidia/nv-embedqa-e5-v5", Texts: []string{"p1", "p2"}, Extra: map[string]any{"input_type": "passage", "truncate": "END"}}},
	{"nim_rankings", "nim_rankings", Request{Model: "nvidia/nv-rerankqa-mistral-4b-v3", Query: "What is GPU?", Passages: []string{"A GPU is a processor.", "Bananas are yellow."}}},
	{"hf_tei_rankings", "hf_tei_rankings", Request{Model: "ignored", Query: "What is Deep Learning?", Passages: []string{"Deep Learning is not...", "Deep learning is..."}}},
	{"cohere_rankings", "cohere_rankings", Request{Model: "rerank-v3.5", Query: "capital of the USA?", Passages: []string{"Carson City is the capital of Nevada.", "Washington, D.C. is the capital."}, Extra: map[string]any{"top_n": 1}}},
	{"image_generation", "image_generation", Request{Model: "black-forest-labs/FLUX.1-dev", Prompt: "A cute baby sea otter", Image: ImageOptions{N: 2, Size: "1024x1024", ResponseFormat: "b64_json"}}},
	{"raw", "raw", Request{Raw: []byte(`{"any":"body", "kept":  "verbatim"}`), Extra: map[string]any{"ignored": true}}},
	{"template", "template", Request{Model: "m", Messages: convo[:2], MaxTokens: 9, Streaming: true,
		Template: `{"model": {{json .Model}}, "text": {{json .Prompt}}, "turns": [{{range $i, $m := .Messages}}{{if $i}},{{end}}{{json $m.Content}}{{end}}], "max": {{.MaxTokens}}, "stream": {{.Streaming}}, "extra": {{json .Extra}}}`,
		Extra:    map[string]any{"b": 2, "a": "x<y"}}},
}

func TestRenderGolden(t *testing.T) {
	for _, tc := range renderCases {
		t.Run(tc.name, func(t *testing.T) {
			ep, err := Lookup(tc.endpoint)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ep.Render([]byte("PREFIX"), &tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(got, []byte("PREFIX")) {
				t.Fatalf("Render did not append to dst: %q", got)
			}
			got = got[len("PREFIX"):]
			if !json.Valid(got) {
				t.Fatalf("invalid JSON: %s", got)
			}
			// Deterministic: Extra map iteration order must not matter.
			for range 5 {
				again, err := ep.Render(nil, &tc.req)
				if err != nil || !bytes.Equal(again, got) {
					t.Fatalf("second render differs: %s vs %s (%v)", again, got, err)
				}
			}
			path := filepath.Join("testdata", "render", tc.name+".golden")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./endpoint -run TestRenderGolden -update)", err)
			}
			if !bytes.Equal(got, bytes.TrimSuffix(want, []byte("\n"))) {
				t.Errorf("body differs from %s\n got: %s\nwant: %s", path, got, want)
			}
		})
	}
}

// TestRenderMatchesStdlib checks the hand-written writer against encoding/json: decoding our
// body gives the same value as decoding what encoding/json makes of the same object.
func TestRenderMatchesStdlib(t *testing.T) {
	ep, _ := Lookup("chat")
	r := renderCases[1].req
	got, err := ep.Render(nil, &r)
	if err != nil {
		t.Fatal(err)
	}
	msgs := make([]map[string]string, len(r.Messages))
	for i, m := range r.Messages {
		msgs[i] = map[string]string{"role": m.Role, "content": m.Content}
	}
	want := map[string]any{"model": r.Model, "messages": msgs, "stream": true,
		"stream_options": map[string]any{"include_usage": true}, "max_completion_tokens": r.MaxTokens}
	for k, v := range r.Extra {
		want[k] = v
	}
	wantJSON, _ := json.Marshal(want)
	var a, b any
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(wantJSON, &b); err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if !bytes.Equal(ja, jb) {
		t.Errorf("got  %s\nwant %s", ja, jb)
	}
}

func TestRenderErrors(t *testing.T) {
	cases := []struct {
		endpoint string
		req      Request
		want     string
	}{
		{"anthropic_messages", Request{Prompt: "hi"}, "endpoint anthropic_messages: max_tokens is required"},
		{"raw", Request{}, "endpoint raw: request has no raw body"},
		{"template", Request{}, "endpoint template: request has no template"},
		{"template", Request{Template: "{{.Nope}}"}, "endpoint template: template:"},
		{"template", Request{Template: "{{"}, "endpoint template: template:"},
		{"template", Request{Template: `{"p": {{.Prompt}}}`, Prompt: "unquoted"}, "endpoint template: template output is not valid JSON at byte 6"},
		{"chat", Request{Extra: map[string]any{"x": func() {}}}, `endpoint chat: extra input "x"`},
		{"chat", Request{Extra: map[string]any{"stream": map[string]any{"nan": badFloat()}}}, `endpoint chat: extra input "stream"`},
	}
	for _, tc := range cases {
		ep, err := Lookup(tc.endpoint)
		if err != nil {
			t.Fatal(err)
		}
		out, err := ep.Render([]byte("keep"), &tc.req)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s %+v: err = %v, want prefix %q", tc.endpoint, tc.req, err, tc.want)
		}
		if string(out) != "keep" {
			t.Errorf("%s: dst not returned unchanged on error: %q", tc.endpoint, out)
		}
	}
}

func badFloat() float64 {
	z := 0.0
	return z / z
}

func TestLookup(t *testing.T) {
	names := Names()
	if len(names) != 14 {
		t.Fatalf("Names() = %v", names)
	}
	for _, n := range names {
		ep, err := Lookup(n)
		if err != nil || ep.Name != n {
			t.Fatalf("Lookup(%q) = %v, %v", n, ep, err)
		}
	}
	_, err := Lookup("openai")
	if err == nil || !strings.Contains(err.Error(), `unknown type "openai"`) || !strings.Contains(err.Error(), "anthropic_messages, chat, chat_embeddings") {
		t.Fatalf("Lookup(openai) error = %v", err)
	}
	a, _ := Lookup("anthropic_messages")
	a.Headers["x"] = "y"
	a.ResponseField = "z"
	b, _ := Lookup("anthropic_messages")
	if len(b.Headers) != 1 || b.Headers["anthropic-version"] != "2023-06-01" || b.ResponseField != "" {
		t.Fatalf("Lookup shares state between copies: %+v", b)
	}
	tgi, _ := Lookup("huggingface_generate")
	if tgi.RequestPath(true) != "/generate_stream" || tgi.RequestPath(false) != "/generate" {
		t.Fatal("TGI paths")
	}
	var zero Endpoint
	if _, err := zero.Render(nil, &Request{}); err == nil {
		t.Fatal("zero Endpoint rendered")
	}
	if err := zero.ParseEvent([]byte("{}"), &Delta{}); err == nil || errors.Is(err, ErrUnexpectedShape) {
		t.Fatal("zero Endpoint parsed")
	}
}

func TestTemplateCacheConcurrent(t *testing.T) {
	ep, _ := Lookup("template")
	done := make(chan error, 4)
	for g := range 4 {
		go func() {
			var buf []byte
			var err error
			for i := range 200 {
				r := Request{Template: `{"p":{{json .Prompt}},"g":` + string(rune('0'+g)) + `}`, Prompt: "x"}
				if i%2 == 0 {
					r.Template = `{"q":{{json .Prompt}}}`
				}
				if buf, err = ep.Render(buf[:0], &r); err != nil {
					break
				}
			}
			done <- err
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
