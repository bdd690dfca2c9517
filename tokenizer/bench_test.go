package tokenizer

import (
	"math"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/unicode/norm"
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

// BenchmarkNFC normalizes texts of several scripts, already NFC and decomposed, and reports
// golang.org/x/text/unicode/norm's NFC.String on the same text, timed in this process, as
// baseline-ns/op with the speed-up. Already-NFC text is what the tokenizer sees nearly always
// (it runs before every encode of a model whose normalizer is NFC): there ours only scans.
func BenchmarkNFC(b *testing.B) {
	shakespeare := readCorpus(b, "shakespeare.txt")
	latin := strings.Repeat("Le cœur a ses raisons que la raison ne connaît point. Über Änderungen größerer Straßen. ", 24)
	hindi := strings.Repeat("हिन्दी विश्व की एक प्रमुख भाषा है और भारत की राजभाषा है। ", 24)
	korean := strings.Repeat("한국어는 대한민국과 조선민주주의인민공화국의 공용어이다. ", 24)
	texts := []struct{ name, s string }{
		{"ascii", shakespeare[:4096]},
		{"latin", latin},
		{"hindi", hindi},
		{"korean", korean},
		{"latin-nfd", norm.NFD.String(latin)},
		{"korean-nfd", norm.NFD.String(korean)},
	}
	tab := nfcData()
	for _, tt := range texts {
		if got, want := nfc(tt.s), norm.NFC.String(tt.s); got != want {
			b.Fatalf("%s: NFC differs from x/text's norm", tt.name)
		}
		b.Run(tt.name, func(b *testing.B) {
			var sc nfcScratch
			b.SetBytes(int64(len(tt.s)))
			b.ReportAllocs()
			for b.Loop() {
				tab.normalize(tt.s, &sc)
			}
			ours := b.Elapsed().Seconds() / float64(b.N)
			n := max(b.N/4, 1)
			start := time.Now()
			for range n {
				norm.NFC.String(tt.s)
			}
			base := time.Since(start).Seconds() / float64(n)
			b.ReportMetric(base*1e9, "baseline-ns/op")
			b.ReportMetric(base/ours, "speedup-x")
		})
	}
}
