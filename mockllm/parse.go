package mockllm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Request parsing: each API's body is decoded with encoding/json into the
// fields the mock needs; anything else is ignored, as real servers do
// with fields they do not use. Errors name the field at fault.

// badRequest is a client error: 400 with the API's error body.
type badRequest struct{ msg string }

func (e *badRequest) Error() string { return e.msg }

func badf(format string, args ...any) error { return &badRequest{fmt.Sprintf(format, args...)} }

// decodeJSON decodes a whole body into v, naming the API on failure.
func decodeJSON(api string, body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return badf("%s: empty request body: want a JSON object", api)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return badf("%s: field %q: JSON %s is not valid here", api, te.Field, te.Value)
		}
		return badf("%s: invalid JSON body: %v", api, err)
	}
	if dec.More() {
		return badf("%s: invalid JSON body: data after the JSON object", api)
	}
	return nil
}

// textOf extracts the text of a content field: a string, or an array of
// parts whose "text" fields are joined with a space (image and audio
// parts carry no text and count no tokens here).
//
// Media parts are checked and counted into mu (mockllm/media.go); nil ignores them.
func textOf(raw json.RawMessage, field string, mu *mediaUse, cost *MediaCost) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", badf("%s: %v", field, err)
		}
		return s, nil
	case '[':
		var parts []contentPart
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", badf("%s: want a string or an array of content parts: %v", field, err)
		}
		var texts []string
		for i := range parts {
			p := &parts[i]
			if p.Text != nil {
				texts = append(texts, *p.Text)
			}
			if mu != nil {
				if err := mu.add(p, fmt.Sprintf("%s[%d]", field, i), cost); err != nil {
					return "", err
				}
			}
		}
		return strings.Join(texts, " "), nil
	}
	return "", badf("%s: want a string or an array of content parts", field)
}

// maxOutputTokens bounds max_tokens and min_tokens, as a real server's
// context length does; it keeps one request from allocating gigabytes.
const maxOutputTokens = 1 << 17

