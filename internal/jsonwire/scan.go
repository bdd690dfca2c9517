package jsonwire

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// A Scanner is a pull scanner over one JSON document. Parsers walk the few paths they need
// (choices → 0 → delta → content) and skip everything else without building values, so a
// typical chat chunk parses in a few hundred nanoseconds with no allocation. Strings are
// unescaped straight into the caller's buffer.
//
// Methods record the first syntax error, stop, and then return zero values; callers check
// Err once at the end (or whenever a loop must stop). Containers are read with a count the
// caller keeps:
//
//	if s.EnterObject() {
//		n := 0
//		for key, ok := s.Member(&n); ok; key, ok = s.Member(&n) {
//			... read or Skip the value ...
//		}
//	}
type Scanner struct {
	b     []byte
	i     int
	depth int
	err   *SyntaxError
	kbuf  []byte // unescaped object key when the raw key has escapes (rare)
}

// NewScanner returns a Scanner at the start of b, which it reads in place: b must not change
// while the Scanner, or any key or span it returned, is in use.
func NewScanner(b []byte) Scanner { return Scanner{b: b} }

// A SyntaxError is the first place where the input stopped being JSON.
type SyntaxError struct {
	Offset int    // byte offset into the input
	Msg    string // what was wrong, e.g. "expected ',' or '}' in object"
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.Offset, e.Msg)
}

// Err returns the first syntax error, or nil.
func (s *Scanner) Err() *SyntaxError { return s.err }

// Pos returns the offset of the next byte to read.
func (s *Scanner) Pos() int { return s.i }

// Bytes returns the whole input.
func (s *Scanner) Bytes() []byte { return s.b }

// Rewind goes back to the start of the input to read it again (after a successful pass:
// the error, if any, stays).
func (s *Scanner) Rewind() { s.i, s.depth = 0, 0 }

// Lookahead returns a copy at the same place, to read ahead without moving s.
func (s *Scanner) Lookahead() Scanner { return Scanner{b: s.b, i: s.i, depth: s.depth} }

// maxDepth bounds nesting like encoding/json does, so hostile input cannot exhaust the stack.
const maxDepth = 10000

// Fail records a syntax error at the current offset (unless one is recorded already) and
// stops the scanner: every later read returns a zero value. It is kept out of line: it is
// cold, and inlining it everywhere bloats the hot loops.
//
//go:noinline
func (s *Scanner) Fail(msg string) {
	if s.err == nil {
		s.err = &SyntaxError{Offset: s.i, Msg: msg}
	}
	s.i = len(s.b) // stop every loop
}

func (s *Scanner) ws() {
	for s.i < len(s.b) {
		if c := s.b[s.i]; c > ' ' || c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return
		}
		s.i++
	}
}

// Peek returns the first byte of the next value (after whitespace), or 0 at the end.
func (s *Scanner) Peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// End checks that only whitespace follows the top-level value.
func (s *Scanner) End() {
	s.ws()
	if s.err == nil && s.i != len(s.b) {
		s.Fail("data after top-level value")
	}
}

// EnterObject consumes '{' and returns true, or returns false without consuming when the
// next value is not an object (the caller decides whether that is a shape error).
func (s *Scanner) EnterObject() bool {
	if s.Peek() != '{' {
		return false
	}
	if s.depth++; s.depth > maxDepth {
		s.Fail("nesting too deep")
		return false
	}
	s.i++
	return true
}

// EnterArray is EnterObject for '['.
func (s *Scanner) EnterArray() bool {
	if s.Peek() != '[' {
		return false
	}
	if s.depth++; s.depth > maxDepth {
		s.Fail("nesting too deep")
		return false
	}
	s.i++
	return true
}

