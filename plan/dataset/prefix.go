package dataset

// Prefix synthesis: prompts of an exact token count, built from hash_id blocks so that
// requests sharing leading hash_ids share byte-identical (and token-identical) prefixes.
//
// The difficulty is that text, not tokens, goes on the wire: a prompt is right only if the
// server's tokenizer, encoding the concatenated text, gives back exactly the tokens we meant.
// BPE merges across a careless boundary, so we build text out of pieces that byte-level
// BPE tokenizers (GPT-2, Llama 3, Qwen pre-tokenizer patterns) always keep apart:
//
//   - a word token: one space then letters (" king"), which the pre-tokenizer always splits
//     off as a piece of its own: the letters run stops at the next space, and nothing before
//     a space can absorb it;
//   - a punctuation token (",", " --") directly after a word token and before another word
//     token, so punctuation never runs into punctuation and never meets a newline (the
//     Qwen/Llama 3 pattern glues newlines onto preceding punctuation);
//   - the separator: one newline token. After a word it starts a piece of its own; before a
//     word (" king") it ends one.
//
// The corpus token stream is filtered down to word and punctuation tokens that encode back
// to themselves on their own; every token boundary of the filtered stream is then a
// pre-tokenizer boundary, so any window of it re-encodes to exactly its tokens, and windows
// concatenate without interacting. A block is the separator followed by BlockSize-1 stream
// tokens that start and end on a word; the last block of a request is the first remainder
// tokens of its block, so it is a token prefix of the same id's full block. newPromptSynth
// checks all of this empirically under the tokenizer before any prompt is built, and fails
// clearly for a tokenizer where it does not hold.
//
// A block's content is two windows of the filtered stream (a head and a tail) picked by a
// keyed permutation of the hash_id, so distinct ids get distinct contents (up to about 3·10^10
// ids at 512-token blocks). Blocks are never materialized: a prompt is the concatenation of
// substrings of one text, so the whole 145-million-token Mooncake trace builds in about the
// time it takes to copy its bytes.

import (
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/llmbench/llmbench/tokenizer"
)

// Token kinds of the filtered stream.
const (
	kindOther uint8 = iota
	kindWord        // a space and letters
	kindPunct       // ASCII punctuation, optionally after one space
)

// promptSynth builds prompts from the filtered corpus stream of one tokenizer and corpus.
type promptSynth struct {
	tok   *tokenizer.Tokenizer
	sepID int
	sep   string
	ids   []int32 // the filtered stream
	kinds []uint8
	text  string  // the stream's token texts, concatenated
	off   []int32 // off[i] is where token i starts in text; off[len(ids)] == len(text)
	words []int32 // positions of word tokens: where fresh prompts start

	mu     sync.Mutex
	starts map[int][]int32 // window length → wordEndStarts
}

var promptSynthCache struct {
	sync.Mutex
	m map[*Corpus]*promptSynth
}

// promptSynthFor returns the synthesizer of tok and corpus, building and verifying it once.
func promptSynthFor(tok *tokenizer.Tokenizer, c *Corpus) (*promptSynth, error) {
	if c == nil {
		return nil, errors.New("dataset: prompt synthesis: no corpus")
	}
	promptSynthCache.Lock()
	defer promptSynthCache.Unlock()
	if s := promptSynthCache.m[c]; s != nil && s.tok == tok {
		return s, nil
	}
	s, err := newPromptSynth(tok, c.Tokens())
	if err != nil {
		return nil, err
	}
	if promptSynthCache.m == nil {
		promptSynthCache.m = make(map[*Corpus]*promptSynth)
	}
	promptSynthCache.m[c] = s
	return s, nil
}

// separatorText is the block separator: a newline, which every byte-level pre-tokenizer
// pattern splits from a following space-and-letters piece and from a preceding letter.
const separatorText = "\n"

// minStreamTokens is the least filtered stream that gives varied prompts.
const minStreamTokens = 1024

