package dataset

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	_ "embed" // the corpus ships inside the binary
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"

	"github.com/llmbench/llmbench/plan/internal/parallel"
	"github.com/llmbench/llmbench/tokenizer"
)

// shakespeareGz is the public-domain Tiny Shakespeare corpus (the text AIPerf samples
// synthetic prompts from), gzipped.
//
//go:embed shakespeare.txt.gz
var shakespeareGz []byte

// corpusChunkChars is how many characters of stripped lines go into one tokenization chunk.
// The chunk boundaries depend only on the text, never on the number of CPUs, so the token
// stream (and every prompt drawn from it) is the same on every machine (AIPerf uses 10,000
// characters too).
const corpusChunkChars = 10_000

// promptStarts and promptFixups bound the search for a prompt of an exact token count: up
// to promptFixups decode/re-encode rounds from one random start, then a new start.
const (
	promptStarts = 16
	promptFixups = 10
)

// Corpus is the embedded corpus tokenized under one tokenizer: the source of synthetic prompt
// text. It is safe for concurrent use.
type Corpus struct {
	tok    *tokenizer.Tokenizer
	tokens []int
	sha    string
}

var corpusCache struct {
	sync.Mutex
	m map[*tokenizer.Tokenizer]*Corpus
}

// LoadCorpus tokenizes the embedded corpus under tok. The lines are stripped, empty ones
// dropped, and the rest joined by a space in chunks of about corpusChunkChars characters
// that are tokenized independently (in parallel) and concatenated in order. The result is
// cached per tokenizer.
func LoadCorpus(tok *tokenizer.Tokenizer) (*Corpus, error) {
	if tok == nil {
		return nil, errors.New("dataset: corpus: no tokenizer")
	}
	corpusCache.Lock()
	defer corpusCache.Unlock()
	if c := corpusCache.m[tok]; c != nil {
		return c, nil
	}
	c, err := tokenizeCorpus(tok, nil, 0)
	if err != nil {
		return nil, err
	}
	if corpusCache.m == nil {
		corpusCache.m = make(map[*tokenizer.Tokenizer]*Corpus)
	}
	corpusCache.m[tok] = c
	return c, nil
}

// CorpusFromText tokenizes text as LoadCorpus tokenizes the embedded corpus (stripped
// lines joined by a space, fixed chunks), for a corpus of the user's (--prompt-corpus FILE).
// It is not cached.
func CorpusFromText(tok *tokenizer.Tokenizer, text []byte) (*Corpus, error) {
	if tok == nil {
		return nil, errors.New("dataset: corpus: no tokenizer")
	}
	if text == nil {
		text = []byte{}
	}
	return tokenizeCorpus(tok, text, 0)
}

// tokenizeCorpus does LoadCorpus's work on text (nil: the embedded corpus) with up to
// workers goroutines (0 = GOMAXPROCS).
func tokenizeCorpus(tok *tokenizer.Tokenizer, text []byte, workers int) (*Corpus, error) {
	if text == nil {
		zr, err := gzip.NewReader(bytes.NewReader(shakespeareGz))
		if err != nil {
			return nil, fmt.Errorf("dataset: embedded corpus: %w", err)
		}
		if text, err = io.ReadAll(zr); err != nil {
			return nil, fmt.Errorf("dataset: embedded corpus: %w", err)
		}
	}
	sum := sha256.Sum256(text)
	chunks := corpusChunks(text)
	parts := make([][]int, len(chunks))
	parallel.Indexed(len(chunks), workers, func(i int) error {
		parts[i] = tok.Encode(chunks[i])
		return nil
	})
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if n == 0 {
		return nil, errors.New("dataset: the corpus tokenizes to nothing")
	}
	tokens := make([]int, 0, n)
	for _, p := range parts {
		tokens = append(tokens, p...)
	}
	return &Corpus{tok: tok, tokens: tokens, sha: hex.EncodeToString(sum[:])}, nil
}

// corpusChunks splits text into chunks of stripped, non-empty lines joined by a space; a
// chunk closes once it holds corpusChunkChars characters.
func corpusChunks(text []byte) []string {
	var chunks []string
	var b strings.Builder
	chars := 0
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), len(text)+1)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(line)
		chars += len(line)
		if chars >= corpusChunkChars {
			chunks = append(chunks, b.String())
			b.Reset()
			chars = 0
		}
	}
	if b.Len() > 0 {
		chunks = append(chunks, b.String())
	}
	return chunks
}

// Tokens returns the whole token stream. Callers must not modify it.
func (c *Corpus) Tokens() []int { return c.tokens }

// SHA256 returns the hex SHA-256 of the corpus text.
func (c *Corpus) SHA256() string { return c.sha }

// Tokenizer returns the tokenizer the corpus was tokenized with.
func (c *Corpus) Tokenizer() *tokenizer.Tokenizer { return c.tok }

// Prompt returns text that encodes to exactly n tokens: n corpus tokens from a random start
// (wrapping around), decoded, trimmed, and re-encoded; when the round trip changes the count
// (tokens merge or split at the edges) the re-encoded tokens are cut or extended from the
// corpus and the round trip repeated, as vLLM's gen_prompt_decode_to_target_len and AIPerf
// PR #850 do. It draws only from rng, so equal streams give equal prompts.
func (c *Corpus) Prompt(rng *rand.Rand, n int) (string, error) {
	if n <= 0 {
		return "", fmt.Errorf("dataset: prompt of %d tokens: length must be > 0", n)
	}
	ids := make([]int, 0, n+n/4+8)
	for range promptStarts {
		if text, ok := c.fit(rng.IntN(len(c.tokens)), n, ids[:0]); ok {
			return text, nil
		}
	}
	return "", fmt.Errorf("dataset: no prompt of exactly %d tokens after %d tries under tokenizer %s", n, promptStarts, c.tok.Name())
}

// fit tries to turn the n tokens from start into text of exactly n tokens.
func (c *Corpus) fit(start, n int, ids []int) (string, bool) {
	next := start
	ids, next = c.appendFrom(ids, next, n)
	var text []byte
	for range promptFixups {
		text = c.tok.AppendDecode(text[:0], ids)
		s := string(bytes.TrimSpace(text))
		ids = c.tok.AppendEncode(ids[:0], s)
		switch {
		case len(ids) == n:
			return s, true
		case len(ids) > n:
			ids = ids[:n]
		default:
			ids, next = c.appendFrom(ids, next, n-len(ids))
		}
	}
	return "", false
}

// appendFrom appends k corpus tokens starting at position from (wrapping around) and returns
// the position after them.
func (c *Corpus) appendFrom(ids []int, from, k int) ([]int, int) {
	from %= len(c.tokens)
	for k > 0 {
		m := min(k, len(c.tokens)-from)
		ids = append(ids, c.tokens[from:from+m]...)
		k -= m
		from = (from + m) % len(c.tokens)
	}
	return ids, from
}
