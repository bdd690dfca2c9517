package mockllm

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
)

// Tokenizer is what the server needs from a tokenizer: the builtin
// *tokenizer.Tokenizer satisfies it. The server counts prompt tokens with
// Count and builds its output vocabulary from Decode and Encode.
type Tokenizer interface {
	Encode(s string) []int
	Count(s string) int
	Decode(ids []int) string
	VocabSize() int
}

// word is one output token: a lowercase ASCII word that is a single
// token both bare (first token of a text) and with a leading space.
type word struct {
	bare, spaced     string // "w" and " w"
	bareID, spacedID int
}

// vocabulary is the deterministic list of output words for a tokenizer.
// A text made of one bare word followed by spaced words re-tokenizes to
// exactly one token per word: byte-level BPE pre-tokenizers split " w"
// pieces apart before merging, so each piece encodes on its own.
type vocabulary struct {
	words []word
}

// minWords is the smallest usable vocabulary; fewer means the tokenizer
// is not a byte-level BPE with whole-word tokens and output would be
// repetitive enough to mislead prefix caches.
const minWords = 64

var vocabCache sync.Map // Tokenizer → *vocabulary (tokenizers are immutable)

// buildVocabulary scans every token id for " w" entries (see
// isSpacedWord) and keeps those where both " w" and "w" encode to one
// token. The result is cached per tokenizer.
func buildVocabulary(tok Tokenizer) (*vocabulary, error) {
	cacheable := reflect.TypeOf(tok).Comparable()
	if cacheable {
		if v, ok := vocabCache.Load(tok); ok {
			return v.(*vocabulary), nil
		}
	}
	v := &vocabulary{}
	id1 := make([]int, 1)
	for id := range tok.VocabSize() {
		id1[0] = id
		s := tok.Decode(id1)
		if !isSpacedWord(s) {
			continue
		}
		sp := tok.Encode(s)
		if len(sp) != 1 || sp[0] != id {
			continue
		}
		bare := tok.Encode(s[1:])
		if len(bare) != 1 {
			continue
		}
		v.words = append(v.words, word{bare: s[1:], spaced: s, bareID: bare[0], spacedID: id})
	}
	if len(v.words) < minWords {
		return nil, fmt.Errorf("mockllm: tokenizer has %d single-token lowercase words (want at least %d): not a byte-level BPE vocabulary", len(v.words), minWords)
	}
	if !cacheable {
		return v, nil
	}
	actual, _ := vocabCache.LoadOrStore(tok, v)
	return actual.(*vocabulary), nil
}

// isSpacedWord accepts " w" with w 2 to 16 lowercase ASCII letters that
// include a vowel (which drops fragments such as "th" or "gx").
func isSpacedWord(s string) bool {
	if len(s) < 3 || len(s) > 17 || s[0] != ' ' {
		return false
	}
	vowel := false
	for i := 1; i < len(s); i++ {
		c := s[i]
		if c < 'a' || c > 'z' {
			return false
		}
		vowel = vowel || strings.IndexByte("aeiouy", c) >= 0
	}
	return vowel
}
