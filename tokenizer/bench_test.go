package tokenizer

import (
	"math"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

func readCorpus(b testing.TB, name string) string {
	b.Helper()
	data, err := os.ReadFile("../testdata/corpus/" + name)
	if err != nil {
		b.Fatal(err)
	}
	return string(data)
}

// withCache returns a copy of tok with its own encoders, caching at most words words
// per encoder (0: no cache, the baseline for the word cache).
func withCache(tok *Tokenizer, words int) *Tokenizer {
	u := *tok
	u.cacheWords = words
	u.slots = make([]encoderSlot, numSlots())
	return &u
}

var corpora = []string{"shakespeare.txt", "go_source.txt"}

// BenchmarkEncode measures single-goroutine encoding throughput of the built-in Qwen3
// tokenizer over prose and code, reporting tokens/s and the speed-up of the word cache
// over the same encoder without it (best of three passes, measured in this process).
func BenchmarkEncode(b *testing.B) {
	tok := builtin(b)
	base := withCache(tok, 0)
	for _, name := range corpora {
		text := readCorpus(b, name)
		ids := tok.AppendEncode(nil, text) // warms the word cache
		ntok := len(ids)
		baseTime := time.Duration(math.MaxInt64)
		for range 3 {
			start := time.Now()
			base.AppendEncode(ids[:0], text)
			baseTime = min(baseTime, time.Since(start))
		}
		baseRate := float64(ntok) / baseTime.Seconds()
		runtime.GC()
		b.Run(strings.TrimSuffix(name, ".txt"), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				ids = tok.AppendEncode(ids[:0], text)
			}
			rate := float64(ntok) * float64(b.N) / b.Elapsed().Seconds()
			b.ReportMetric(rate, "tokens/s")
			b.ReportMetric(rate/baseRate, "x_uncached")
			b.ReportMetric(float64(ntok), "tokens/op")
		})
	}
}

// BenchmarkEncodeUncached is the word cache's baseline: every piece is merged afresh.
func BenchmarkEncodeUncached(b *testing.B) {
	tok := withCache(builtin(b), 0)
	for _, name := range corpora {
		text := readCorpus(b, name)
		b.Run(strings.TrimSuffix(name, ".txt"), func(b *testing.B) {
			ids := tok.AppendEncode(nil, text)
			ntok := len(ids)
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				ids = tok.AppendEncode(ids[:0], text)
			}
			b.ReportMetric(float64(ntok)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// BenchmarkLongWord encodes one unbroken 20 KB word, the case where naive BPE is quadratic.
func BenchmarkLongWord(b *testing.B) {
	tok := builtin(b)
	word := strings.Repeat("abcdefghij", 2048)
	var ids []int
	b.SetBytes(int64(len(word)))
	for b.Loop() {
		ids = tok.AppendEncode(ids[:0], word)
	}
}

// BenchmarkDecode measures decoding the Shakespeare corpus' ids back to text.
func BenchmarkDecode(b *testing.B) {
	tok := builtin(b)
	text := readCorpus(b, "shakespeare.txt")
	ids := tok.Encode(text)
	buf := make([]byte, 0, len(text))
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		buf = tok.AppendDecode(buf[:0], ids)
	}
	b.ReportMetric(float64(len(ids))*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}

// BenchmarkParseBuiltin measures decompressing and parsing the embedded tokenizer.json.
func BenchmarkParseBuiltin(b *testing.B) {
	for b.Loop() {
		if _, err := parseBuiltin(); err != nil {
			b.Fatal(err)
		}
	}
}
