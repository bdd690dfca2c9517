package pyjson

import (
	"math"
	"strconv"

	"github.com/llmbench/llmbench/internal/jsonwire"
)

// AppendFloat appends v the way Python's repr (and orjson) writes a float: the shortest
// round-trip digits, ".0" on whole numbers, exponent form below 1e-4 and from 1e16.
// NaN and infinities, which JSON cannot hold, become null.
func AppendFloat(b []byte, v float64) []byte {
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

// indented writes the JSON files: orjson's OPT_INDENT_2 layout, with Python's floats.
var indented = jsonwire.Encoder{Indent: "  ", Float: appendFloatBits}

// appendFloatBits is AppendFloat for the Encoder: a float32 is first rounded to its
// shortest decimal form, as Python prints a value read from a file written with it.
func appendFloatBits(b []byte, v float64, bitSize int) ([]byte, error) {
	if bitSize == 32 && !math.IsNaN(v) && !math.IsInf(v, 0) {
		v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', -1, 32), 64)
	}
	return AppendFloat(b, v), nil
}

// Object is a JSON object whose keys keep the order they were added in.
type Object struct {
	keys []string
	vals []any
}

// Add appends the member k: v and returns o, so that members chain.
func (o *Object) Add(k string, v any) *Object {
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, v)
	return o
}

// Len and Member make an Object a jsonwire.Object.
func (o *Object) Len() int { return len(o.keys) }

// Member returns the i-th key and value.
func (o *Object) Member(i int) (string, any) { return o.keys[i], o.vals[i] }

// Float is a float written in Python's repr form.
type Float float64

// AppendJSON makes a Float a jsonwire.Appender.
func (f Float) AppendJSON(b []byte) []byte { return AppendFloat(b, float64(f)) }

// MarshalIndent writes v with two-space indentation, like orjson's OPT_INDENT_2, and a
// final newline.
func MarshalIndent(v any) ([]byte, error) {
	b, err := indented.Append(nil, v)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// AppendNsAsMs appends ns nanoseconds in milliseconds as AppendFloat(ns/1e6) would, without
// floating point: a decimal of at most 15 significant digits is the shortest representation
// of the double nearest to it, so the exact decimal with trailing zeros trimmed is Python's repr.
func AppendNsAsMs(b []byte, ns int64) []byte {
	if ns == 0 || (ns > -100 && ns < 100) || ns >= 1e15 || ns <= -1e15 {
		return AppendFloat(b, float64(ns)/1e6) // 0.0, exponent form, or too many digits
	}
	if ns < 0 {
		b = append(b, '-')
		ns = -ns
	}
	b = strconv.AppendInt(b, ns/1_000_000, 10)
	frac := ns % 1_000_000
	if frac == 0 {
		return append(b, '.', '0')
	}
	var d [6]byte
	for i := 5; i >= 0; i-- {
		d[i] = byte('0' + frac%10)
		frac /= 10
	}
	n := 6
	for d[n-1] == '0' {
		n--
	}
	b = append(b, '.')
	return append(b, d[:n]...)
}
