package mockllm

import (
	"strconv"
	"unicode/utf8"
)

// Responses are rendered by appending to a reused buffer instead of
// encoding/json: a streaming event then costs no allocation, and the
// bytes on the wire are exactly what this file says.

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string literal.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	b = appendJSONEscaped(b, s)
	return append(b, '"')
}

// appendJSONEscaped appends the escaped body of a JSON string literal.
func appendJSONEscaped(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, s[start:i]...)
				b = append(b, `\ufffd`...)
				i++
				start = i
				continue
			}
			i += size
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	return append(b, s[start:]...)
}

func appendInt(b []byte, v int64) []byte { return strconv.AppendInt(b, v, 10) }

// appendFloat32 appends a float the way JSON encoders print a float32.
func appendFloat32(b []byte, f float32) []byte {
	return strconv.AppendFloat(b, float64(f), 'g', -1, 32)
}

// appendHex appends v as 16 lowercase hex digits (ids).
func appendHex(b []byte, v uint64) []byte {
	for i := 60; i >= 0; i -= 4 {
		b = append(b, hexDigits[(v>>uint(i))&0xf])
	}
	return b
}

// sseData appends "data: " + payload start; callers close with sseEnd.
func sseData(b []byte) []byte { return append(b, "data: "...) }

// sseEvent appends an "event: NAME" line and the "data: " prefix.
func sseEvent(b []byte, name string) []byte {
	b = append(b, "event: "...)
	b = append(b, name...)
	return append(b, "\ndata: "...)
}

// sseEnd ends one SSE event.
func sseEnd(b []byte) []byte { return append(b, '\n', '\n') }
