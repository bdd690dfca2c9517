package jsonwire

// Skip consumes one value of any kind, checking its syntax. It is one loop with an explicit
// stack (a bit per level: object or array) rather than recursion, because skipping the
// fields nobody reads (ids, logprobs, embeddings) is most of the work of parsing.
func (s *Scanner) Skip() {
	b := s.b
	i := s.i
	var stack uint64 // bit set: the open container at that level is an object
	depth := 0
	var c byte
value:
	i = skipWS(b, i)
	if i >= len(b) {
		s.i = i
		s.Fail("unexpected end of input")
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
		start, end, esc := s.stringBounds()
		if s.err != nil {
			return
		}
		if esc && !validEscapes(b[start:end]) {
			s.i = start
			s.Fail("invalid escape in string")
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
			s.Fail("invalid character")
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
		s.Fail("unexpected end of input")
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
		s.Fail("expected ',' or '}' in object")
	} else {
		s.Fail("expected ',' or ']' in array")
	}
	return
key:
	i = skipWS(b, i)
	if i >= len(b) || b[i] != '"' {
		s.i = i
		s.Fail("expected string key in object")
		return
	}
	if j := plainEnd(b, i+1); j >= 0 {
		i = skipWS(b, j+1)
	} else {
		s.i = i
		start, end, esc := s.stringBounds()
		if s.err != nil {
			return
		}
		if esc && !validEscapes(b[start:end]) {
			s.i = start
			s.Fail("invalid escape in object key")
			return
		}
		i = skipWS(b, s.i)
	}
	if i >= len(b) || b[i] != ':' {
		s.i = i
		s.Fail("expected ':' after object key")
		return
	}
	i++
	goto value
}

// skipNested is the recursive skip for containers nested deeper than skip's bit stack.
func (s *Scanner) skipNested() {
	switch s.Peek() {
	case '{':
		if !s.EnterObject() {
			return
		}
		n := 0
		for {
			if _, ok := s.Member(&n); !ok {
				return
			}
			s.skipNested()
		}
	case '[':
		if !s.EnterArray() {
			return
		}
		n := 0
		for s.Element(&n) {
			s.skipNested()
		}
	default:
		s.Skip()
	}
}
