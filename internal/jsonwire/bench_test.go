package jsonwire

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// Each benchmark times this package over b.N iterations, then the same work done with
// encoding/json in the same process, and reports the baseline's ns/op and the speed-up, so
// the ratio is visible in one line of output. Allocations are ours (-benchmem, or the
// ReportAllocs columns): zero in steady state.

// reportBaseline times fn for about as many iterations as the benchmark ran (outside its
// timer) and reports it.
func reportBaseline(b *testing.B, ours time.Duration, fn func()) {
	b.StopTimer()
	n := max(min(b.N, 200000), 1)
	fn() // warm
	start := time.Now()
	for range n {
		fn()
	}
	perBase := float64(time.Since(start).Nanoseconds()) / float64(n)
	b.ReportMetric(perBase, "baseline-ns/op")
	if perOurs := float64(ours.Nanoseconds()) / float64(b.N); perOurs > 0 {
		b.ReportMetric(perBase/perOurs, "speedup-x")
	}
}

// BenchmarkAppendString escapes a prompt into a reused buffer. Baseline: an encoding/json
// Encoder (HTML escaping off) writing the same string into a reused bytes.Buffer.
func BenchmarkAppendString(b *testing.B) {
	p, err := os.ReadFile("testdata/prompt512.txt")
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct{ name, s string }{
		{"prompt512", string(p)}, // 2.2 KB of Shakespeare: quotes, newlines
		{"unicode", strings.Repeat("Größe, naïveté, 日本語のテキスト \"q\"\n", 40)}, // multi-byte text
	} {
		b.Run(tc.name, func(b *testing.B) {
			buf := make([]byte, 0, 2*len(tc.s))
			b.SetBytes(int64(len(tc.s)))
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				buf = AppendString(buf[:0], tc.s)
			}
			ours := time.Since(start)
			var out bytes.Buffer
			enc := json.NewEncoder(&out)
			enc.SetEscapeHTML(false)
			reportBaseline(b, ours, func() {
				out.Reset()
				_ = enc.Encode(tc.s)
			})
		})
	}
}

// chatChunk is one vLLM chat streaming chunk.
const chatChunk = `{"id":"chatcmpl-5b1e3a7c2d4f4e8f9a0b1c2d3e4f5a6b","object":"chat.completion.chunk","created":1722880000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":{"content":" Paris"},"logprobs":null,"finish_reason":null}]}`

// readChunkContent walks choices → 0 → delta → content with the Scanner, as endpoint's chat
// parser does, appending the text to dst.
func readChunkContent(s *Scanner, dst []byte) []byte {
	if !s.EnterObject() {
		return dst
	}
	n := 0
	for key, ok := s.Member(&n); ok; key, ok = s.Member(&n) {
		if string(key) != "choices" || !s.EnterArray() {
			s.Skip()
			continue
		}
		e := 0
		for s.Element(&e) {
			if e > 1 || !s.EnterObject() {
				s.Skip()
				continue
			}
			m := 0
			for key, ok := s.Member(&m); ok; key, ok = s.Member(&m) {
				if string(key) != "delta" || !s.EnterObject() {
					s.Skip()
					continue
				}
				d := 0
				for key, ok := s.Member(&d); ok; key, ok = s.Member(&d) {
					if string(key) == "content" {
						dst, _ = s.Str(dst)
					} else {
						s.Skip()
					}
				}
			}
		}
	}
	s.End()
	return dst
}

// BenchmarkScanChatChunk reads the content of one chat chunk into a reused buffer.
// Baseline: json.Unmarshal into a typed struct holding just that field.
func BenchmarkScanChatChunk(b *testing.B) {
	ev := []byte(chatChunk)
	dst := make([]byte, 0, 64)
	s := NewScanner(ev)
	if got := string(readChunkContent(&s, nil)); got != " Paris" || s.Err() != nil {
		b.Fatalf("read %q, %v", got, s.Err())
	}
	b.SetBytes(int64(len(ev)))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		s := NewScanner(ev)
		dst = readChunkContent(&s, dst[:0])
	}
	ours := time.Since(start)
	type chunk struct {
		Choices []struct {
			Delta struct {
				Content *string `json:"content"`
			} `json:"delta"`
		} `json:"choices"`
	}
	reportBaseline(b, ours, func() {
		var c chunk
		_ = json.Unmarshal(ev, &c)
	})
}

// BenchmarkSkip validates and skips a 1,000-chunk array, the work of passing over fields
// nobody reads. Baseline: json.Valid.
func BenchmarkSkip(b *testing.B) {
	doc := []byte("[" + strings.Repeat(chatChunk+",", 999) + chatChunk + "]")
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		s := NewScanner(doc)
		s.Skip()
		s.End()
		if s.Err() != nil {
			b.Fatal(s.Err())
		}
	}
	ours := time.Since(start)
	reportBaseline(b, ours, func() { json.Valid(doc) })
}
