package jsonwire

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
)

// plainEnd returns the index of the closing quote of a string whose body starts at i, when
// the body has no escapes or control bytes (the common case); otherwise -1 and the caller
// takes the careful path (stringBounds).
func plainEnd(b []byte, i int) int {
	for i+8 <= len(b) {
		w := binary.LittleEndian.Uint64(b[i:])
		if m := hasZero(w^(lsb*'"')) | hasZero(w^(lsb*'\\')) | (w-lsb*0x20)&^w&msb; m != 0 {
			i += bits.TrailingZeros64(m) >> 3
			if b[i] == '"' {
				return i
			}
			return -1
		}
		i += 8
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' {
			return i
		} else if c == '\\' || c < 0x20 {
			return -1
		}
	}
	return -1
}

// skipWS returns the index of the first non-whitespace byte at or after i.
func skipWS(b []byte, i int) int {
	for i < len(b) && b[i] <= ' ' && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringBounds reads a string literal at s.i (which must be '"') and returns the raw bytes
// between the quotes and whether they contain escapes. Control bytes are rejected like
// encoding/json does; escapes and UTF-8 are checked when the string is unescaped. Eight bytes
// are examined at a time: most strings in a chunk are keys and short ids, but base64 images
// and whole non-streaming outputs are long.
func (s *Scanner) stringBounds() (start, end int, esc bool) {
	b := s.b
	start = s.i + 1
	i := start
	for {
		for i+8 <= len(b) {
			w := binary.LittleEndian.Uint64(b[i:])
			m := hasZero(w^(lsb*'"')) | hasZero(w^(lsb*'\\')) | (w-lsb*0x20)&^w&msb
			if m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			return start, i, esc
		case c == '\\':
			esc = true
			i += 2
		case c < 0x20:
			s.i = i
			s.Fail("control character in string")
			return start, start, false
		default:
			i++
		}
	}
	s.Fail("unterminated string")
	return start, start, false
}

// validEscapes checks the escape sequences of a raw string body.
func validEscapes(raw []byte) bool {
	for {
		k := bytes.IndexByte(raw, '\\')
		if k < 0 {
			return true
		}
		if k+1 >= len(raw) {
			return false
		}
		switch c := raw[k+1]; {
		case shortEscapes[c] != 0:
			raw = raw[k+2:]
		case c == 'u':
			if _, ok := hex4(raw[k+2:]); !ok {
				return false
			}
			raw = raw[k+6:]
		default:
			return false
		}
	}
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// appendValidUTF8 appends raw, replacing each invalid UTF-8 byte with U+FFFD exactly as
// encoding/json does, so tokenized output text matches what a Go or Python client sees.
func appendValidUTF8(dst, raw []byte) []byte {
	// Fast path: ASCII, checked eight bytes at a time.
	i := 0
	for i+8 <= len(raw) {
		if binary.LittleEndian.Uint64(raw[i:])&msb != 0 {
			break
		}
		i += 8
	}
	for i < len(raw) && raw[i] < utf8.RuneSelf {
		i++
	}
	if i == len(raw) || utf8.Valid(raw[i:]) {
		return append(dst, raw...)
	}
	dst = append(dst, raw[:i]...)
	for i < len(raw) {
		c := raw[i]
		if c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(raw[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, "\uFFFD"...)
		} else {
			dst = append(dst, raw[i:i+size]...)
		}
		i += size
	}
	return dst
}

// shortEscapes maps the byte after the backslash of a two-byte JSON escape (\n, \" ...) to
// the byte it stands for; 0 marks the bytes that start no such escape.
var shortEscapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// unescapeInto appends the decoded text of a raw JSON string body (no surrounding quotes).
// It follows encoding/json: invalid UTF-8 bytes and unpaired surrogates become U+FFFD. The
// raw bytes must have passed stringBounds (no control bytes); a malformed escape is copied
// through as is, and callers that need strictness call validEscapes first.
func unescapeInto(dst, raw []byte) []byte {
	for len(raw) > 0 {
		k := bytes.IndexByte(raw, '\\')
		if k < 0 {
			return appendValidUTF8(dst, raw)
		}
		dst = appendValidUTF8(dst, raw[:k])
		raw = raw[k:]
		if len(raw) < 2 {
			return append(dst, raw...)
		}
		switch c := raw[1]; {
		case shortEscapes[c] != 0:
			dst = append(dst, shortEscapes[c])
			raw = raw[2:]
		case c == 'u':
			r, ok := hex4(raw[2:])
			if !ok {
				dst = append(dst, raw[:2]...)
				raw = raw[2:]
				continue
			}
			raw = raw[6:]
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if len(raw) >= 6 && raw[0] == '\\' && raw[1] == 'u' {
					r2, _ = hex4(raw[2:])
				}
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					raw = raw[6:]
					r = dec
				} else {
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
		default:
			dst = append(dst, raw[:2]...)
			raw = raw[2:]
		}
	}
	return dst
}

// unescapeString decodes a raw JSON string body strictly: ok=false on a bad escape, a bare
// quote or a control byte. It is what FuzzJSONString compares against encoding/json.
func unescapeString(dst, raw []byte) ([]byte, bool) {
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '\\':
			i++ // the escaped byte; validEscapes checks it below
		case c == '"' || c < 0x20:
			return dst, false
		}
	}
	if !validEscapes(raw) {
		return dst, false
	}
	return unescapeInto(dst, raw), true
}