// optInt reads an optional integer field of at least min.
func optInt(n json.Number, field string, min int) (int, error) {
	if n == "" {
		return 0, nil
	}
	v, err := n.Int64()
	if err != nil || v < int64(min) {
		return 0, badf("%s: want an integer >= %d, got %s", field, min, n)
	}
	if v > maxOutputTokens {
		return 0, badf("%s: %s is over this server's limit of %d", field, n, maxOutputTokens)
	}
	return int(v), nil
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type openAITool struct {
	Type     string `json:"type"`
	Name     string `json:"name"` // Responses and Anthropic tools
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

func (t openAITool) name() string {
	if t.Function.Name != "" {
		return t.Function.Name
	}
	return t.Name
}

// vllmExtras are the sampling extensions vLLM accepts at top level.
type vllmExtras struct {
	MinTokens json.Number `json:"min_tokens"`
	IgnoreEOS bool        `json:"ignore_eos"`
}

func (x *vllmExtras) apply(api string, r *genRequest) error {
	var err error
	if r.minTokens, err = optInt(x.MinTokens, api+": min_tokens", 0); err != nil {
		return err
	}
	r.ignoreEOS = x.IgnoreEOS
	if r.maxTokens > 0 && r.minTokens > r.maxTokens {
		return badf("%s: min_tokens (%d) must be at most the maximum output tokens (%d)", api, r.minTokens, r.maxTokens)
	}
	return nil
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

func joinMessages(api string, msgs []chatMessage, mu *mediaUse, cost *MediaCost) (string, error) {
	texts := make([]string, 0, len(msgs))
	for i, m := range msgs {
		t, err := textOf(m.Content, fmt.Sprintf("%s: messages[%d].content", api, i), mu, cost)
		if err != nil {
			return "", err
		}
		texts = append(texts, t)
	}
	return strings.Join(texts, " "), nil
}

// parseChat reads a chat body; ignoreMCT drops max_completion_tokens, as llama.cpp does
// (Quirks.IgnoreMaxCompletionTokens).
func parseChat(body []byte, cost *MediaCost, ignoreMCT bool) (*genRequest, error) {
	var b struct {
		Model               string         `json:"model"`
		Messages            []chatMessage  `json:"messages"`
		Stream              bool           `json:"stream"`
		StreamOptions       *streamOptions `json:"stream_options"`
		MaxTokens           json.Number    `json:"max_tokens"`
		MaxCompletionTokens json.Number    `json:"max_completion_tokens"`
		N                   json.Number    `json:"n"`
		Tools               []openAITool   `json:"tools"`
		vllmExtras
	}
	if err := decodeJSON("chat", body, &b); err != nil {
		return nil, err
	}
	if len(b.Messages) == 0 {
		return nil, badf("chat: messages: want a non-empty array")
	}
	r := &genRequest{model: b.Model, stream: b.Stream, reasoning: true, tools: true, promptTokens: -1}
	var err error
	if r.promptText, err = joinMessages("chat", b.Messages, &r.media, cost); err != nil {
		return nil, err
	}
	if n, err := optInt(b.N, "chat: n", 1); err != nil || n > 1 {
		return nil, badf("chat: n: only n=1 is served")
	}
	if r.maxTokens, err = optInt(b.MaxTokens, "chat: max_tokens", 1); err != nil {
		return nil, err
	}
	if b.MaxCompletionTokens != "" && !ignoreMCT {
		if r.maxTokens, err = optInt(b.MaxCompletionTokens, "chat: max_completion_tokens", 1); err != nil {
			return nil, err
		}
	}
	r.includeUsage = b.Stream && b.StreamOptions != nil && b.StreamOptions.IncludeUsage
	if len(b.Tools) > 0 {
		r.toolName = b.Tools[0].name()
	}
	return r, b.vllmExtras.apply("chat", r)
}

func parseCompletions(body []byte) (*genRequest, error) {
	var b struct {
		Model         string          `json:"model"`
		Prompt        json.RawMessage `json:"prompt"`
		Stream        bool            `json:"stream"`
		StreamOptions *streamOptions  `json:"stream_options"`
		MaxTokens     json.Number     `json:"max_tokens"`
		N             json.Number     `json:"n"`
		vllmExtras
	}
	if err := decodeJSON("completions", body, &b); err != nil {
		return nil, err
	}
	r := &genRequest{model: b.Model, stream: b.Stream, promptTokens: -1}
	var err error
	if r.promptText, r.promptTokens, err = promptOf(b.Prompt); err != nil {
		return nil, err
	}
	if n, err := optInt(b.N, "completions: n", 1); err != nil || n > 1 {
		return nil, badf("completions: n: only n=1 is served")
	}
	if r.maxTokens, err = optInt(b.MaxTokens, "completions: max_tokens", 1); err != nil {
		return nil, err
	}
	r.includeUsage = b.Stream && b.StreamOptions != nil && b.StreamOptions.IncludeUsage
	return r, b.vllmExtras.apply("completions", r)
}

// promptOf reads a completions prompt: a string, a list of strings
// (joined with a space) or a list of token ids (counted as given).
func promptOf(raw json.RawMessage) (string, int, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", 0, badf("completions: prompt: required")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, -1, nil
	}
	var ss []string
	if json.Unmarshal(raw, &ss) == nil && len(ss) > 0 {
		return strings.Join(ss, " "), -1, nil
	}
	var ids []int64
	if json.Unmarshal(raw, &ids) == nil && len(ids) > 0 {
		return string(raw), len(ids), nil // the raw ids seed the output
	}
	return "", 0, badf("completions: prompt: want a string, a list of strings or a list of token ids")
}

func parseResponses(body []byte, cost *MediaCost) (*genRequest, error) {
	var b struct {
		Model           string          `json:"model"`
		Input           json.RawMessage `json:"input"`
		Instructions    string          `json:"instructions"`
		Stream          bool            `json:"stream"`
		MaxOutputTokens json.Number     `json:"max_output_tokens"`
		Tools           []openAITool    `json:"tools"`
		vllmExtras
	}
	if err := decodeJSON("responses", body, &b); err != nil {
		return nil, err
	}
	r := &genRequest{model: b.Model, stream: b.Stream, includeUsage: true, reasoning: true, tools: true, promptTokens: -1}
	in := bytes.TrimSpace(b.Input)
	if len(in) == 0 || string(in) == "null" {
		return nil, badf("responses: input: required")
	}
	var texts []string
	if b.Instructions != "" {
		texts = append(texts, b.Instructions)
	}
	if in[0] == '"' {
		t, err := textOf(in, "responses: input", nil, nil)
		if err != nil {
			return nil, err
		}
		texts = append(texts, t)
	} else {
		var items []struct {
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
			Text    *string         `json:"text"`
			Output  *string         `json:"output"`
		}
		if err := json.Unmarshal(in, &items); err != nil {
			return nil, badf("responses: input: want a string or an array of input items")
		}
		for i, it := range items {
			switch {
			case it.Content != nil:
				t, err := textOf(it.Content, fmt.Sprintf("responses: input[%d].content", i), &r.media, cost)
				if err != nil {
					return nil, err
				}
				texts = append(texts, t)
			case it.Text != nil:
				texts = append(texts, *it.Text)
			case it.Output != nil:
				texts = append(texts, *it.Output)
			}
		}
	}
	r.promptText = strings.Join(texts, " ")
	var err error
	if r.maxTokens, err = optInt(b.MaxOutputTokens, "responses: max_output_tokens", 1); err != nil {
		return nil, err
	}
	if len(b.Tools) > 0 {
		r.toolName = b.Tools[0].name()
	}
	return r, b.vllmExtras.apply("responses", r)
}

func parseAnthropic(body []byte) (*genRequest, error) {
	var b struct {
		Model     string          `json:"model"`
		Messages  []chatMessage   `json:"messages"`
		System    json.RawMessage `json:"system"`
		Stream    bool            `json:"stream"`
		MaxTokens json.Number     `json:"max_tokens"`
		Tools     []openAITool    `json:"tools"`
		vllmExtras
	}
	if err := decodeJSON("messages", body, &b); err != nil {
		return nil, err
	}
	if len(b.Messages) == 0 {
		return nil, badf("messages: messages: want a non-empty array")
	}
	if b.MaxTokens == "" {
		return nil, badf("messages: max_tokens: Field required")
	}
	r := &genRequest{model: b.Model, stream: b.Stream, includeUsage: true, reasoning: true, tools: true, promptTokens: -1}
	var err error
	if r.maxTokens, err = optInt(b.MaxTokens, "messages: max_tokens", 1); err != nil {
		return nil, err
	}
	sys, err := textOf(b.System, "messages: system", nil, nil)
	if err != nil {
		return nil, err
	}
	msgs, err := joinMessages("messages", b.Messages, nil, nil)
	if err != nil {
		return nil, err
	}
	if sys != "" {
		msgs = sys + " " + msgs
	}
	r.promptText = msgs
	if len(b.Tools) > 0 {
		r.toolName = b.Tools[0].name()
	}
	return r, b.vllmExtras.apply("messages", r)
}

func parseTGI(body []byte, stream bool) (*genRequest, error) {
	var b struct {
		Inputs     *string `json:"inputs"`
		Parameters struct {
			MaxNewTokens json.Number `json:"max_new_tokens"`
		} `json:"parameters"`
		vllmExtras
	}
	if err := decodeJSON("generate", body, &b); err != nil {
		return nil, err
	}
	if b.Inputs == nil {
		return nil, badf("generate: inputs: required")
	}
	r := &genRequest{stream: stream, promptText: *b.Inputs, promptTokens: -1}
	var err error
	if r.maxTokens, err = optInt(b.Parameters.MaxNewTokens, "generate: parameters.max_new_tokens", 1); err != nil {
		return nil, err
	}
	return r, b.vllmExtras.apply("generate", r)
}
