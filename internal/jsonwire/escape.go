package jsonwire

import (
	"math/bits"
	"unicode/utf8"
)

// Text is what the string writers accept: a string or a byte slice, so callers holding
// either write it without a conversion that would copy.
type Text interface{ ~string | ~[]byte }

// hexDigits are the lowercase hex digits of \u escapes.
const hexDigits = "0123456789abcdef"

// safeASCII[c] is true when ASCII byte c can be copied into a JSON string as is.
var safeASCII = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// SWAR constants: a word has a byte needing attention when any byte is < 0x20, '"', '\\'
// or >= 0x80; testing eight bytes at once makes long prompts cost ~0.2 ns per byte.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// hasZero reports (via the high bit of each byte) which bytes of x are zero; only the lowest
// flagged byte is exact, which is all the callers need.
func hasZero(x uint64) uint64 { return (x - lsb) &^ x & msb }

// specialMask flags bytes of w that are < 0x20, '"', '\\' or >= 0x80.
func specialMask(w uint64) uint64 {
	lt := (w - lsb*0x20) &^ w // high bit set where byte < 0x20 (for bytes < 0x80)
	return (lt | hasZero(w^(lsb*'"')) | hasZero(w^(lsb*'\\')) | w) & msb
}

// load64 reads eight bytes of s little-endian; written on a fixed-size slice so the
// compiler merges it into one load.
func load64[S Text](s S, i int) uint64 {
	b := s[i : i+8]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// AppendString appends s as a JSON string literal, quotes included, following the package's
// escaping rule (encoding/json with SetEscapeHTML(false), byte for byte).
func AppendString[S Text](dst []byte, s S) []byte {
	dst = append(dst, '"')
	dst = AppendStringBody(dst, s)
	return append(dst, '"')
}

// AppendStringBody is AppendString without the quotes: the escaped text for the inside of
// a string literal, for callers that splice text into one.
func AppendStringBody[S Text](dst []byte, s S) []byte {
	start, i := 0, 0
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if safeASCII[c] {
				// Skip the run of plain ASCII this byte starts, eight bytes at a time. (Only
				// after a plain byte: in text with no ASCII between its multi-byte
				// characters, probing words would only cost.)
				for i++; i+8 <= len(s); i += 8 {
					if m := specialMask(load64(s, i)); m != 0 {
						i += bits.TrailingZeros64(m) >> 3
						break
					}
				}
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		// At most utf8.UTFMax bytes are converted, so a []byte input costs a copy into a
		// stack buffer, never an allocation.
		r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...)
}
