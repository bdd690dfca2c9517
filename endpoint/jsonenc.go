package endpoint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf8"
)

// The request-body writer is hand-written because a million-request plan renders a million
// bodies: encoding/json's reflection and HTML escaping cost several times more than appending
// bytes. Output matches encoding/json with SetEscapeHTML(false) byte for byte (the fuzz test
// FuzzAppendString checks it), so bodies look exactly like what a Python or Go client sends.

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
func load64(s string, i int) uint64 {
	b := s[i : i+8]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// appendString appends s as a JSON string literal, escaping like encoding/json with
// SetEscapeHTML(false): short escapes for \b \f \n \r \t, \u00XX for other control bytes,
// U+2028/U+2029 escaped (JavaScript line terminators), invalid UTF-8 replaced by U+FFFD.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = appendStringBody(dst, s)
	return append(dst, '"')
}

// appendStringBody is appendString without the quotes.
func appendStringBody(dst []byte, s string) []byte {
	start, i := 0, 0
	for i < len(s) {
		// Skip runs of plain ASCII eight bytes at a time.
		for i+8 <= len(s) {
			if m := specialMask(load64(s, i)); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if safeASCII[c] {
				i++
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
		r, size := utf8.DecodeRuneInString(s[i:])
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

// appendFloat formats f exactly as encoding/json does (ES6 number formatting).
func appendFloat(dst []byte, f float64, bitSize int) ([]byte, error) {
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

// appendValue appends v as JSON. The common types decoded from --extra-inputs JSON and the
// Go scalar types are written directly; maps are written with sorted keys so the output is
// deterministic. Anything else goes through encoding/json (HTML escaping off), whose map
// output is sorted too.
func appendValue(dst []byte, v any) ([]byte, error) {
	return appendValueDepth(dst, v, 0)
}

// maxValueDepth bounds recursion so a cyclic map is an error rather than a stack overflow.
const maxValueDepth = 1000

func appendValueDepth(dst []byte, v any, depth int) ([]byte, error) {
	if depth > maxValueDepth {
		return dst, fmt.Errorf("value nested deeper than %d levels (cycle?)", maxValueDepth)
	}
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case string:
		return appendString(dst, x), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case float64:
		return appendFloat(dst, x, 64)
	case float32:
		return appendFloat(dst, float64(x), 32)
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case int32:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case uint64:
		return strconv.AppendUint(dst, x, 10), nil
	case uint:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case json.Number:
		if !validNumber(string(x)) {
			return dst, fmt.Errorf("invalid json.Number %q", string(x))
		}
		return append(dst, x...), nil
	case json.RawMessage:
		if !json.Valid(x) {
			return dst, fmt.Errorf("invalid json.RawMessage")
		}
		return appendCompact(dst, x)
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendValueDepth(dst, e, depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case []string:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, e)
		}
		return append(dst, ']'), nil
	case map[string]any:
		return appendMap(dst, x, depth)
	}
	// Rare types (structs, typed maps, Marshalers): defer to encoding/json, which sorts map
	// keys and detects cycles itself.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return dst, err
	}
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})...), nil
}

func appendCompact(dst []byte, raw []byte) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return dst, err
	}
	return append(dst, buf.Bytes()...), nil
}

// appendMap writes m with keys in sorted order.
func appendMap(dst []byte, m map[string]any, depth int) ([]byte, error) {
	var stack [16]string
	keys := sortedKeys(stack[:0], m)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, k)
		dst = append(dst, ':')
		var err error
		if dst, err = appendValueDepth(dst, m[k], depth+1); err != nil {
			return dst, fmt.Errorf("key %q: %w", k, err)
		}
	}
	return append(dst, '}'), nil
}

func sortedKeys(dst []string, m map[string]any) []string {
	for k := range m {
		dst = append(dst, k)
	}
	slices.Sort(dst)
	return dst
}

// validNumber reports whether s is a JSON number literal.
func validNumber(s string) bool {
	if s == "" {
		return false
	}
	i := 0
	if s[i] == '-' {
		i++
	}
	if i == len(s) {
		return false
	}
	switch {
	case s[i] == '0':
		i++
	case s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i == len(s) || s[i] < '0' || s[i] > '9' {
			return false
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
		if i == len(s) || s[i] < '0' || s[i] > '9' {
			return false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	return i == len(s)
}

// obj builds one JSON object, letting Extra override default members in place and appending
// the remaining Extra members in sorted key order. Its methods do nothing after an error.
type obj struct {
	b     []byte
	n     int            // members written
	extra map[string]any // nil when there is nothing to merge
	dkeys [16]string     // default keys written so far (to skip them when closing)
	nd    int
	err   error
}

func (o *obj) open(dst []byte, extra map[string]any) {
	o.b = append(dst, '{')
	if len(extra) > 0 {
		o.extra = extra
	}
}

// openModel is open with r's Extra followed by the "model" member, left out when r.Model is
// empty.
func (o *obj) openModel(dst []byte, r *Request) {
	o.open(dst, r.Extra)
	if r.Model != "" {
		o.str("model", r.Model)
	}
}

// key writes the member name and separator; it returns false when Extra overrides the key
// (the Extra value has then been written already) so the caller skips its default value.
func (o *obj) key(k string) bool {
	if o.err != nil {
		return false
	}
	if o.n > 0 {
		o.b = append(o.b, ',')
	}
	o.n++
	o.b = appendString(o.b, k)
	o.b = append(o.b, ':')
	if o.extra != nil {
		if o.nd < len(o.dkeys) {
			o.dkeys[o.nd] = k
			o.nd++
		}
		if v, ok := o.extra[k]; ok {
			o.b, o.err = appendValue(o.b, v)
			if o.err != nil {
				o.err = fmt.Errorf("extra input %q: %w", k, o.err)
			}
			return false
		}
	}
	return true
}

func (o *obj) str(k, v string) {
	if o.key(k) {
		o.b = appendString(o.b, v)
	}
}

func (o *obj) int(k string, v int) {
	if o.key(k) {
		o.b = strconv.AppendInt(o.b, int64(v), 10)
	}
}

func (o *obj) bool(k string, v bool) {
	if o.key(k) {
		o.b = strconv.AppendBool(o.b, v)
	}
}

// close appends the Extra members that did not replace a default, sorted by key.
func (o *obj) close() ([]byte, error) {
	if o.err != nil {
		return o.b, o.err
	}
	if o.extra != nil {
		var stack [16]string
		for _, k := range sortedKeys(stack[:0], o.extra) {
			if slices.Contains(o.dkeys[:o.nd], k) {
				continue
			}
			if o.n > 0 {
				o.b = append(o.b, ',')
			}
			o.n++
			o.b = appendString(o.b, k)
			o.b = append(o.b, ':')
			var err error
			if o.b, err = appendValue(o.b, o.extra[k]); err != nil {
				return o.b, fmt.Errorf("extra input %q: %w", k, err)
			}
		}
	}
	return append(o.b, '}'), nil
}

func appendInt(dst []byte, v int) []byte { return strconv.AppendInt(dst, int64(v), 10) }
