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

// PrefixReuse counts, request by request in the order they are sent, the prompt tokens an
// infinite prefix cache already holds: the leading hash-id blocks some earlier request sent.
// A block is known by its whole prefix (the ids before it and its own), so equal ids after a
// difference do not count; the ids are the dataset's (Turn.HashIDs: scoped to their trace
// when its hash_id_scope is local). It is the reuse a workload offers a server's cache.
type PrefixReuse struct{ seen map[uint64]struct{} }

// Add counts one request of tokens prompt tokens in blocks of blockSize with hash ids ids;
// from block salted on (when salt != 0) the content differs by salt (a cache-bust marker
// inserted there). It returns the request's reused tokens.
func (p *PrefixReuse) Add(ids []int64, blockSize, tokens int, salt uint64, salted int) int {
	if p.seen == nil {
		p.seen = make(map[uint64]struct{})
	}
	h := uint64(0x9e3779b97f4a7c15)
	reused, hit := 0, true
	for i, id := range ids {
		h = splitmix64(h ^ uint64(id))
		if salt != 0 && i == salted {
			h = splitmix64(h ^ salt)
		}
		n := min(blockSize, tokens-i*blockSize)
		if n <= 0 {
			break
		}
		key := h
		if n < blockSize {
			key = splitmix64(h ^ uint64(n)) // a partial block is cached as such
		}
		if _, ok := p.seen[key]; hit && ok {
			reused += n
		} else {
			hit = false
		}
		p.seen[key] = struct{}{}
	}
	return reused
}
