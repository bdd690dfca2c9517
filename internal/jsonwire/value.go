package jsonwire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// AppendFloat appends f exactly as encoding/json writes a float of bitSize bits (32 or 64):
// the shortest digits that round-trip, exponent form below 1e-6 and from 1e21 (ES6 number
// formatting). NaN and infinities, which JSON cannot hold, are an error.
func AppendFloat(dst []byte, f float64, bitSize int) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, fmt.Errorf("unsupported float value %v", f)
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bitSize == 64 && (abs < 1e-6 || abs >= 1e21) || bitSize == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	dst = strconv.AppendFloat(dst, f, format, -1, bitSize)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, nil
}

// AppendInt appends v in decimal.
func AppendInt[I ~int | ~int8 | ~int16 | ~int32 | ~int64](dst []byte, v I) []byte {
	return strconv.AppendInt(dst, int64(v), 10)
}

// ValidNumber reports whether s is a JSON number literal.
func ValidNumber[S Text](s S) bool {
	end, ok := numberEnd(s, 0)
	return ok && end == len(s)
}

// numberEnd passes over the number literal starting at s[i]: it returns the index after it
// and true, or the index of the first byte that breaks JSON's number grammar and false.
func numberEnd[S Text](s S, i int) (int, bool) {
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return i, false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return i, false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return i, false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	return i, true
}

// Object is a JSON object whose members are written in the order it gives them (a Go map is
// written with its keys sorted instead).
type Object interface {
	Len() int
	Member(i int) (key string, value any)
}

// Appender is a value that writes its own JSON text: AppendJSON must append exactly one
// valid JSON value, which the Encoder copies as is.
type Appender interface {
	AppendJSON(dst []byte) []byte
}

// An Encoder writes Go values as JSON. The zero Encoder writes compact JSON whose bytes equal
// encoding/json's with HTML escaping off (map keys sorted, floats in ES6 form); its fields
// change the layout and how floats are written, and Object and Appender values bring their
// own member order or text.
//
// Written directly: nil, strings, bools, every integer type, float32 and float64,
// json.Number (checked), json.RawMessage (checked), []any, []string, map[string]any, Object
// and Appender. Anything else (structs, typed slices and maps, Marshalers) goes through
// encoding/json (HTML escaping off, maps sorted), laid out like the rest.
type Encoder struct {
	// Indent, when not empty, puts each member and element on its own line, indented by
	// Indent once per level, with ": " after each key: the layout of Python's
	// json.dumps(indent=...) and orjson's OPT_INDENT_2. Empty containers stay {} and [].
	Indent string
	// Float writes a float64 (bitSize 64) or float32 (bitSize 32); nil is AppendFloat.
	Float func(dst []byte, f float64, bitSize int) ([]byte, error)
}

// AppendValue appends v as compact JSON with the zero Encoder.
func AppendValue(dst []byte, v any) ([]byte, error) {
	var e Encoder
	return e.Append(dst, v)
}

// maxValueDepth bounds recursion so a cyclic map is an error rather than a stack overflow.
const maxValueDepth = 1000

// Append appends v as JSON.
func (e *Encoder) Append(dst []byte, v any) ([]byte, error) {
	return e.value(dst, v, 0)
}

