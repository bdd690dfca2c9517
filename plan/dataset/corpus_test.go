package dataset

import (
	"bytes"
	"compress/gzip"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/llmbench/llmbench/tokenizer"
)

var (
	corpusTokOnce sync.Once
	corpusTok     *tokenizer.Tokenizer
	corpusTokErr  error
)

func corpusTestTokenizer(t testing.TB) *tokenizer.Tokenizer {
	t.Helper()
	corpusTokOnce.Do(func() { corpusTok, corpusTokErr = tokenizer.Builtin() })
	if corpusTokErr != nil {
		t.Fatal(corpusTokErr)
	}
	return corpusTok
}

func TestCorpusSameAtAnyGOMAXPROCS(t *testing.T) {
	tok := corpusTestTokenizer(t)
	c, err := LoadCorpus(tok)
	if err != nil {
		t.Fatal(err)
	}
	if c2, _ := LoadCorpus(tok); c2 != c {
		t.Fatal("LoadCorpus does not cache per tokenizer")
	}
	if len(c.Tokens()) < 100_000 {
		t.Fatalf("corpus has only %d tokens", len(c.Tokens()))
	}
	// The chunking, not the scheduling, decides the tokens: a slice of the text several
	// chunks long tokenizes the same on one worker and on many, and as the embedded corpus's
	// prefix.
	zr, err := gzip.NewReader(bytes.NewReader(shakespeareGz))
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(zr)
	text = text[:bytes.LastIndexByte(text[:8*corpusChunkChars], '\n')+1]
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(1)
	a, err := tokenizeCorpus(tok, text, 0)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GOMAXPROCS(2)
	b, err := tokenizeCorpus(tok, text, 4)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Tokens(), b.Tokens()) {
		t.Fatal("corpus tokens depend on the number of workers")
	}
	if len(corpusChunks(text)) < 5 || !slices.Equal(a.Tokens()[:len(a.Tokens())-50], c.Tokens()[:len(a.Tokens())-50]) {
		t.Fatal("the corpus is not the concatenation of its chunks' tokens")
	}
}

func TestCorpusPromptExactLength(t *testing.T) {
	tok := corpusTestTokenizer(t)
	c, err := LoadCorpus(tok)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 2, 3, 5, 17, 64, 128, 511, 512, 550, 1000, 4096} {
		for range max(3, 4000/n) {
			s, err := c.Prompt(r, n)
			if err != nil {
				t.Fatal(err)
			}
			if got := tok.Count(s); got != n {
				t.Fatalf("prompt of %d tokens re-encodes to %d: %q", n, got, s)
			}
			if s != strings.TrimSpace(s) {
				t.Fatalf("prompt %q has surrounding space", s)
			}
		}
	}
	// A start near the end wraps around to the beginning.
	ids, next := c.appendFrom(nil, len(c.Tokens())-3, 10)
	if !slices.Equal(ids[:3], c.Tokens()[len(c.Tokens())-3:]) || !slices.Equal(ids[3:], c.Tokens()[:7]) || next != 7 {
		t.Fatalf("appendFrom does not wrap: %v next %d", ids, next)
	}
	if s, ok := c.fit(len(c.Tokens())-5, 40, nil); !ok || tok.Count(s) != 40 {
		t.Fatalf("wrapping prompt: %v, %d tokens", ok, tok.Count(s))
	}
	if _, err := c.Prompt(r, 0); err == nil {
		t.Fatal("prompt of 0 tokens accepted")
	}
}

func TestCorpusPromptDeterministic(t *testing.T) {
	c, err := LoadCorpus(corpusTestTokenizer(t))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := c.Prompt(rand.New(rand.NewPCG(1, 2)), 300)
	b, _ := c.Prompt(rand.New(rand.NewPCG(1, 2)), 300)
	d, _ := c.Prompt(rand.New(rand.NewPCG(1, 3)), 300)
	if a != b || a == d {
		t.Fatal("prompts do not follow the random stream")
	}
}

func BenchmarkCorpusPrompt512(b *testing.B) {
	c, err := LoadCorpus(corpusTestTokenizer(b))
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	b.ResetTimer()
	for range b.N {
		if _, err := c.Prompt(r, 512); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLoadCorpus(b *testing.B) {
	tok := corpusTestTokenizer(b)
	for range b.N {
		if _, err := tokenizeCorpus(tok, nil, 0); err != nil {
			b.Fatal(err)
		}
	}
}
