package tokenizer

import (
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// The split patterns of byte-level BPE tokenizers are regular expressions run by Oniguruma
// (leftmost-first alternation, greedy backtracking, with look-ahead), which Go's regexp
// cannot express. Every such pattern in the wild is an alternation of a handful of
// standard pieces, so the pattern is cut at its top-level '|' and each alternative is
// mapped to an atom: a hand-written matcher that returns exactly the match the
// backtracking engine would find at that position. The scanner tries the atoms in order
// at each position, like the regex engine does, and costs a table lookup per character.

// Character class bits, from the Unicode general categories of Go's unicode package.
const (
	clsL     = 1 << iota // \p{L}
	clsN                 // \p{N}
	clsS                 // \s: Oniguruma's Unicode \s is U+0009–U+000D, U+0085 and Z*; Go's White_Space set
	clsUpper             // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	clsLower             // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
	clsCRLF              // \r or \n
)

// classTable maps every code point to its class bits through 256-entry blocks shared
// between identical ranges (unassigned planes, CJK ideographs...): about 80 KB.
type classTable struct {
	ascii  [utf8.RuneSelf]uint8 // the first block again, without an indirection
	index  [0x110000 >> 8]uint16
	blocks [][256]uint8
}

var (
	classOnce sync.Once
	classes   *classTable
)

func classData() *classTable {
	classOnce.Do(func() { classes = buildClasses() })
	return classes
}

func buildClasses() *classTable {
	full := make([]uint8, 0x110000)
	mark := func(bit uint8, tabs ...*unicode.RangeTable) {
		for _, tab := range tabs {
			for _, r := range tab.R16 {
				for c := uint32(r.Lo); c <= uint32(r.Hi); c += uint32(r.Stride) {
					full[c] |= bit
				}
			}
			for _, r := range tab.R32 {
				for c := r.Lo; c <= r.Hi; c += r.Stride {
					full[c] |= bit
				}
			}
		}
	}
	mark(clsL, unicode.L)
	mark(clsN, unicode.N)
	mark(clsS, unicode.White_Space)
	mark(clsUpper, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo, unicode.M)
	mark(clsLower, unicode.Ll, unicode.Lm, unicode.Lo, unicode.M)
	full['\r'] |= clsCRLF
	full['\n'] |= clsCRLF

	t := &classTable{}
	seen := map[[256]uint8]uint16{}
	for b := range t.index {
		var blk [256]uint8
		copy(blk[:], full[b<<8:])
		id, ok := seen[blk]
		if !ok {
			id = uint16(len(t.blocks))
			t.blocks = append(t.blocks, blk)
			seen[blk] = id
		}
		t.index[b] = id
	}
	copy(t.ascii[:], full)
	return t
}

// at returns the class bits and byte length of the character at s[i]. A byte that is not
// valid UTF-8 counts as a one-byte character of no class (punctuation-like), so that such
// input still encodes losslessly byte by byte.
func (t *classTable) at(s string, i int) (uint8, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return t.ascii[c], 1
	}
	return t.atRune(s, i)
}

func (t *classTable) atRune(s string, i int) (uint8, int) {
	r, n := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && n == 1 {
		return 0, 1
	}
	return t.blocks[t.index[r>>8]][r&0xFF], n
}

// atomKind names one standard alternative of a split pattern.
type atomKind uint8

const (
	atomLiteral           atomKind = iota // a fixed string, e.g. 's in GPT-2's pattern
	atomContractions                      // (?i:'s|'t|'re|'ve|'m|'ll|'d) or its case-sensitive (?:...) form
	atomLetters                           // [^\r\n\p{L}\p{N}]?\p{L}+
	atomSpaceLetters                      // ` ?\p{L}+`
	atomNumbers                           // \p{N}, \p{N}{1,3}, \p{N}+, ` ?\p{N}+`
	atomPunct                             // ` ?[^\s\p{L}\p{N}]+` then [\r\n]* or [\r\n/]* or nothing
	atomNewlines                          // \s*[\r\n]+
	atomSpacesNoLookahead                 // \s+(?!\S)
	atomSpaces                            // \s+
	atomCasedLower                        // [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+
	atomCasedUpper                        // [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*
)

