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

// addedMatcher finds added tokens in text with a byte trie, so that thousands of them
// (Mistral's <SPECIAL_n>) cost no more per position than a few.
type addedMatcher struct {
	toks  []*addedToken
	nodes []trieNode // nodes[0] is the root
	first [256]bool  // bytes that start some pattern
	only  int        // the single first byte all patterns share, or -1
}

// trieNode is one prefix of some pattern; its children are sorted by byte.
type trieNode struct {
	tok      int32 // index in toks of the pattern ending here, or -1
	children []trieEdge
}

type trieEdge struct {
	b    byte
	node int32
}

func (m *addedMatcher) child(n int32, b byte) int32 {
	for _, e := range m.nodes[n].children {
		if e.b == b {
			return e.node
		}
		if e.b > b {
			break
		}
	}
	return -1
}

func newAddedMatcher(toks []*addedToken) *addedMatcher {
	if len(toks) == 0 {
		return nil
	}
	m := &addedMatcher{toks: toks, nodes: []trieNode{{tok: -1}}, only: -1}
	firsts := 0
	for i, t := range toks {
		p := t.pattern
		if !m.first[p[0]] {
			m.first[p[0]] = true
			m.only = int(p[0])
			firsts++
		}
		n := int32(0)
		for j := 0; j < len(p); j++ {
			c := m.child(n, p[j])
			if c < 0 {
				c = int32(len(m.nodes))
				m.nodes = append(m.nodes, trieNode{tok: -1})
				ch := append(m.nodes[n].children, trieEdge{b: p[j], node: c})
				sort.Slice(ch, func(x, y int) bool { return ch[x].b < ch[y].b })
				m.nodes[n].children = ch
			}
			n = c
		}
		if m.nodes[n].tok < 0 {
			m.nodes[n].tok = int32(i) // the first of equal patterns wins
		}
	}
	if firsts != 1 {
		m.only = -1
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
		} else if !m.first[s[i]] {
			continue
		}
		best, bestEnd := int32(-1), 0
		for n, j := int32(0), i; j < len(s); j++ {
			if n = m.child(n, s[j]); n < 0 {
				break
			}
			if k := m.nodes[n].tok; k >= 0 {
				best, bestEnd = k, j+1
			}
		}
		if best >= 0 {
			return i, bestEnd, m.toks[best]
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
