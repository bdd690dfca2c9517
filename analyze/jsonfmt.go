package analyze

import (
	"math"
	"strconv"

	"github.com/llmbench/llmbench/internal/jsonwire"
)

// JSON writing by hand, with internal/jsonwire: keys in a fixed order (never map iteration
// order), strings escaped by jsonwire's rule (encoding/json's, HTML escaping off), floats in
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

// pyJSON writes the JSON exports: orjson's OPT_INDENT_2 layout, with Python's floats.
var pyJSON = jsonwire.Encoder{Indent: "  ", Float: appendPyFloatBits}

// appendPyFloatBits is appendPyFloat for the Encoder: a float32 is first rounded to its
// shortest decimal form, as Python prints a value read from a file written with it.
func appendPyFloatBits(b []byte, v float64, bitSize int) ([]byte, error) {
	if bitSize == 32 && !math.IsNaN(v) && !math.IsInf(v, 0) {
		v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', -1, 32), 64)
	}
	return appendPyFloat(b, v), nil
}

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

// Len and Member make an ordered a jsonwire.Object.
func (o *ordered) Len() int { return len(o.keys) }

// Member returns the i-th key and value.
func (o *ordered) Member(i int) (string, any) { return o.keys[i], o.vals[i] }

// pyFloat is a float written in Python's repr form.
type pyFloat float64

// AppendJSON makes a pyFloat a jsonwire.Appender.
func (f pyFloat) AppendJSON(b []byte) []byte { return appendPyFloat(b, float64(f)) }

// marshalIndent writes v with two-space indentation, like orjson's OPT_INDENT_2, and a
// final newline.
func marshalIndent(v any) ([]byte, error) {
	b, err := pyJSON.Append(nil, v)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