func (e *Encoder) value(dst []byte, v any, depth int) ([]byte, error) {
	if depth > maxValueDepth {
		return dst, fmt.Errorf("value nested deeper than %d levels (cycle?)", maxValueDepth)
	}
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case string:
		return AppendString(dst, x), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case float64:
		return e.float(dst, x, 64)
	case float32:
		return e.float(dst, float64(x), 32)
	case int:
		return AppendInt(dst, x), nil
	case int8:
		return AppendInt(dst, x), nil
	case int16:
		return AppendInt(dst, x), nil
	case int32:
		return AppendInt(dst, x), nil
	case int64:
		return AppendInt(dst, x), nil
	case uint:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case uint8:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case uint16:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case uint32:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case uint64:
		return strconv.AppendUint(dst, x, 10), nil
	case json.Number:
		if !ValidNumber(x) {
			return dst, fmt.Errorf("invalid json.Number %q", string(x))
		}
		return append(dst, x...), nil
	case json.RawMessage:
		if !json.Valid(x) {
			return dst, fmt.Errorf("invalid json.RawMessage")
		}
		return e.foreign(dst, x, depth)
	case Appender:
		return x.AppendJSON(dst), nil
	case Object:
		n := x.Len()
		for i := range n {
			k, v := x.Member(i)
			var err error
			if dst, err = e.member(dst, i, k, v, depth); err != nil {
				return dst, err
			}
		}
		return e.end(dst, n, '{', '}', depth), nil
	case map[string]any:
		var stack [16]string
		for i, k := range SortedKeys(stack[:0], x) {
			var err error
			if dst, err = e.member(dst, i, k, x[k], depth); err != nil {
				return dst, err
			}
		}
		return e.end(dst, len(x), '{', '}', depth), nil
	case []any:
		for i, v := range x {
			dst = e.next(dst, i, '[', depth)
			var err error
			if dst, err = e.value(dst, v, depth+1); err != nil {
				return dst, err
			}
		}
		return e.end(dst, len(x), '[', ']', depth), nil
	case []string:
		for i, v := range x {
			dst = AppendString(e.next(dst, i, '[', depth), v)
		}
		return e.end(dst, len(x), '[', ']', depth), nil
	}
	// Rare types (structs, typed maps, Marshalers): encoding/json sorts map keys and detects
	// cycles itself.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return dst, err
	}
	return e.foreign(dst, bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), depth)
}

func (e *Encoder) float(dst []byte, f float64, bitSize int) ([]byte, error) {
	if e.Float != nil {
		return e.Float(dst, f, bitSize)
	}
	return AppendFloat(dst, f, bitSize)
}

// foreign appends valid JSON text from elsewhere in the Encoder's layout.
func (e *Encoder) foreign(dst, text []byte, depth int) ([]byte, error) {
	var buf bytes.Buffer
	var err error
	if e.Indent == "" {
		err = json.Compact(&buf, text)
	} else {
		prefix := bytes.Repeat([]byte(e.Indent), depth)
		err = json.Indent(&buf, text, string(prefix), e.Indent)
	}
	if err != nil {
		return dst, err
	}
	return append(dst, buf.Bytes()...), nil
}

// next starts the i-th member or element of a container opened by open: the opening
// bracket before the first, a comma before the others, then the line break and indentation.
func (e *Encoder) next(dst []byte, i int, open byte, depth int) []byte {
	if i == 0 {
		dst = append(dst, open)
	} else {
		dst = append(dst, ',')
	}
	if e.Indent != "" {
		dst = e.newline(dst, depth+1)
	}
	return dst
}

// member writes the i-th member of an object: key, separator and value.
func (e *Encoder) member(dst []byte, i int, k string, v any, depth int) ([]byte, error) {
	dst = AppendString(e.next(dst, i, '{', depth), k)
	dst = append(dst, ':')
	if e.Indent != "" {
		dst = append(dst, ' ')
	}
	dst, err := e.value(dst, v, depth+1)
	if err != nil {
		return dst, fmt.Errorf("key %q: %w", k, err)
	}
	return dst, nil
}

// end closes a container of n members or elements ({} or [] when empty).
func (e *Encoder) end(dst []byte, n int, open, closing byte, depth int) []byte {
	if n == 0 {
		return append(dst, open, closing)
	}
	if e.Indent != "" {
		dst = e.newline(dst, depth)
	}
	return append(dst, closing)
}

// newline starts a line indented for depth levels.
func (e *Encoder) newline(dst []byte, depth int) []byte {
	dst = append(dst, '\n')
	for range depth {
		dst = append(dst, e.Indent...)
	}
	return dst
}

// SortedKeys appends the keys of m to dst in sorted order (give it a stack array's slice to
// avoid allocating for small maps).
func SortedKeys[V any](dst []string, m map[string]V) []string {
	for k := range m {
		dst = append(dst, k)
	}
	slices.Sort(dst)
	return dst
}
