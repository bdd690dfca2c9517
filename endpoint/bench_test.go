package endpoint

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"testing"
	"time"
)

// Each benchmark times the endpoint code over b.N iterations, then the same work done the
// obvious way with the standard library in the same process, and reports the baseline's
// ns/op and the speed-up, so the ratio is visible in one line of output.

// reportBaseline times fn for n iterations (outside the benchmark timer) and reports it.
func reportBaseline(b *testing.B, n int, ours time.Duration, fn func()) {
	b.StopTimer()
	n = max(min(n, 200000), 1)
	fn() // warm
	start := time.Now()
	for range n {
		fn()
	}
	base := time.Since(start)
	perBase := float64(base.Nanoseconds()) / float64(n)
	perOurs := float64(ours.Nanoseconds()) / float64(b.N)
	b.ReportMetric(perBase, "baseline-ns/op")
	if perOurs > 0 {
		b.ReportMetric(perBase/perOurs, "speedup-x")
	}
}

func prompt512(b *testing.B) string {
	p, err := os.ReadFile("testdata/prompt512.txt")
	if err != nil {
		b.Fatal(err)
	}
	return string(p)
}

// BenchmarkRenderChat512 renders a streaming chat body with a system prompt, a 2,200-byte
// (about 512-token) Shakespeare user prompt and an extra input, into a reused buffer.
// Baseline: encoding/json (HTML escaping off) of the equivalent struct.
func BenchmarkRenderChat512(b *testing.B) {
	r := &Request{
		Model:        "meta-llama/Llama-3.1-8B-Instruct",
		Messages:     []Message{{Role: "system", Content: "You are a helpful assistant."}, {Role: "user", Content: prompt512(b)}},
		MaxTokens:    256,
		Streaming:    true,
		IncludeUsage: true,
		Extra:        map[string]any{"ignore_eos": true},
	}
	ep, _ := Lookup("chat")
	buf := make([]byte, 0, 8192)
	b.SetBytes(int64(len(r.Messages[1].Content)))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		var err error
		if buf, err = ep.Render(buf[:0], r); err != nil {
			b.Fatal(err)
		}
	}
	ours := time.Since(start)

	type streamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	}
	type body struct {
		Model         string        `json:"model"`
		Messages      []Message     `json:"messages"`
		Stream        bool          `json:"stream"`
		StreamOptions streamOptions `json:"stream_options"`
		MaxTokens     int           `json:"max_completion_tokens"`
		IgnoreEOS     bool          `json:"ignore_eos"`
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	reportBaseline(b, b.N, ours, func() {
		out.Reset()
		_ = enc.Encode(body{r.Model, r.Messages, true, streamOptions{true}, r.MaxTokens, true})
	})
}

// BenchmarkParseChatChunk parses one typical vLLM chat chunk into a reused Delta.
// Baseline: json.Unmarshal into a typed struct with just the fields we read.
func BenchmarkParseChatChunk(b *testing.B) {
	ep, _ := Lookup("chat")
	ev := []byte(chatChunk)
	d := Delta{Content: make([]byte, 0, 64)}
	b.SetBytes(int64(len(ev)))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		d.Reset()
		if err := ep.ParseEvent(ev, &d); err != nil {
			b.Fatal(err)
		}
	}
	ours := time.Since(start)
	b.ReportMetric(float64(b.N)/ours.Seconds(), "events/s")

	type chunk struct {
		Choices []struct {
			Delta struct {
				Content          *string `json:"content"`
				ReasoningContent *string `json:"reasoning_content"`
				Reasoning        *string `json:"reasoning"`
			} `json:"delta"`
		} `json:"choices"`
		Usage *struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	reportBaseline(b, b.N, ours, func() {
		var c chunk
		_ = json.Unmarshal(ev, &c)
	})
}

// sseStream is 1,000 chat chunks as a vLLM server sends them.
func sseStream() []byte {
	var s []byte
	for range 1000 {
		s = append(s, "data: "...)
		s = append(s, chatChunk...)
		s = append(s, "\n\n"...)
	}
	return append(s, "data: [DONE]\n\n"...)
}

// BenchmarkSSEScanner frames a 1,000-event stream delivered in 4 KiB reads.
// Baseline: bufio.Scanner splitting lines and collecting "data:" lines.
func BenchmarkSSEScanner(b *testing.B) {
	stream := sseStream()
	const readSize = 4096
	var sc SSEScanner
	events := 0
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		sc.Reset()
		for i := 0; i < len(stream); i += readSize {
			sc.Feed(stream[i:min(i+readSize, len(stream))], i)
			for {
				if _, ok := sc.Next(); !ok {
					break
				}
				events++
			}
		}
	}
	ours := time.Since(start)
	if events != 1001*b.N {
		b.Fatalf("%d events", events)
	}
	b.ReportMetric(float64(events)/ours.Seconds(), "events/s")

	reportBaseline(b, max(b.N/4, 1), ours, func() {
		sc := bufio.NewScanner(bytes.NewReader(stream))
		var data []byte
		n := 0
		for sc.Scan() {
			line := sc.Bytes()
			switch {
			case len(line) == 0:
				if len(data) > 0 {
					n++
					data = data[:0]
				}
			case bytes.HasPrefix(line, []byte("data:")):
				data = append(data, bytes.TrimPrefix(line[5:], []byte(" "))...)
			}
		}
	})
}

// BenchmarkParseStream is the analyze inner loop: frame and parse a whole chat stream.
func BenchmarkParseStream(b *testing.B) {
	stream := sseStream()
	ep, _ := Lookup("chat")
	var sc SSEScanner
	d := Delta{Content: make([]byte, 0, 64)}
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		sc.Reset()
		for i := 0; i < len(stream); i += 4096 {
			sc.Feed(stream[i:min(i+4096, len(stream))], i)
			for {
				e, ok := sc.Next()
				if !ok {
					break
				}
				d.Reset()
				if err := ep.ParseEvent(e.Data, &d); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.ReportMetric(float64(1001*b.N)/time.Since(start).Seconds(), "events/s")
}

// BenchmarkRenderTypes renders a 512-token request for each API type (raw and template
// included), to show none is a slow path for the plan compiler.
func BenchmarkRenderTypes(b *testing.B) {
	p := prompt512(b)
	for _, name := range Names() {
		ep, _ := Lookup(name)
		r := &Request{Model: "m", Prompt: p, Messages: []Message{{Role: "user", Content: p}}, MaxTokens: 128, Streaming: ep.Streams,
			Query: "q", Passages: []string{p}, Raw: []byte(`{"prompt":"x"}`), Template: `{"prompt":{{json .Prompt}},"max_tokens":{{.MaxTokens}}}`}
		b.Run(name, func(b *testing.B) {
			buf := make([]byte, 0, 8192)
			b.ReportAllocs()
			for range b.N {
				var err error
				if buf, err = ep.Render(buf[:0], r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