func newPromptSynth(tok *tokenizer.Tokenizer, stream []int) (*promptSynth, error) {
	if tok == nil {
		return nil, errors.New("dataset: prompt synthesis: no tokenizer")
	}
	sepIDs := tok.Encode(separatorText)
	if len(sepIDs) != 1 {
		return nil, fmt.Errorf("dataset: tokenizer %s encodes a newline to %d tokens; prefix synthesis needs one", tok.Name(), len(sepIDs))
	}
	s := &promptSynth{tok: tok, sepID: sepIDs[0], sep: separatorText, starts: make(map[int][]int32)}
	kindOf := make(map[int]uint8)
	texts := make(map[int]string)
	var b strings.Builder
	var dec []byte
	for _, id := range stream {
		k, seen := kindOf[id]
		if !seen {
			dec = tok.AppendDecode(dec[:0], []int{id})
			t := string(dec)
			k = classify(tok, id, t)
			kindOf[id] = k
			if k != kindOther {
				texts[id] = t
			}
		}
		switch k {
		case kindWord:
		case kindPunct:
			if len(s.kinds) == 0 || s.kinds[len(s.kinds)-1] != kindWord {
				continue // punctuation only ever follows a word
			}
		default:
			continue
		}
		if len(s.ids) >= 1<<30 || b.Len() >= 1<<30 {
			break // int32 offsets; no corpus comes near
		}
		if k == kindWord {
			s.words = append(s.words, int32(len(s.ids)))
		}
		s.off = append(s.off, int32(b.Len()))
		s.ids = append(s.ids, int32(id))
		s.kinds = append(s.kinds, k)
		b.WriteString(texts[id])
	}
	s.off = append(s.off, int32(b.Len()))
	s.text = b.String()
	if len(s.ids) < minStreamTokens {
		return nil, fmt.Errorf("dataset: tokenizer %s: only %d corpus tokens are standalone words or punctuation; prefix synthesis needs %d", tok.Name(), len(s.ids), minStreamTokens)
	}
	if err := s.verify(); err != nil {
		return nil, err
	}
	return s, nil
}

// classify returns the kind of token id whose text is t: a word or punctuation token that
// encodes back to itself alone, or kindOther.
func classify(tok *tokenizer.Tokenizer, id int, t string) uint8 {
	if t == "" || !utf8.ValidString(t) {
		return kindOther
	}
	k := kindOther
	switch {
	case isWordText(t):
		k = kindWord
	case isPunctText(t):
		k = kindPunct
	default:
		return kindOther
	}
	enc := tok.Encode(t)
	if len(enc) != 1 || enc[0] != id {
		return kindOther
	}
	return k
}

