package endpoint

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// fuzzSeeds adds every body and every stream event in testdata as a seed.
func fuzzSeeds(f *testing.F) [][]byte {
	var seeds [][]byte
	bodies, _ := filepath.Glob(filepath.Join("testdata", "bodies", "*.json"))
	for _, p := range bodies {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	streams, _ := filepath.Glob(filepath.Join("testdata", "streams", "*.sse"))
	for _, p := range streams {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		var sc SSEScanner
		sc.Feed(b, 0)
		for {
			e, ok := sc.Flush()
			if !ok {
				break
			}
			seeds = append(seeds, bytes.Clone(e.Data))
		}
	}
	seeds = append(seeds, []byte(chatChunk), []byte(`[{"generated_text":"x"}]`), []byte(`{"a":[{"b":"\ud83d"}]}`), []byte(`nul`), []byte(`{"choices":[{"delta":{"content":"\`))
	return seeds
}

// FuzzParseEvent feeds arbitrary bytes to every API type's parser (and raw with a response
// field): no panic, and no success on malformed JSON.
func FuzzParseEvent(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	var eps []*Endpoint
	for _, n := range Names() {
		ep, _ := Lookup(n)
		eps = append(eps, ep)
	}
	field, _ := Lookup("raw")
	field.ResponseField = "choices.0.delta.content"
	eps = append(eps, field)
	f.Fuzz(func(t *testing.T, in []byte) {
		valid := json.Valid(in) || isDoneSentinel(in)
		for _, ep := range eps {
			var d Delta
			err := ep.ParseEvent(in, &d)
			if err == nil && !valid {
				t.Fatalf("%s accepted invalid JSON %q", ep.Name, in)
			}
			if err != nil && !bytes.Contains([]byte(err.Error()), []byte("endpoint "+ep.Name+": ")) {
				t.Fatalf("%s: error does not name the endpoint: %v", ep.Name, err)
			}
		}
	})
}

// FuzzParseChat round-trips arbitrary text through encoding/json into chat chunks and
// messages and checks the parser recovers exactly what encoding/json decodes.
func FuzzParseChat(f *testing.F) {
	f.Add("Hello", "", "", "", "")
	f.Add("caf\u00e9 \U0001F600", "think", "ignored", "get_weather", `{"a":"<b>"}`)
	f.Add("\xff\xfe", "", "r", "", "\u2028")
	f.Add("", "", "", "", "")
	f.Fuzz(func(t *testing.T, content, reasoningContent, reasoning, name, args string) {
		type fn struct {
			Name      string `json:"name,omitempty"`
			Arguments string `json:"arguments"`
		}
		type call struct {
			Index    int `json:"index"`
			Function fn  `json:"function"`
		}
		type msg struct {
			Role             string  `json:"role,omitempty"`
			Content          *string `json:"content"`
			ReasoningContent string  `json:"reasoning_content,omitempty"`
			Reasoning        string  `json:"reasoning,omitempty"`
			ToolCalls        []call  `json:"tool_calls,omitempty"`
		}
		m := msg{Content: &content, ReasoningContent: reasoningContent, Reasoning: reasoning}
		if name != "" || args != "" {
			m.ToolCalls = []call{{Function: fn{Name: name, Arguments: args}}}
		}
		ep, _ := Lookup("chat")
		for _, key := range []string{"delta", "message"} {
			body, err := json.Marshal(map[string]any{
				"object":  "chat.completion.chunk",
				"choices": []any{map[string]any{"index": 0, key: m, "finish_reason": nil}},
				"usage":   map[string]any{"prompt_tokens": len(content), "completion_tokens": len(args)},
			})
			if err != nil {
				t.Fatal(err)
			}
			// What encoding/json decodes the strings to is the reference.
			var ref struct {
				Choices []struct {
					Delta   msg `json:"delta"`
					Message msg `json:"message"`
				} `json:"choices"`
			}
			if err := json.Unmarshal(body, &ref); err != nil {
				t.Fatal(err)
			}
			rm := ref.Choices[0].Delta
			if key == "message" {
				rm = ref.Choices[0].Message
			}
			want := *rm.Content
			for _, c := range rm.ToolCalls {
				want += c.Function.Name + c.Function.Arguments
			}
			wantR := rm.ReasoningContent
			if wantR == "" {
				wantR = rm.Reasoning
			}
			var d Delta
			if err := ep.ParseEvent(body, &d); err != nil {
				t.Fatalf("%s: %v", body, err)
			}
			if string(d.Content) != want || string(d.Reasoning) != wantR {
				t.Fatalf("%s:\ncontent %q want %q\nreasoning %q want %q", body, d.Content, want, d.Reasoning, wantR)
			}
			if d.Usage.PromptTokens != len(content) || d.Usage.CompletionTokens != len(args) {
				t.Fatalf("usage %+v", d.Usage)
			}
		}
	})
}
