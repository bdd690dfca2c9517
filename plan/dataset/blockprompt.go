package dataset

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// BlockPrompt is a prompt given by hash-id blocks (prefix.go), built only when its body is
// rendered: an agentic trace's requests each resend their whole growing context, far more
// text than a plan compiler should hold at once. Its text is what the Mooncake path builds
// for the same ids and length (hashPrompt, a partial last block or a fresh tail past the
// blocks), so equal leading ids in one scope give byte-identical prefixes and the length is
// exact under the tokenizer. Its first System tokens are the tool and system prefix.
type BlockPrompt struct {
	bl *blocks
	// IDs are the hash ids; Length the prompt's tokens; System the leading tokens that form
	// the system message (tool_tokens + system_tokens, at most Length).
	IDs    []int64
	Length int
	System int
	// seed and key pick the fresh tokens past the blocks, and of a prompt without ids.
	seed, key uint64
}

// Texts returns the prompt split into its system part (the first System tokens) and the
// rest, each of which re-encodes to exactly its tokens: the split falls on a token boundary
// of the synthesized stream, which is always a pre-tokenizer boundary.
func (b *BlockPrompt) Texts() (system, user string, err error) {
	rng := rand.New(rand.NewPCG(b.seed, b.key))
	s := b.bl.s
	if len(b.IDs) == 0 {
		if b.Length == 0 {
			return "", "", nil
		}
		p := s.freshStart(rng)
		var sb strings.Builder
		sb.Grow(s.windowLen(p, b.Length))
		s.appendWindow(&sb, p, b.Length)
		text := sb.String()
		at := s.windowLen(p, b.System)
		return text[:at], text[at:], nil
	}
	text, err := b.bl.hashPrompt(b.IDs, b.Length, true, rng)
	if err != nil {
		return "", "", err
	}
	at := b.splitByte(text)
	return text[:at], text[at:], nil
}

// splitByte is the byte offset in text (the prompt of b) where its System-th token starts.
func (b *BlockPrompt) splitByte(text string) int {
	bl := b.bl
	blockTokens := len(b.IDs) * bl.size
	if b.Length > blockTokens { // full blocks, then a fresh tail
		if b.System >= blockTokens {
			// In the tail: its start was drawn first after nothing else, from the same rng.
			rng := rand.New(rand.NewPCG(b.seed, b.key))
			p := bl.s.freshStart(rng)
			return bl.promptLen(b.IDs, bl.size) + bl.s.windowLen(p, b.System-blockTokens)
		}
		return b.hashedBytes(b.System, bl.size)
	}
	last := b.Length - (len(b.IDs)-1)*bl.size
	if b.System >= b.Length {
		return len(text)
	}
	return b.hashedBytes(b.System, last)
}

// hashedBytes is the bytes of the first k tokens of the blocks of b (k within them), whose
// last block holds last tokens.
func (b *BlockPrompt) hashedBytes(k, last int) int {
	bl := b.bl
	total, tokens := 0, 0
	for i, h := range b.IDs {
		n := bl.blockTokens(i, len(b.IDs), last)
		if tokens+n >= k {
			if k == tokens {
				return total
			}
			return total + bl.blockLen(h, k-tokens)
		}
		total += bl.blockLen(h, n)
		tokens += n
	}
	return total
}

// CacheBustMarker returns n tokens of corpus text, drawn from rng, that start and end on a
// word: a session's cache-bust marker (plan --cache-bust). Put between a BlockPrompt's system
// part and the rest, or before either, it keeps every token boundary, so the prompt's length
// grows by exactly n.
func CacheBustMarker(c *Corpus, rng *rand.Rand, n int) (string, error) {
	s, err := promptSynthFor(c.Tokenizer(), c)
	if err != nil {
		return "", err
	}
	starts := s.wordEndStarts(n)
	if len(starts) == 0 {
		return "", fmt.Errorf("dataset: no corpus window of %d tokens ends on a word", n)
	}
	p := int(starts[rng.IntN(len(starts))])
	var sb strings.Builder
	sb.Grow(s.windowLen(p, n))
	s.appendWindow(&sb, p, n)
	return sb.String(), nil
}

// BlockSize is the tokens of one of the prompt's blocks.
func (b *BlockPrompt) BlockSize() int { return b.bl.size }

// AppendTokens appends the token ids the prompt's text (system part and rest, concatenated)
// encodes to, built as the text is, without tokenizing it.
func (b *BlockPrompt) AppendTokens(dst []int) []int {
	rng := rand.New(rand.NewPCG(b.seed, b.key))
	s := b.bl.s
	if len(b.IDs) == 0 {
		if b.Length == 0 {
			return dst
		}
		return s.appendWindowIDs(dst, s.freshStart(rng), b.Length)
	}
	return b.bl.hashPromptIDs(dst, b.IDs, b.Length, true, rng)
}
