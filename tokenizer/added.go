package tokenizer

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Added tokens (special tokens such as <|im_start|> and extra ones such as <think>) are
// cut out of the text before anything else, like HuggingFace's AddedVocabulary does:
// tokens with "normalized": false are found in the raw text, the rest of the text is
// normalized, and tokens with "normalized": true are then found in the normalized pieces.
// Matching is leftmost-longest over non-overlapping occurrences (the aho-corasick
// MatchKind::LeftmostLongest that HuggingFace uses), then filtered by single_word and
// widened by lstrip/rstrip.

// addedToken is one entry of tokenizer.json's added_tokens.
type addedToken struct {
	id         int
	content    string
	pattern    string // what is searched for: content, or its normalized form
	singleWord bool
	lstrip     bool
	rstrip     bool
	normalized bool
	special    bool
}

// addedMatcher finds added tokens in text.
type addedMatcher struct {
	toks    []*addedToken
	byFirst [256][]int32 // candidates by first byte, longest pattern first
	only    int          // the single first byte all patterns share, or -1
}

func newAddedMatcher(toks []*addedToken) *addedMatcher {
	if len(toks) == 0 {
		return nil
	}
	m := &addedMatcher{toks: toks, only: -1}
	firsts := 0
	for i, t := range toks {
		b := t.pattern[0]
		if len(m.byFirst[b]) == 0 {
			firsts++
			m.only = int(b)
		}
		m.byFirst[b] = append(m.byFirst[b], int32(i))
	}
	if firsts != 1 {
		m.only = -1
	}
	for b := range m.byFirst {
		c := m.byFirst[b]
		sort.SliceStable(c, func(i, j int) bool { return len(toks[c[i]].pattern) > len(toks[c[j]].pattern) })
	}
	return m
}

// next returns the leftmost-longest occurrence of a pattern at or after from, or tok == nil.
func (m *addedMatcher) next(s string, from int) (start, end int, tok *addedToken) {
	for i := from; i < len(s); i++ {
		if m.only >= 0 {
			j := strings.IndexByte(s[i:], byte(m.only))
			if j < 0 {
				return 0, 0, nil
			}
			i += j
		}
		for _, k := range m.byFirst[s[i]] {
			if t := m.toks[k]; strings.HasPrefix(s[i:], t.pattern) {
				return i, i + len(t.pattern), t
			}
		}
	}
	return 0, 0, nil
}

// addedSpan is a piece of text: an added token (tok != nil) or plain text to tokenize.
type addedSpan struct {
	start, end int
	tok        *addedToken
}

// appendSpans cuts s into plain and added-token spans, as HuggingFace's find_matches does.
// Empty plain spans are left out.
func (m *addedMatcher) appendSpans(dst []addedSpan, s string) []addedSpan {
	prev := 0
	for pos := 0; pos < len(s); {
		start, stop, t := m.next(s, pos)
		if t == nil {
			break
		}
		pos = stop
		if start < prev {
			// An rstrip widened the previous token over this one's start; HuggingFace would
			// emit overlapping pieces here, which no text can round-trip, so skip it.
			continue
		}
		if t.singleWord && (endsWithWordChar(s[:start]) || startsWithWordChar(s[stop:])) {
			continue
		}
		if t.lstrip {
			start = max(prev, start-trailingSpaceLen(s[:start]))
		}
		if t.rstrip {
			stop += leadingSpaceLen(s[stop:])
			pos = stop
		}
		if prev < start {
			dst = append(dst, addedSpan{start: prev, end: start})
		}
		dst = append(dst, addedSpan{start: start, end: stop, tok: t})
		prev = stop
	}
	if prev < len(s) {
		dst = append(dst, addedSpan{start: prev, end: len(s)})
	}
	return dst
}

// isWordChar is Rust's char::is_alphanumeric() || c == '_', which single_word uses
// (Alphabetic is the letters, Nl and Other_Alphabetic; Numeric is N).
func isWordChar(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Other_Alphabetic, r)
}

func endsWithWordChar(s string) bool {
	r, n := utf8.DecodeLastRuneInString(s)
	return n > 0 && isWordChar(r)
}

func startsWithWordChar(s string) bool {
	r, n := utf8.DecodeRuneInString(s)
	return n > 0 && isWordChar(r)
}

// trailingSpaceLen and leadingSpaceLen measure Unicode whitespace (Rust's
// char::is_whitespace) at the end or start of s, in bytes.
func trailingSpaceLen(s string) int {
	n := 0
	for len(s) > n {
		r, size := utf8.DecodeLastRuneInString(s[:len(s)-n])
		if !unicode.IsSpace(r) {
			break
		}
		n += size
	}
	return n
}

func leadingSpaceLen(s string) int {
	n := 0
	for n < len(s) {
		r, size := utf8.DecodeRuneInString(s[n:])
		if !unicode.IsSpace(r) {
			break
		}
		n += size
	}
	return n
}