// atom is one alternative with its parameters.
type atom struct {
	kind        atomKind
	lit         string // atomLiteral
	ignoreCase  bool   // atomContractions, and the contraction suffix of cased atoms
	spacePrefix bool   // atomNumbers: ` ?` before the digits
	maxDigits   int    // atomNumbers: 0 = unbounded
	trail       string // atomPunct: bytes of the trailing class (e.g. "\r\n")
	suffix      bool   // cased atoms: optional (?i:'s|'t|...) after the word
}

const (
	reContractionsCI = `(?i:'s|'t|'re|'ve|'m|'ll|'d)`
	reContractionsCS = `(?:'s|'t|'re|'ve|'m|'ll|'d)`
	reUpper          = `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`
	reLower          = `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`
	rePrefix         = `[^\r\n\p{L}\p{N}]?`
)

// knownAtoms maps the source text of each supported alternative to its matcher.
var knownAtoms = map[string]atom{
	reContractionsCI:                         {kind: atomContractions, ignoreCase: true},
	reContractionsCS:                         {kind: atomContractions},
	rePrefix + `\p{L}+`:                      {kind: atomLetters},
	` ?\p{L}+`:                               {kind: atomSpaceLetters},
	`\p{N}`:                                  {kind: atomNumbers, maxDigits: 1},
	`\p{N}{1,3}`:                             {kind: atomNumbers, maxDigits: 3},
	`\p{N}+`:                                 {kind: atomNumbers},
	` ?\p{N}+`:                               {kind: atomNumbers, spacePrefix: true},
	` ?[^\s\p{L}\p{N}]+`:                     {kind: atomPunct},
	` ?[^\s\p{L}\p{N}]+[\r\n]*`:              {kind: atomPunct, trail: "\r\n"},
	` ?[^\s\p{L}\p{N}]+[\r\n/]*`:             {kind: atomPunct, trail: "\r\n/"},
	`\s*[\r\n]+`:                             {kind: atomNewlines},
	`\s+(?!\S)`:                              {kind: atomSpacesNoLookahead},
	`\s+`:                                    {kind: atomSpaces},
	rePrefix + reUpper + `*` + reLower + `+`: {kind: atomCasedLower},
	rePrefix + reUpper + `+` + reLower + `*`: {kind: atomCasedUpper},
	rePrefix + reUpper + `*` + reLower + `+` + reContractionsCI + `?`: {kind: atomCasedLower, suffix: true, ignoreCase: true},
	rePrefix + reUpper + `+` + reLower + `*` + reContractionsCI + `?`: {kind: atomCasedUpper, suffix: true, ignoreCase: true},
}

// gpt2Pattern is the split regex built into HuggingFace's ByteLevel pre-tokenizer
// (use_regex: true), from OpenAI's GPT-2 encoder.
const gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

// splitter finds the pieces of a Split(Regex, behavior Isolated) pre-tokenizer.
type splitter struct {
	pattern string
	atoms   []atom
	cls     *classTable
}

// newSplitter compiles a pattern into atoms, or names the alternative it cannot handle.
func newSplitter(pattern string) (*splitter, error) {
	alts, err := splitAlternatives(pattern)
	if err != nil {
		return nil, err
	}
	sp := &splitter{pattern: pattern, cls: classData()}
	for _, alt := range alts {
		a, ok := knownAtoms[alt]
		if !ok && isLiteral(alt) {
			a, ok = atom{kind: atomLiteral, lit: alt}, true
		}
		if !ok {
			return nil, fmt.Errorf("split regex %q: alternative %q is not supported (supported: the GPT-2, Llama 3/cl100k, Qwen2/3, o200k and Tekken patterns)", pattern, alt)
		}
		sp.atoms = append(sp.atoms, a)
	}
	return sp, nil
}

