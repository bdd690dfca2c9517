package analyze

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// JSON writing by hand: keys in a fixed order (never map iteration order), floats in
// Python's repr format so files read like AIPerf's, and no reflection on the per-request path.

// appendPyFloat appends v the way Python's repr (and orjson) writes a float: the shortest
// round-trip digits, ".0" on whole numbers, exponent form below 1e-4 and from 1e16.
// NaN and infinities, which JSON cannot hold, become null.
func appendPyFloat(b []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, "null"...)
	}
	if v == 0 {
		if math.Signbit(v) {
			return append(b, "-0.0"...)
		}
		return append(b, "0.0"...)
	}
	a := math.Abs(v)
	if a < 1e-4 || a >= 1e16 {
		// Go's shortest exponent form (1e-05, 1.5e+16) is Python's.
		return strconv.AppendFloat(b, v, 'e', -1, 64)
	}
	start := len(b)
	b = strconv.AppendFloat(b, v, 'f', -1, 64)
	for _, c := range b[start:] {
		if c == '.' {
			return b
		}
	}
	return append(b, ".0"...)
}

// appendJSONString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c >= 0x20:
				b = append(b, c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, "\ufffd"...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// ordered is a JSON object whose keys keep the order they were added in.
type ordered struct {
	keys []string
	vals []any
}

func (o *ordered) add(k string, v any) *ordered {
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, v)
	return o
}

// pyFloat is a float written in Python's repr form.
type pyFloat float64

// rawJSON is written as is.
type rawJSON []byte

// marshalIndent writes v with two-space indentation, like orjson's OPT_INDENT_2.
func marshalIndent(v any) []byte {
	b := appendValue(nil, v, 0)
	return append(b, '\n')
}

func indent(b []byte, depth int) []byte {
	b = append(b, '\n')
	for i := 0; i < depth; i++ {
		b = append(b, ' ', ' ')
	}
	return b
}

func appendValue(b []byte, v any, depth int) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case *ordered:
		if len(x.keys) == 0 {
			return append(b, "{}"...)
		}
		b = append(b, '{')
		for i, k := range x.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = indent(b, depth+1)
			b = appendJSONString(b, k)
			b = append(b, ':', ' ')
			b = appendValue(b, x.vals[i], depth+1)
		}
		b = indent(b, depth)
		return append(b, '}')
	case []any:
		if len(x) == 0 {
			return append(b, "[]"...)
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = indent(b, depth+1)
			b = appendValue(b, e, depth+1)
		}
		b = indent(b, depth)
		return append(b, ']')
	case []string:
		s := make([]any, len(x))
		for i := range x {
			s[i] = x[i]
		}
		return appendValue(b, s, depth)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		o := &ordered{}
		for _, k := range keys {
			o.add(k, x[k])
		}
		return appendValue(b, o, depth)
	case string:
		return appendJSONString(b, x)
	case bool:
		return strconv.AppendBool(b, x)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case uint64:
		return strconv.AppendUint(b, x, 10)
	case pyFloat:
		return appendPyFloat(b, float64(x))
	case float64:
		return appendPyFloat(b, x)
	case rawJSON:
		return append(b, x...)
	}
	// Anything else (values decoded from the plan's spec): encoding/json, whose maps are
	// sorted, re-indented to our layout.
	j, err := json.Marshal(v)
	if err != nil {
		return appendJSONString(b, "unencodable")
	}
	var generic any
	if json.Unmarshal(j, &generic) != nil {
		return append(b, j...)
	}
	return appendGeneric(b, generic, depth)
}

// appendGeneric writes a value decoded by encoding/json (maps, slices, float64, strings).
func appendGeneric(b []byte, v any, depth int) []byte {
	switch x := v.(type) {
	case map[string]any:
		return appendValue(b, x, depth)
	case []any:
		return appendValue(b, x, depth)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.AppendInt(b, int64(x), 10)
		}
		return appendPyFloat(b, x)
	}
	return appendValue(b, v, depth)
}