func isWordText(t string) bool {
	if len(t) < 2 || t[0] != ' ' {
		return false
	}
	for _, r := range t[1:] {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

func isPunctText(t string) bool {
	t = strings.TrimPrefix(t, " ")
	if t == "" || len(t) > 8 {
		return false
	}
	for i := 0; i < len(t); i++ {
		if !strings.ContainsRune("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", rune(t[i])) {
			return false
		}
	}
	return true
}

// wordEndStarts returns the stream positions where a window of k tokens starts on a word
// and ends on a word, so that a block's content meets the next block's separator on a letter.
func (s *promptSynth) wordEndStarts(k int) []int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.starts[k]; ok {
		return st
	}
	n := len(s.ids)
	st := make([]int32, 0, len(s.words))
	for _, p := range s.words {
		if s.kinds[(int(p)+k-1)%n] == kindWord {
			st = append(st, p)
		}
	}
	s.starts[k] = st
	return st
}

// windowLen returns the bytes of k stream tokens from position p, wrapping around.
func (s *promptSynth) windowLen(p, k int) int {
	n := len(s.ids)
	total := 0
	for k > 0 {
		e := min(p+k, n)
		total += int(s.off[e] - s.off[p])
		k -= e - p
		p = 0
	}
	return total
}

// appendWindow appends the text of k stream tokens from position p, wrapping around.
func (s *promptSynth) appendWindow(b *strings.Builder, p, k int) {
	n := len(s.ids)
	for k > 0 {
		e := min(p+k, n)
		b.WriteString(s.text[s.off[p]:s.off[e]])
		k -= e - p
		p = 0
	}
}

// appendWindowIDs appends the ids of k stream tokens from position p, wrapping around.
func (s *promptSynth) appendWindowIDs(dst []int, p, k int) []int {
	n := len(s.ids)
	for k > 0 {
		e := min(p+k, n)
		for _, id := range s.ids[p:e] {
			dst = append(dst, int(id))
		}
		k -= e - p
		p = 0
	}
	return dst
}

// blocks is the hash_id → block mapping for one block size and seed. A block's content
// (its size-1 tokens after the separator) is two windows of the stream: a head of headLen
// tokens starting on a word, and a tail starting on a word and ending on one. A keyed
// permutation of the hash id picks the pair, so distinct ids get distinct contents until
// there are more ids than pairs (about 3·10^10 at 512 tokens with the builtin corpus), far
// beyond what one stream window per id would give (the stream's length).
type blocks struct {
	s        *promptSynth
	size     int
	headLen  int
	heads    []int32 // where heads may start (every word; unused when headLen is 0)
	tails    []int32 // where tails may start
	perm     feistel
	numTails uint64
}

func (s *promptSynth) blocks(size int, seed uint64) (*blocks, error) {
	m := size - 1
	bl := &blocks{s: s, size: size, headLen: m / 2, heads: s.words}
	bl.tails = s.wordEndStarts(m - bl.headLen)
	bl.numTails = uint64(len(bl.tails))
	if bl.numTails == 0 {
		return nil, fmt.Errorf("dataset: tokenizer %s: no corpus window of %d tokens ends on a word; prefix synthesis cannot build %d-token blocks", s.tok.Name(), m-bl.headLen, size)
	}
	n := bl.numTails
	if bl.headLen > 0 {
		n *= uint64(len(bl.heads))
	}
	bl.perm = newFeistel(n, seed)
	return bl, nil
}

// content returns the head and tail start of hash id h's content.
func (bl *blocks) content(h int64) (head, tail int) {
	k := bl.perm.apply(uint64(h) % bl.perm.n)
	tail = int(bl.tails[k%bl.numTails])
	if bl.headLen > 0 {
		head = int(bl.heads[k/bl.numTails])
	}
	return head, tail
}

// blockLen returns the bytes of the first k tokens of id h's block.
func (bl *blocks) blockLen(h int64, k int) int {
	head, tail := bl.content(h)
	c := k - 1
	a := min(c, bl.headLen)
	return len(bl.s.sep) + bl.s.windowLen(head, a) + bl.s.windowLen(tail, c-a)
}

// appendBlock appends the first k tokens of id h's block: the separator, then content.
func (bl *blocks) appendBlock(b *strings.Builder, h int64, k int) {
	head, tail := bl.content(h)
	c := k - 1
	a := min(c, bl.headLen)
	b.WriteString(bl.s.sep)
	bl.s.appendWindow(b, head, a)
	bl.s.appendWindow(b, tail, c-a)
}

// appendBlockIDs appends the token ids of the first k tokens of id h's block.
func (bl *blocks) appendBlockIDs(dst []int, h int64, k int) []int {
	head, tail := bl.content(h)
	c := k - 1
	a := min(c, bl.headLen)
	dst = append(dst, bl.s.sepID)
	dst = bl.s.appendWindowIDs(dst, head, a)
	return bl.s.appendWindowIDs(dst, tail, c-a)
}

// blockTokens returns how many tokens of the i-th of n blocks a prompt uses.
func (bl *blocks) blockTokens(i, n, last int) int {
	if i == n-1 {
		return last
	}
	return bl.size
}

// promptLen returns the bytes of the prompt of ids whose last block holds last tokens.
func (bl *blocks) promptLen(ids []int64, last int) int {
	total := 0
	for i, h := range ids {
		total += bl.blockLen(h, bl.blockTokens(i, len(ids), last))
	}
	return total
}

// appendPrompt appends the prompt of hash ids ids whose last block holds last tokens.
func (bl *blocks) appendPrompt(b *strings.Builder, ids []int64, last int) {
	for i, h := range ids {
		bl.appendBlock(b, h, bl.blockTokens(i, len(ids), last))
	}
}

// promptIDs returns the token ids appendPrompt's text encodes to.
func (bl *blocks) promptIDs(dst []int, ids []int64, last int) []int {
	for i, h := range ids {
		dst = bl.appendBlockIDs(dst, h, bl.blockTokens(i, len(ids), last))
	}
	return dst
}

// freshStart picks where a fresh (uncached, unshared) prompt starts: on a word.
func (s *promptSynth) freshStart(rng *rand.Rand) int {
	return int(s.words[rng.IntN(len(s.words))])
}

// fresh returns a prompt of exactly n tokens that shares no block with any other.
func (s *promptSynth) fresh(rng *rand.Rand, n int) string {
	if n <= 0 {
		return ""
	}
	p := s.freshStart(rng)
	var b strings.Builder
	b.Grow(s.windowLen(p, n))
	s.appendWindow(&b, p, n)
	return b.String()
}

// hashPrompt returns the prompt of n tokens for hash ids ids (non-empty) in blocks of bl:
// full blocks, the last holding the remainder; or, when tail is true and n exceeds the
// blocks (a trace whose hash_ids cover only the cached prefix), full blocks and then fresh
// tokens drawn from rng.
func (bl *blocks) hashPrompt(ids []int64, n int, tail bool, rng *rand.Rand) (string, error) {
	if tail && n > len(ids)*bl.size {
		extra := n - len(ids)*bl.size
		p := bl.s.freshStart(rng)
		var b strings.Builder
		b.Grow(bl.promptLen(ids, bl.size) + bl.s.windowLen(p, extra))
		bl.appendPrompt(&b, ids, bl.size)
		bl.s.appendWindow(&b, p, extra)
		return b.String(), nil
	}
	last, err := hashRemainder(ids, n, bl.size)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.Grow(bl.promptLen(ids, last))
	bl.appendPrompt(&b, ids, last)
	return b.String(), nil
}

// hashPromptIDs appends the tokens of hashPrompt(ids, n, tail, rng)'s text, given a fresh
// rng of the same seed, without building or tokenizing the text.
func (bl *blocks) hashPromptIDs(dst []int, ids []int64, n int, tail bool, rng *rand.Rand) []int {
	if tail && n > len(ids)*bl.size {
		p := bl.s.freshStart(rng)
		dst = bl.promptIDs(dst, ids, bl.size)
		return bl.s.appendWindowIDs(dst, p, n-len(ids)*bl.size)
	}
	last, err := hashRemainder(ids, n, bl.size)
	if err != nil {
		return dst
	}
	return bl.promptIDs(dst, ids, last)
}

// verify checks, under the tokenizer, that synthesized text encodes to exactly the tokens it
// was built from: blocks of several sizes concatenated in arbitrary orders with a partial
// last block, a prefix-only prompt with a fresh tail, and fresh prompts. It runs once per
// tokenizer and corpus (a few tens of thousands of tokens).
func (s *promptSynth) verify() error {
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(what, text string, want []int) error {
		got := s.tok.Encode(text)
		if slices.Equal(got, want) {
			return nil
		}
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		return fmt.Errorf("dataset: tokenizer %s: a synthesized %s re-encodes to %d tokens instead of %d (first difference at token %d); prefix synthesis does not work with this tokenizer", s.tok.Name(), what, len(got), len(want), i)
	}
	for _, size := range []int{2, 3, 16, 512} {
		bl, err := s.blocks(size, rng.Uint64())
		if err != nil {
			return err
		}
		ids := make([]int64, 12)
		for i := range ids {
			ids[i] = int64(rng.Uint64())
		}
		ids[5] = ids[2] // a repeated block, as real traces have
		for _, last := range []int{1, size/2 + 1, size} {
			n := (len(ids)-1)*size + last
			text, err := bl.hashPrompt(ids, n, false, nil)
			if err != nil {
				return err
			}
			if err := check("prompt", text, bl.promptIDs(nil, ids, last)); err != nil {
				return err
			}
		}
		text, err := bl.hashPrompt(ids, len(ids)*size+37, true, rand.New(rand.NewPCG(3, 4)))
		if err != nil {
			return err
		}
		want := bl.promptIDs(nil, ids, size)
		want = s.appendWindowIDs(want, s.freshStart(rand.New(rand.NewPCG(3, 4))), 37)
		if err := check("prefix-only prompt", text, want); err != nil {
			return err
		}
	}
	for _, n := range []int{1, 2, 77, 1000} {
		seed := rng.Uint64()
		text := s.fresh(rand.New(rand.NewPCG(seed, 0)), n)
		want := s.appendWindowIDs(nil, s.freshStart(rand.New(rand.NewPCG(seed, 0))), n)
		if err := check("prompt", text, want); err != nil {
			return err
		}
	}
	return nil
}

// feistel is a keyed permutation of [0, n): a balanced Feistel network over the smallest
// even number of bits that holds n, cycle-walking values that land outside. Distinct inputs
// below n give distinct outputs, so distinct hash ids get distinct blocks while there are
// windows enough.
type feistel struct {
	n    uint64
	half uint
	keys [4]uint64
}

func newFeistel(n, seed uint64) feistel {
	f := feistel{n: max(n, 1)}
	w := uint(bits.Len64(f.n - 1))
	f.half = max((w+1)/2, 1)
	for i := range f.keys {
		f.keys[i] = splitmix64(seed + uint64(i+1)*0x9e3779b97f4a7c15)
	}
	return f
}

func (f feistel) apply(x uint64) uint64 {
	if f.n <= 1 {
		return 0
	}
	mask := uint64(1)<<f.half - 1
	for {
		l, r := x>>f.half, x&mask
		for _, k := range f.keys {
			l, r = r, l^(splitmix64(r^k)&mask)
		}
		x = l<<f.half | r
		if x < f.n {
			return x
		}
	}
}