// splitAlternatives cuts a pattern at the '|' that are outside groups and classes.
func splitAlternatives(p string) ([]string, error) {
	var alts []string
	depth, start, inClass := 0, 0, false
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\':
			i++ // the escaped byte cannot open or close anything
		case inClass:
			if c == ']' {
				inClass = false
			}
		case c == '[':
			inClass = true
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("split regex %q: unbalanced ')'", p)
			}
		case c == '|' && depth == 0:
			alts = append(alts, p[start:i])
			start = i + 1
		}
	}
	if depth != 0 || inClass {
		return nil, fmt.Errorf("split regex %q: unbalanced group or class", p)
	}
	alts = append(alts, p[start:])
	for _, a := range alts {
		if a == "" {
			return nil, fmt.Errorf("split regex %q: empty alternative", p)
		}
	}
	return alts, nil
}

// isLiteral reports whether a regex alternative matches only itself.
func isLiteral(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '\'' || c == ' ' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// next returns the end of the piece that starts at i: the match there, or else the
// unmatched gap up to the next position where a match starts (behavior Isolated keeps
// gaps as pieces of their own; the supported patterns leave none, but literals can).
func (sp *splitter) next(s string, i int) int {
	if end := sp.match(s, i); end >= 0 {
		return end
	}
	for j := i; j < len(s); {
		_, n := sp.cls.at(s, j)
		j += n
		if j >= len(s) || sp.match(s, j) >= 0 {
			return j
		}
	}
	return len(s)
}

// match returns the end of the match starting at i, or -1: the first atom that matches wins.
func (sp *splitter) match(s string, i int) int {
	c0, n0 := sp.cls.at(s, i)
	for k := range sp.atoms {
		if end := sp.matchAtom(&sp.atoms[k], s, i, c0, n0); end >= 0 {
			return end
		}
	}
	return -1
}

// matchAtom matches one alternative at i, where the character is of class c0 and n0 bytes.
func (sp *splitter) matchAtom(a *atom, s string, i int, c0 uint8, n0 int) int {
	t := sp.cls
	switch a.kind {
	case atomLiteral:
		if strings.HasPrefix(s[i:], a.lit) {
			return i + len(a.lit)
		}
	case atomContractions:
		return contraction(s, i, a.ignoreCase)
	case atomLetters:
		if c0&clsL != 0 {
			return sp.run(s, i, clsL)
		}
		if c0&(clsL|clsN|clsCRLF) == 0 && i+n0 < len(s) {
			if c1, _ := t.at(s, i+n0); c1&clsL != 0 {
				return sp.run(s, i+n0, clsL)
			}
		}
	case atomSpaceLetters:
		if s[i] == ' ' && i+1 < len(s) {
			if c1, _ := t.at(s, i+1); c1&clsL != 0 {
				return sp.run(s, i+1, clsL)
			}
		}
		if c0&clsL != 0 {
			return sp.run(s, i, clsL)
		}
	case atomNumbers:
		p := i
		if a.spacePrefix && s[i] == ' ' && i+1 < len(s) {
			if c1, _ := t.at(s, i+1); c1&clsN != 0 {
				p = i + 1
			}
		}
		end, count := p, 0
		for end < len(s) && (a.maxDigits == 0 || count < a.maxDigits) {
			c, n := t.at(s, end)
			if c&clsN == 0 {
				break
			}
			end += n
			count++
		}
		if count > 0 {
			return end
		}
	case atomPunct:
		p := i
		if s[i] == ' ' {
			// ` ?` then at least one other character: the space alone is \s, so without the
			// optional space the alternative cannot match here.
			if i+1 >= len(s) {
				return -1
			}
			if c1, _ := t.at(s, i+1); c1&(clsS|clsL|clsN) != 0 {
				return -1
			}
			p = i + 1
		} else if c0&(clsS|clsL|clsN) != 0 {
			return -1
		}
		end := p
		for end < len(s) {
			c, n := t.at(s, end)
			if c&(clsS|clsL|clsN) != 0 {
				break
			}
			end += n
		}
		for end < len(s) && strings.IndexByte(a.trail, s[end]) >= 0 {
			end++
		}
		return end
	case atomNewlines:
		// \s* takes the whole whitespace run, then gives back characters until [\r\n]+ can
		// match: the match ends just after the run's last \r or \n.
		last := -1
		for end := i; end < len(s); {
			c, n := t.at(s, end)
			if c&clsS == 0 {
				break
			}
			if c&clsCRLF != 0 {
				last = end
			}
			end += n
		}
		if last >= 0 {
			return last + 1
		}
	case atomSpacesNoLookahead:
		// \s+ takes the whole run; (?!\S) then holds at the end of input, or after giving
		// back the run's last character when the run has at least two.
		end, lastStart, count := i, i, 0
		for end < len(s) {
			c, n := t.at(s, end)
			if c&clsS == 0 {
				break
			}
			lastStart = end
			end += n
			count++
		}
		if count > 0 && end == len(s) {
			return end
		}
		if count >= 2 {
			return lastStart
		}
	case atomSpaces:
		if c0&clsS != 0 {
			return sp.run(s, i, clsS)
		}
	case atomCasedLower:
		end := -1
		if c0&(clsL|clsN|clsCRLF) == 0 {
			end = sp.upperThenLower(s, i+n0)
		}
		if end < 0 {
			end = sp.upperThenLower(s, i)
		}
		if end >= 0 && a.suffix {
			if e := contraction(s, end, a.ignoreCase); e >= 0 {
				end = e
			}
		}
		return end
	case atomCasedUpper:
		end := -1
		if c0&(clsL|clsN|clsCRLF) == 0 && i+n0 < len(s) {
			if c1, _ := t.at(s, i+n0); c1&clsUpper != 0 {
				end = sp.run(s, sp.run(s, i+n0, clsUpper), clsLower)
			}
		}
		if end < 0 && c0&clsUpper != 0 {
			end = sp.run(s, sp.run(s, i, clsUpper), clsLower)
		}
		if end >= 0 && a.suffix {
			if e := contraction(s, end, a.ignoreCase); e >= 0 {
				end = e
			}
		}
		return end
	}
	return -1
}

// run returns the end of the longest run of characters with any of bits, starting at i.
func (sp *splitter) run(s string, i int, bits uint8) int {
	t := sp.cls
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			if t.ascii[c]&bits == 0 {
				break
			}
			i++
			continue
		}
		c, n := t.atRune(s, i)
		if c&bits == 0 {
			break
		}
		i += n
	}
	return i
}

