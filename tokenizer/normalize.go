package tokenizer

import (
	"sync"
	"unicode/utf8"
)

// This file implements Unicode Normalization Form C (UAX #15) from the generated tables in
// nfc_tables.go. Text that is already NFC (nearly all text) is recognised by a quick check and
// returned as is, without allocating; only the short stretches around a character that may
// need work are decomposed, reordered and recomposed.
//
// golang.org/x/text/unicode/norm is in the module graph (a test compares the two, see
// TestNFCMatchesNorm and FuzzNFCMatchesNorm) but is not used here, for two reasons:
//   - speed: NFC runs before every encode of a model whose normalizer is NFC (each prompt at
//     plan time, each output at analyze time), and this is several times faster than norm's
//     NFC.String (BenchmarkNFC reports the ratio per script and form: from about 2× on ASCII
//     to 3–8× on accented, Devanagari and Hangul text), with no allocation for text already
//     in NFC;
//   - the Unicode version: these tables are generated for Go's unicode.Version, so NFC and the
//     pre-tokenizer's letter and number classes agree on which code points exist, while norm
//     picks its tables by Go release (15.0.0 before go1.27, 17.0.0 from it). The tests skip
//     the comparison when the two versions differ.

// Bits of a code point's NFC property word.
const (
	nfcCCCMask   = 0xFF   // canonical combining class
	nfcQCNo      = 1 << 8 // never appears in NFC (Full_Composition_Exclusion)
	nfcQCMaybe   = 1 << 9 // may combine with the character before it
	nfcHasDecomp = 1 << 10
)

// Hangul syllables compose and decompose algorithmically (Unicode §3.12).
const (
	hangulSBase  = 0xAC00
	hangulLBase  = 0x1100
	hangulVBase  = 0x1161
	hangulTBase  = 0x11A7
	hangulLCount = 19
	hangulVCount = 21
	hangulTCount = 28
	hangulNCount = hangulVCount * hangulTCount
	hangulSCount = hangulLCount * hangulNCount
)

// firstNonInert is the smallest code point that can be anything but a stable NFC starter;
// every code point below it has combining class 0 and quick check Yes. Its UTF-8 lead byte
// bounds the byte-wise fast scan.
const (
	firstNonInert     = 0x300
	firstNonInertLead = 0xCC
)

// nfcTables is the expanded form of the generated data.
type nfcTables struct {
	index   [0x110000 >> 8]uint16 // 256-code-point block → blocks index; block 0 is all zero
	blocks  [][256]uint16
	decomp  map[rune][]rune // full canonical decomposition
	compose map[uint64]rune // primary composites by (first<<32 | second)
}

var (
	nfcOnce sync.Once
	nfcTab  *nfcTables
)

// nfcData returns the NFC tables, building them on first use (about a millisecond).
func nfcData() *nfcTables {
	nfcOnce.Do(func() { nfcTab = buildNFC() })
	return nfcTab
}

func buildNFC() *nfcTables {
	t := &nfcTables{
		blocks:  make([][256]uint16, 1, 64),
		decomp:  make(map[rune][]rune, len(nfcDecomp)/3),
		compose: make(map[uint64]rune, len(nfcDecomp)/3),
	}
	set := func(r rune, bits uint16) {
		b := t.index[r>>8]
		if b == 0 {
			t.blocks = append(t.blocks, [256]uint16{})
			b = uint16(len(t.blocks) - 1)
			t.index[r>>8] = b
		}
		t.blocks[b][r&0xFF] |= bits
	}
	for _, v := range nfcCCC {
		set(rune(v>>8), uint16(v&0xFF))
	}
	excluded := make(map[rune]bool, len(nfcExcluded))
	for _, r := range nfcExcluded {
		excluded[r] = true
		set(r, nfcQCNo)
	}
	oneLevel := make(map[rune][2]rune, len(nfcDecomp)/3)
	for i := 0; i+2 < len(nfcDecomp); i += 3 {
		r, a, b := nfcDecomp[i], nfcDecomp[i+1], nfcDecomp[i+2]
		oneLevel[r] = [2]rune{a, b}
		set(r, nfcHasDecomp)
		if b != 0 && !excluded[r] {
			t.compose[uint64(a)<<32|uint64(b)] = r
			set(b, nfcQCMaybe)
		}
	}
	var expand func(dst []rune, r rune) []rune
	expand = func(dst []rune, r rune) []rune {
		d, ok := oneLevel[r]
		if !ok {
			return append(dst, r)
		}
		dst = expand(dst, d[0])
		if d[1] != 0 {
			dst = expand(dst, d[1])
		}
		return dst
	}
	for r := range oneLevel {
		t.decomp[r] = expand(nil, r)
	}
	for r := rune(hangulVBase); r < hangulVBase+hangulVCount; r++ {
		set(r, nfcQCMaybe)
	}
	for r := rune(hangulTBase + 1); r < hangulTBase+hangulTCount; r++ {
		set(r, nfcQCMaybe)
	}
	return t
}

// info returns the property word of r (0 for unassigned and out-of-range values).
func (t *nfcTables) info(r rune) uint16 {
	if r < 0 || r > utf8.MaxRune {
		return 0
	}
	return t.blocks[t.index[r>>8]][r&0xFF]
}

// stable reports whether r starts a stretch that normalizes independently of what precedes
// it: combining class 0 and quick check Yes.
func (t *nfcTables) stable(r rune) bool {
	return r < firstNonInert || t.info(r)&(nfcCCCMask|nfcQCNo|nfcQCMaybe) == 0
}

