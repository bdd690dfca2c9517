package endpoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// scan is a small pull scanner over one JSON document. Parsers walk the few paths they
// need (choices → 0 → delta → content) and skip everything else without building values,
// so a typical chat chunk parses in a few hundred nanoseconds with no allocation. Strings
// are unescaped straight into the caller's buffer.
//
// Methods set s.err on the first syntax error and then return zero values; callers check
// s.err once at the end (or whenever a loop must stop).
type scan struct {
	b     []byte
	i     int
	depth int
	err   *syntaxError
	kbuf  []byte // unescaped object key when the raw key has escapes (rare)
}

type syntaxError struct {
	off int
	msg string
}

// maxDepth bounds nesting like encoding/json does, so hostile input cannot exhaust the stack.
const maxDepth = 10000

// fail is kept out of line: it is cold, and inlining it everywhere bloats the hot loops.
//
//go:noinline
func (s *scan) fail(msg string) {
	if s.err == nil {
		s.err = &syntaxError{off: s.i, msg: msg}
	}
	s.i = len(s.b) // stop every loop
}

func (s *scan) ws() {
	for s.i < len(s.b) {
		if c := s.b[s.i]; c > ' ' || c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return
		}
		s.i++
	}
}

// peek returns the first byte of the next value (after whitespace), or 0 at the end.
func (s *scan) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// end checks that only whitespace follows the top-level value.
func (s *scan) end() {
	s.ws()
	if s.err == nil && s.i != len(s.b) {
		s.fail("data after top-level value")
	}
}

// enterObject consumes '{' and returns true, or returns false without consuming when the
// next value is not an object (the caller decides whether that is a shape error).
func (s *scan) enterObject() bool {
	if s.peek() != '{' {
		return false
	}
	if s.depth++; s.depth > maxDepth {
		s.fail("nesting too deep")
		return false
	}
	s.i++
	return true
}

// enterArray is enterObject for '['.
func (s *scan) enterArray() bool {
	if s.peek() != '[' {
		return false
	}
	if s.depth++; s.depth > maxDepth {
		s.fail("nesting too deep")
		return false
	}
	s.i++
	return true
}

// member advances to the next member of the object being read and returns its key, leaving
// the scanner at the value; n counts the members read so far. At the closing '}' (consumed)
// or on error it returns ok=false.
func (s *scan) member(n *int) (key []byte, ok bool) {
	b := s.b
	i := skipWS(b, s.i)
	if i >= len(b) {
		s.i = i
		s.fail("unexpected end of input in object")
		return nil, false
	}
	c := b[i]
	if c == '}' {
		s.i = i + 1
		s.depth--
		return nil, false
	}
	if *n > 0 {
		if c != ',' {
			s.i = i
			s.fail("expected ',' or '}' in object")
			return nil, false
		}
		i = skipWS(b, i+1)
		if i >= len(b) {
			s.i = i
			s.fail("unexpected end of input in object")
			return nil, false
		}
		c = b[i]
	}
	if c != '"' {
		s.i = i
		s.fail("expected string key in object")
		return nil, false
	}
	// Keys are short and almost never escaped: one eight-byte probe usually finds the
	// closing quote; anything unusual goes through strSpan.
	j := plainEnd(b, i+1)
	if j >= 0 {
		key = b[i+1 : j]
		i = j + 1
	} else {
		s.i = i
		start, end, esc := s.strSpan()
		if s.err != nil {
			return nil, false
		}
		key = b[start:end]
		if esc {
			if !validEscapes(key) {
				s.i = start
				s.fail("invalid escape in object key")
				return nil, false
			}
			s.kbuf = unescapeInto(s.kbuf[:0], key)
			key = s.kbuf
		}
		i = s.i
	}
	i = skipWS(b, i)
	if i >= len(b) || b[i] != ':' {
		s.i = i
		s.fail("expected ':' after object key")
		return nil, false
	}
	s.i = i + 1
	*n++
	return key, true
}

// plainEnd returns the index of the closing quote of a string whose body starts at i, when
// the body has no escapes or control bytes (the common case); otherwise -1 and the caller
// takes the careful path (strSpan).
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

// element advances to the next element of the array being read; n counts elements read so
// far. At the closing ']' (consumed) or on error it returns false.
func (s *scan) element(n *int) bool {
	s.ws()
	if s.i >= len(s.b) {
		s.fail("unexpected end of input in array")
		return false
	}
	c := s.b[s.i]
	if c == ']' {
		s.i++
		s.depth--
		return false
	}
	if *n > 0 {
		if c != ',' {
			s.fail("expected ',' or ']' in array")
			return false
		}
		s.i++
	}
	*n++
	return true
}