// upperThenLower matches [Upper]*[Lower]+ at p the way a backtracking engine does: the
// upper run is taken whole and given back one character at a time until a lower
// character can start the second run. It returns the end, or -1.
func (sp *splitter) upperThenLower(s string, p int) int {
	end, lastLowerEnd := p, -1
	for end < len(s) {
		c, n := sp.cls.at(s, end)
		if c&clsUpper == 0 {
			break
		}
		end += n
		if c&clsLower != 0 {
			lastLowerEnd = end
		}
	}
	if end < len(s) {
		if c, _ := sp.cls.at(s, end); c&clsLower != 0 {
			return sp.run(s, end, clsLower)
		}
	}
	// Giving back stops at the last character of the upper run that is also lower; the
	// characters after it are Lu/Lt only, so the lower run is that one character.
	return lastLowerEnd
}

// contraction matches 's|'t|'re|'ve|'m|'ll|'d at i, returning the end or -1. With
// ignoreCase it folds like Oniguruma's (?i): ASCII case plus U+017F LATIN SMALL LETTER LONG S,
// whose simple case fold is 's'.
func contraction(s string, i int, ignoreCase bool) int {
	if i+1 >= len(s) || s[i] != '\'' {
		return -1
	}
	lower := func(j int) byte {
		if j >= len(s) {
			return 0
		}
		c := s[j]
		if ignoreCase && c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		return c
	}
	switch lower(i + 1) {
	case 's', 't', 'm', 'd':
		return i + 2
	case 'r':
		if lower(i+2) == 'e' {
			return i + 3
		}
	case 'v':
		if lower(i+2) == 'e' {
			return i + 3
		}
	case 'l':
		if lower(i+2) == 'l' {
			return i + 3
		}
	case 0xC5: // U+017F is C5 BF in UTF-8
		if ignoreCase && i+2 < len(s) && s[i+2] == 0xBF {
			return i + 3
		}
	}
	return -1
}
