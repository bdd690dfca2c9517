package tokenizer

import "unicode/utf8"

// Byte-level BPE (GPT-2) never sees text: every byte is first replaced by a printable
// character so that vocabularies can be stored as JSON strings. Bytes that are printable
// Latin-1 map to themselves; the other 68 map to U+0100 and up, in byte order. The encoder
// skips the detour entirely: it keeps, for every byte, the id of that byte's one-character
// token, and merges ids. The mapping is only needed to read the vocabulary and to decode.

// byteToRune is GPT-2's bytes_to_unicode table.
var byteToRune = func() [256]rune {
	var m [256]rune
	n := rune(0)
	for b := 0; b < 256; b++ {
		if b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE && b <= 0xFF {
			m[b] = rune(b)
		} else {
			m[b] = 256 + n
			n++
		}
	}
	return m
}()

// runeToByte inverts byteToRune; runes outside the table are absent.
var runeToByte = func() map[rune]byte {
	m := make(map[rune]byte, 256)
	for b, r := range byteToRune {
		m[r] = byte(b)
	}
	return m
}()

// byteLevelString maps raw bytes to their byte-level form (as stored in vocab and merges).
func byteLevelString(raw string) string {
	out := make([]rune, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		out = append(out, byteToRune[raw[i]])
	}
	return string(out)
}

// byteLevelDecode maps a token string back to raw bytes the way HuggingFace's ByteLevel
// decoder does: when every character of the token belongs to the byte alphabet the token
// stands for those bytes, otherwise (added tokens such as "<|im_start|>" with a space, say)
// for its own UTF-8 text. ok reports the first case.
func byteLevelDecode(dst []byte, tok string) (out []byte, ok bool) {
	start := len(dst)
	for _, r := range tok {
		b, in := runeToByte[r]
		if !in {
			return append(dst[:start], tok...), false
		}
		dst = append(dst, b)
	}
	return dst, true
}

// appendLossy appends b to dst, replacing each maximal ill-formed subsequence with U+FFFD,
// as Rust's String::from_utf8_lossy (and so HuggingFace's decoders) does.
func appendLossy(dst, b []byte) []byte {
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			dst = append(dst, b[i])
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError || n != 1 {
			dst = append(dst, b[i:i+n]...)
			i += n
			continue
		}
		i += maximalSubpart(b[i:])
		dst = append(dst, "\uFFFD"...)
	}
	return dst
}

// maximalSubpart returns the length of the longest prefix of b (which starts with an
// ill-formed sequence) that is a prefix of some well-formed sequence, at least 1
// (Unicode §3.9, "U+FFFD Substitution of Maximal Subparts").
func maximalSubpart(b []byte) int {
	lo, hi, need := byte(0x80), byte(0xBF), 0
	switch c := b[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		lo, need = 0xA0, 2
	case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
		need = 2
	case c == 0xED:
		hi, need = 0x9F, 2
	case c == 0xF0:
		lo, need = 0x90, 3
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	case c == 0xF4:
		hi, need = 0x8F, 3
	default:
		return 1
	}
	n := 1
	for ; n <= need && n < len(b); n++ {
		if b[n] < lo || b[n] > hi {
			break
		}
		lo, hi = 0x80, 0xBF
	}
	return n
}