// strSpan reads a string literal at s.i (which must be '"') and returns the raw bytes
// between the quotes and whether they contain escapes. Control bytes are rejected like
// encoding/json does; escapes and UTF-8 are checked when the string is unescaped. Eight bytes
// are examined at a time: most strings in a chunk are keys and short ids, but base64 images
// and whole non-streaming outputs are long.
func (s *scan) strSpan() (start, end int, esc bool) {
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
			s.fail("control character in string")
			return start, start, false
		default:
			i++
		}
	}
	s.fail("unterminated string")
	return start, start, false
}

// str reads a string value and appends its unescaped text to dst. It returns ok=false
// (dst unchanged) when the value is null; any other non-string value is a shape problem the
// caller reports, signalled by ok=false and isStr=false.
func (s *scan) str(dst []byte) (out []byte, ok bool) {
	switch s.peek() {
	case '"':
		if j := plainEnd(s.b, s.i+1); j >= 0 {
			raw := s.b[s.i+1 : j]
			s.i = j + 1
			return appendValidUTF8(dst, raw), true
		}
		start, end, esc := s.strSpan()
		if s.err != nil {
			return dst, false
		}
		raw := s.b[start:end]
		if !esc {
			return appendValidUTF8(dst, raw), true
		}
		if !validEscapes(raw) {
			s.i = start
			s.fail("invalid escape in string")
			return dst, false
		}
		return unescapeInto(dst, raw), true
	default:
		s.skip()
		return dst, false
	}
}

// isNull consumes a null literal and reports whether it was one.
func (s *scan) isNull() bool {
	if s.peek() == 'n' {
		s.lit("null")
		return true
	}
	return false
}

// bool reads true/false; anything else is skipped and reads as false.
func (s *scan) bool() bool {
	switch s.peek() {
	case 't':
		s.lit("true")
		return s.err == nil
	case 'f':
		s.lit("false")
	default:
		s.skip()
	}
	return false
}

// int reads an integer (a float is truncated); ok=false for null or a non-number.
// saturatingInt converts f to an int, the nearest one past either end of the range (Go's
// conversion of a float out of range is undefined): a server may send a token count of 1e300.
func saturatingInt(f float64) int {
	switch {
	case f >= math.MaxInt:
		return math.MaxInt
	case f <= math.MinInt:
		return math.MinInt
	}
	return int(f)
}

// saturatingAdd is a + b, the nearest int past either end of the range on overflow.
func saturatingAdd(a, b int) int {
	c := a + b
	switch {
	case a > 0 && b > 0 && c < 0:
		return math.MaxInt
	case a < 0 && b < 0 && c >= 0:
		return math.MinInt
	}
	return c
}

func (s *scan) int() (v int, ok bool) {
	c := s.peek()
	if c != '-' && (c < '0' || c > '9') {
		s.skip()
		return 0, false
	}
	start := s.i
	s.number()
	if s.err != nil {
		return 0, false
	}
	raw := s.b[start:s.i]
	neg := raw[0] == '-'
	digits := raw
	if neg {
		digits = raw[1:]
	}
	var n uint64
	for j, d := range digits {
		if d < '0' || d > '9' {
			// Fraction or exponent: rare; let strconv do it.
			f, err := strconv.ParseFloat(string(raw), 64)
			if err != nil && !errors.Is(err, strconv.ErrRange) {
				return 0, false
			}
			return saturatingInt(f), true
		}
		if j >= 18 {
			if v, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
				return int(v), true
			}
			f, _ := strconv.ParseFloat(string(raw), 64)
			return saturatingInt(f), true
		}
		n = n*10 + uint64(d-'0')
	}
	if neg {
		return -int(n), true
	}
	return int(n), true
}

// number consumes a number literal, validating its grammar.
func (s *scan) number() {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		s.i = i
		s.fail("invalid number")
		return
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			s.i = i
			s.fail("invalid number")
			return
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			s.i = i
			s.fail("invalid number")
			return
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	s.i = i
}

func (s *scan) lit(want string) {
	if len(s.b)-s.i >= len(want) && string(s.b[s.i:s.i+len(want)]) == want {
		s.i += len(want)
		return
	}
	s.fail("invalid literal")
}

