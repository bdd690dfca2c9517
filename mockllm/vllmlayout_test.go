package mockllm

import (
	"io"
	"regexp"
	"strings"
	"testing"
)

// With VLLMChunks a stream is vLLM's, byte for byte except the id's and created's digits and
// the words: the role chunk, the token chunks, the last with stop_reason, the usage chunk.
func TestVLLMChunkLayout(t *testing.T) {
	o := testOptions()
	o.VLLMChunks = true
	base := startServer(t, o)
	cases := []struct {
		name, path, body string
		want             []string // one pattern per data line
	}{
		{"chat", "/v1/chat/completions", `{"model":"m1","messages":[{"role":"user","content":"hi"}],"max_tokens":3,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`,
			[]string{
				`"choices":\[\{"index":0,"delta":\{"role":"assistant","content":""\},"logprobs":null,"finish_reason":null\}\]\}`,
				`"choices":\[\{"index":0,"delta":\{"content":"[^"]*"\},"logprobs":null,"finish_reason":null\}\]\}`,
				`"choices":\[\{"index":0,"delta":\{"content":"[^"]*"\},"logprobs":null,"finish_reason":null\}\]\}`,
				`"choices":\[\{"index":0,"delta":\{"content":"[^"]*"\},"logprobs":null,"finish_reason":"length","stop_reason":null\}\]\}`,
				`"choices":\[\],"usage":\{"prompt_tokens":[0-9]+,"total_tokens":[0-9]+,"completion_tokens":3\}\}`,
			}},
		{"completions", "/v1/completions", `{"model":"m1","prompt":"hi","max_tokens":2,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`,
			[]string{
				`"choices":\[\{"index":0,"text":"[^"]*","logprobs":null,"finish_reason":null,"stop_reason":null\}\]\}`,
				`"choices":\[\{"index":0,"text":"[^"]*","logprobs":null,"finish_reason":"length","stop_reason":null\}\]\}`,
				`"choices":\[\],"usage":\{"prompt_tokens":[0-9]+,"total_tokens":[0-9]+,"completion_tokens":2\}\}`,
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prefix, object := "chatcmpl-", "chat.completion.chunk"
			if c.name == "completions" {
				prefix, object = "cmpl-", "text_completion"
			}
			h := `^\{"id":"` + prefix + `[0-9a-f]{32}","object":"` + regexp.QuoteMeta(object) + `","created":[0-9]+,"model":"m1",`
			resp := post(t, base+c.path, c.body)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var lines []string
			for _, l := range strings.Split(string(body), "\n") {
				if d, ok := strings.CutPrefix(l, "data: "); ok {
					lines = append(lines, d)
				}
			}
			if len(lines) != len(c.want)+1 || lines[len(lines)-1] != "[DONE]" {
				t.Fatalf("%d data lines, want %d and [DONE]:\n%s", len(lines), len(c.want)+1, body)
			}
			id := ""
			for i, w := range c.want {
				if !regexp.MustCompile(h + w + `$`).MatchString(lines[i]) {
					t.Errorf("line %d:\n%s\nwant %s", i, lines[i], w)
				}
				if j := strings.Index(lines[i], `","object"`); id == "" {
					id = lines[i][:j]
				} else if lines[i][:j] != id {
					t.Errorf("line %d: another id than the first line's", i)
				}
			}
		})
	}
}