// nfcScratch holds reusable buffers for normalization; one per encoder.
type nfcScratch struct {
	runes []rune
	span  []byte
	out   []byte
}

// normalize returns the NFC form of s. When s is already NFC it returns s itself.
// Bytes that are not valid UTF-8 pass through unchanged and act as stable starters (a
// four-byte lead too close to the end leaves the rest unchanged, as x/text's norm does).
func (t *nfcTables) normalize(s string, sc *nfcScratch) string {
	i := 0
	for i < len(s) && s[i] < firstNonInertLead {
		i++
	}
	if i == len(s) {
		return s
	}
	// Everything before i is below U+0300, so the character just before i is a stable
	// starter where a stretch needing work may begin.
	// (An invalid byte there is a boundary too: the stretch then begins at i.)
	segStart := i
	if i > 0 {
		if r, n := utf8.DecodeLastRuneInString(s[:i]); r != utf8.RuneError || n != 1 {
			segStart = i - n
		}
	}
	var out []byte
	copied := 0
	lastCCC := uint16(0)
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			if b := s[i]; b >= 0xF0 && b <= 0xF7 && len(s)-i < 4 {
				// A four-byte lead whose sequence would run past the end: x/text's norm
				// takes the rest as one incomplete character and leaves it as it is
				// (only a two-byte character can follow it there), and so do we.
				break
			}
			// An invalid byte composes with nothing: what follows starts afresh.
			i += n
			segStart, lastCCC = i, 0
			continue
		}
		if r < firstNonInert {
			segStart, lastCCC = i, 0
			i += n
			continue
		}
		inf := t.info(r)
		ccc := inf & nfcCCCMask
		if inf&(nfcQCNo|nfcQCMaybe) == 0 && (ccc == 0 || lastCCC <= ccc) {
			if ccc == 0 {
				segStart = i
			}
			lastCCC = ccc
			i += n
			continue
		}
		// r may change: normalize from the last stable starter up to the next one.
		end := i + n
		for end < len(s) {
			r2, n2 := utf8.DecodeRuneInString(s[end:])
			if (r2 == utf8.RuneError && n2 == 1) || t.stable(r2) {
				break
			}
			end += n2
		}
		span := s[segStart:end]
		sc.span = t.appendNFC(sc.span[:0], span, sc)
		if string(sc.span) != span {
			if out == nil {
				out = sc.out[:0]
			}
			out = append(out, s[copied:segStart]...)
			out = append(out, sc.span...)
			copied = end
		}
		i, segStart, lastCCC = end, end, 0
	}
	if out == nil {
		return s
	}
	out = append(out, s[copied:]...)
	sc.out = out
	return string(out)
}

// appendNFC appends the NFC form of span (valid UTF-8 runes only) to dst using the full
// algorithm: canonical decomposition, canonical ordering, canonical composition.
func (t *nfcTables) appendNFC(dst []byte, span string, sc *nfcScratch) []byte {
	rs := sc.runes[:0]
	for _, r := range span {
		switch {
		case r >= hangulSBase && r < hangulSBase+hangulSCount:
			si := r - hangulSBase
			rs = append(rs, hangulLBase+si/hangulNCount, hangulVBase+(si%hangulNCount)/hangulTCount)
			if ti := si % hangulTCount; ti != 0 {
				rs = append(rs, hangulTBase+ti)
			}
		case t.info(r)&nfcHasDecomp != 0:
			rs = append(rs, t.decomp[r]...)
		default:
			rs = append(rs, r)
		}
	}
	// Canonical ordering: stable insertion sort of each run of non-starters by class.
	for i := 1; i < len(rs); i++ {
		c := t.info(rs[i]) & nfcCCCMask
		if c == 0 {
			continue
		}
		for j := i; j > 0; j-- {
			p := t.info(rs[j-1]) & nfcCCCMask
			if p == 0 || p <= c {
				break
			}
			rs[j-1], rs[j] = rs[j], rs[j-1]
		}
	}
	// Canonical composition (UAX #15 §1.3 / Unicode §3.11, D117).
	if len(rs) > 0 {
		starter, out := 0, 1
		lastCCC := int(t.info(rs[0]) & nfcCCCMask)
		if lastCCC != 0 {
			lastCCC = 256 // a leading non-starter blocks everything after it
		}
		for i := 1; i < len(rs); i++ {
			r := rs[i]
			c := int(t.info(r) & nfcCCCMask)
			if comp, ok := t.composePair(rs[starter], r); ok && (lastCCC < c || lastCCC == 0) {
				rs[starter] = comp
				continue
			}
			if c == 0 {
				starter = out
			}
			lastCCC = c
			rs[out] = r
			out++
		}
		rs = rs[:out]
	}
	for _, r := range rs {
		dst = utf8.AppendRune(dst, r)
	}
	sc.runes = rs
	return dst
}

// composePair returns the primary composite of a and b, if there is one.
func (t *nfcTables) composePair(a, b rune) (rune, bool) {
	if a >= hangulLBase && a < hangulLBase+hangulLCount && b >= hangulVBase && b < hangulVBase+hangulVCount {
		return hangulSBase + ((a-hangulLBase)*hangulVCount+(b-hangulVBase))*hangulTCount, true
	}
	if a >= hangulSBase && a < hangulSBase+hangulSCount && (a-hangulSBase)%hangulTCount == 0 &&
		b > hangulTBase && b < hangulTBase+hangulTCount {
		return a + (b - hangulTBase), true
	}
	r, ok := t.compose[uint64(a)<<32|uint64(b)]
	return r, ok
}