// skip consumes one value of any kind, checking its syntax. It is one loop with an explicit
// stack (a bit per level: object or array) rather than recursion, because skipping the
// fields nobody reads (ids, logprobs, embeddings) is most of the work of parsing.
func (s *scan) skip() {
	b := s.b
	i := s.i
	var stack uint64 // bit set: the open container at that level is an object
	depth := 0
	var c byte
value:
	i = skipWS(b, i)
	if i >= len(b) {
		s.i = i
		s.fail("unexpected end of input")
		return
	}
	switch c = b[i]; c {
	case '{', '[':
		if depth == 64 || s.depth+depth >= maxDepth {
			// Deeper than the bit stack: finish this value recursively.
			s.i = i
			s.depth += depth
			s.skipNested()
			s.depth -= depth
			if s.err != nil {
				return
			}
			i = s.i
			goto next
		}
		depth++
		stack <<= 1
		i = skipWS(b, i+1)
		if c == '{' {
			stack |= 1
			if i < len(b) && b[i] == '}' {
				i++
				depth--
				stack >>= 1
				goto next
			}
			goto key
		}
		if i < len(b) && b[i] == ']' {
			i++
			depth--
			stack >>= 1
			goto next
		}
		goto value
	case '"':
		if j := plainEnd(b, i+1); j >= 0 {
			i = j + 1
			goto next
		}
		s.i = i
		start, end, esc := s.strSpan()
		if s.err != nil {
			return
		}
		if esc && !validEscapes(b[start:end]) {
			s.i = start
			s.fail("invalid escape in string")
			return
		}
		i = s.i
	case 't':
		s.i = i
		s.lit("true")
		i = s.i
	case 'f':
		s.i = i
		s.lit("false")
		i = s.i
	case 'n':
		s.i = i
		s.lit("null")
		i = s.i
	default:
		if c != '-' && (c < '0' || c > '9') {
			s.i = i
			s.fail("invalid character")
			return
		}
		s.i = i
		s.number()
		i = s.i
	}
	if s.err != nil {
		return
	}
next:
	if depth == 0 {
		s.i = i
		return
	}
	i = skipWS(b, i)
	if i >= len(b) {
		s.i = i
		s.fail("unexpected end of input")
		return
	}
	c = b[i]
	switch {
	case c == ',':
		i++
		if stack&1 != 0 {
			goto key
		}
		goto value
	case c == '}' && stack&1 != 0, c == ']' && stack&1 == 0:
		i++
		depth--
		stack >>= 1
		goto next
	}
	s.i = i
	if stack&1 != 0 {
		s.fail("expected ',' or '}' in object")
	} else {
		s.fail("expected ',' or ']' in array")
	}
	return
key:
	i = skipWS(b, i)
	if i >= len(b) || b[i] != '"' {
		s.i = i
		s.fail("expected string key in object")
		return
	}
	if j := plainEnd(b, i+1); j >= 0 {
		i = skipWS(b, j+1)
	} else {
		s.i = i
		start, end, esc := s.strSpan()
		if s.err != nil {
			return
		}
		if esc && !validEscapes(b[start:end]) {
			s.i = start
			s.fail("invalid escape in object key")
			return
		}
		i = skipWS(b, s.i)
	}
	if i >= len(b) || b[i] != ':' {
		s.i = i
		s.fail("expected ':' after object key")
		return
	}
	i++
	goto value
}

// skipNested is the recursive skip for containers nested deeper than skip's bit stack.
func (s *scan) skipNested() {
	switch s.peek() {
	case '{':
		if !s.enterObject() {
			return
		}
		n := 0
		for {
			if _, ok := s.member(&n); !ok {
				return
			}
			s.skipNested()
		}
	case '[':
		if !s.enterArray() {
			return
		}
		n := 0
		for s.element(&n) {
			s.skipNested()
		}
	default:
		s.skip()
	}
}

// count consumes an array and returns its length; ok=false when the value is not an array.
func (s *scan) count() (n int, ok bool) {
	if !s.enterArray() {
		s.skip()
		return 0, false
	}
	for s.element(&n) {
		s.skip()
	}
	return n, s.err == nil
}

// raw consumes one value and returns its bytes as they appear in the input.
func (s *scan) raw() []byte {
	s.ws()
	start := s.i
	s.skip()
	if s.err != nil {
		return nil
	}
	return s.b[start:s.i]
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
// raw bytes must have passed strSpan (no control bytes); a malformed escape is copied through
// as is, and callers that need strictness call validEscapes first.
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