// Member advances to the next member of the object being read and returns its key, leaving
// the scanner at the value; n counts the members read so far. At the closing '}' (consumed)
// or on error it returns ok=false.
func (s *Scanner) Member(n *int) (key []byte, ok bool) {
	b := s.b
	i := skipWS(b, s.i)
	if i >= len(b) {
		s.i = i
		s.Fail("unexpected end of input in object")
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
			s.Fail("expected ',' or '}' in object")
			return nil, false
		}
		i = skipWS(b, i+1)
		if i >= len(b) {
			s.i = i
			s.Fail("unexpected end of input in object")
			return nil, false
		}
		c = b[i]
	}
	if c != '"' {
		s.i = i
		s.Fail("expected string key in object")
		return nil, false
	}
	// Keys are short and almost never escaped: one eight-byte probe usually finds the
	// closing quote; anything unusual goes through stringBounds.
	j := plainEnd(b, i+1)
	if j >= 0 {
		key = b[i+1 : j]
		i = j + 1
	} else {
		s.i = i
		start, end, esc := s.stringBounds()
		if s.err != nil {
			return nil, false
		}
		key = b[start:end]
		if esc {
			if !validEscapes(key) {
				s.i = start
				s.Fail("invalid escape in object key")
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
		s.Fail("expected ':' after object key")
		return nil, false
	}
	s.i = i + 1
	*n++
	return key, true
}

// Element advances to the next element of the array being read; n counts elements read so
// far. At the closing ']' (consumed) or on error it returns false.
func (s *Scanner) Element(n *int) bool {
	s.ws()
	if s.i >= len(s.b) {
		s.Fail("unexpected end of input in array")
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
			s.Fail("expected ',' or ']' in array")
			return false
		}
		s.i++
	}
	*n++
	return true
}

// Str reads a string value and appends its unescaped text to dst. It returns ok=false
// (dst unchanged) when the value is null; any other non-string value is a shape problem the
// caller reports, signalled by ok=false and isStr=false.
func (s *Scanner) Str(dst []byte) (out []byte, ok bool) {
	switch s.Peek() {
	case '"':
		if j := plainEnd(s.b, s.i+1); j >= 0 {
			raw := s.b[s.i+1 : j]
			s.i = j + 1
			return appendValidUTF8(dst, raw), true
		}
		start, end, esc := s.stringBounds()
		if s.err != nil {
			return dst, false
		}
		raw := s.b[start:end]
		if !esc {
			return appendValidUTF8(dst, raw), true
		}
		if !validEscapes(raw) {
			s.i = start
			s.Fail("invalid escape in string")
			return dst, false
		}
		return unescapeInto(dst, raw), true
	default:
		s.Skip()
		return dst, false
	}
}

// IsNull consumes a null literal and reports whether it was one.
func (s *Scanner) IsNull() bool {
	if s.Peek() == 'n' {
		s.lit("null")
		return true
	}
	return false
}

// Bool reads true/false; anything else is skipped and reads as false.
func (s *Scanner) Bool() bool {
	switch s.Peek() {
	case 't':
		s.lit("true")
		return s.err == nil
	case 'f':
		s.lit("false")
	default:
		s.Skip()
	}
	return false
}

// Int reads an integer (a float is truncated); ok=false for null or a non-number.
func (s *Scanner) Int() (v int, ok bool) {
	c := s.Peek()
	if c != '-' && (c < '0' || c > '9') {
		s.Skip()
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

// number consumes a number literal, validating its grammar.
func (s *Scanner) number() {
	end, ok := numberEnd(s.b, s.i)
	s.i = end
	if !ok {
		s.Fail("invalid number")
	}
}

func (s *Scanner) lit(want string) {
	if len(s.b)-s.i >= len(want) && string(s.b[s.i:s.i+len(want)]) == want {
		s.i += len(want)
		return
	}
	s.Fail("invalid literal")
}

// Count consumes an array and returns its length; ok=false when the value is not an array.
func (s *Scanner) Count() (n int, ok bool) {
	if !s.EnterArray() {
		s.Skip()
		return 0, false
	}
	for s.Element(&n) {
		s.Skip()
	}
	return n, s.err == nil
}

// Raw consumes one value and returns its bytes as they appear in the input.
func (s *Scanner) Raw() []byte {
	s.ws()
	start := s.i
	s.Skip()
	if s.err != nil {
		return nil
	}
	return s.b[start:s.i]
}
