package jsonwire

// Spans let a parser note where a value sits and decide what it means after reading a
// sibling key (Responses API events put "type" last), without copying anything.

// A Span is where a string value sits in the input, between its quotes.
type Span struct {
	Start, End int
	Escaped    bool // the raw text contains escapes
	OK         bool // a string was there (not null, not missing, not another kind of value)
}

// Len is the length of the raw (still escaped) text; 0 for an empty or missing string.
func (sp Span) Len() int { return sp.End - sp.Start }

// StrSpan reads a string value as a span; null or any other kind of value is skipped and
// gives a Span with OK false.
func (s *Scanner) StrSpan() Span {
	if s.Peek() != '"' {
		s.Skip()
		return Span{}
	}
	if j := plainEnd(s.b, s.i+1); j >= 0 {
		start := s.i + 1
		s.i = j + 1
		return Span{Start: start, End: j, OK: true}
	}
	start, end, esc := s.stringBounds()
	if s.err != nil {
		return Span{}
	}
	if esc && !validEscapes(s.b[start:end]) {
		s.i = start
		s.Fail("invalid escape in string")
		return Span{}
	}
	return Span{Start: start, End: end, Escaped: esc, OK: true}
}

// AppendSpan appends the decoded text of sp (nothing when it is not OK).
func (s *Scanner) AppendSpan(dst []byte, sp Span) []byte {
	if !sp.OK {
		return dst
	}
	raw := s.b[sp.Start:sp.End]
	if sp.Escaped {
		return unescapeInto(dst, raw)
	}
	return appendValidUTF8(dst, raw)
}

// SpanBytes returns sp's raw text, escapes not decoded: compare it only with text that never
// needs escaping.
func (s *Scanner) SpanBytes(sp Span) []byte { return s.b[sp.Start:sp.End] }

// Is reports whether sp holds exactly the text lit (lit never needs escaping).
func (s *Scanner) Is(sp Span, lit string) bool {
	return sp.OK && !sp.Escaped && string(s.b[sp.Start:sp.End]) == lit
}

// HasPrefix reports whether sp's text starts with prefix (prefix never needs escaping).
func (s *Scanner) HasPrefix(sp Span, prefix string) bool {
	return sp.OK && !sp.Escaped && sp.End-sp.Start >= len(prefix) && string(s.b[sp.Start:sp.Start+len(prefix)]) == prefix
}

// A RawSpan is a whole value's byte range, to be read later with Sub.
type RawSpan struct{ Start, End int }

// Len is the length of the value's text (0 when none was read).
func (r RawSpan) Len() int { return r.End - r.Start }

// ValueSpan consumes one value of any kind and returns where it lies.
func (s *Scanner) ValueSpan() RawSpan {
	s.ws()
	start := s.i
	s.Skip()
	return RawSpan{start, s.i}
}

// Sub returns a Scanner over a value recorded by ValueSpan; offsets stay those of the whole
// input, so errors point into it.
func (s *Scanner) Sub(r RawSpan) Scanner {
	return Scanner{b: s.b[:r.End], i: r.Start, depth: s.depth}
}

// Adopt carries a sub-scanner's syntax error back (values were validated when skipped, so
// this matters only as defence in depth).
func (s *Scanner) Adopt(t *Scanner) {
	if t.err != nil && s.err == nil {
		s.err = t.err
	}
}
