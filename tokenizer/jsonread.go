package tokenizer

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonReader is a small validating JSON cursor. tokenizer.json is mostly a 150,000-entry
// vocabulary and as many merges; walking those by hand, decoding strings into reused
// buffers, is several times faster than encoding/json (which matters under -race and
// for every command's start-up). The few small components are handed to encoding/json as
// raw bytes.
type jsonReader struct {
	data []byte
	pos  int
}

func (r *jsonReader) errorf(format string, args ...any) error {
	line := 1
	for _, c := range r.data[:min(r.pos, len(r.data))] {
		if c == '\n' {
			line++
		}
	}
	return fmt.Errorf("line %d: %s", line, fmt.Sprintf(format, args...))
}

func (r *jsonReader) ws() {
	for r.pos < len(r.data) {
		switch r.data[r.pos] {
		case ' ', '\t', '\n', '\r':
			r.pos++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (r *jsonReader) peek() byte {
	r.ws()
	if r.pos >= len(r.data) {
		return 0
	}
	return r.data[r.pos]
}

func (r *jsonReader) expect(c byte) error {
	if r.peek() != c {
		return r.errorf("expected %q", c)
	}
	r.pos++
	return nil
}

// object calls fn for each key of an object; fn must consume the value.
func (r *jsonReader) object(fn func(key []byte) error) error {
	if err := r.expect('{'); err != nil {
		return err
	}
	if r.peek() == '}' {
		r.pos++
		return nil
	}
	var key []byte
	for {
		var err error
		if key, err = r.str(key[:0]); err != nil {
			return err
		}
		if err := r.expect(':'); err != nil {
			return err
		}
		if err := fn(key); err != nil {
			return err
		}
		switch r.peek() {
		case ',':
			r.pos++
		case '}':
			r.pos++
			return nil
		default:
			return r.errorf("expected ',' or '}' in object")
		}
	}
}

// array calls fn for each element of an array; fn must consume the element.
func (r *jsonReader) array(fn func(i int) error) error {
	if err := r.expect('['); err != nil {
		return err
	}
	if r.peek() == ']' {
		r.pos++
		return nil
	}
	for i := 0; ; i++ {
		if err := fn(i); err != nil {
			return err
		}
		switch r.peek() {
		case ',':
			r.pos++
		case ']':
			r.pos++
			return nil
		default:
			return r.errorf("expected ',' or ']' in array")
		}
	}
}

// str appends the decoded string at the cursor to dst. Invalid escapes are errors;
// unpaired surrogates become U+FFFD, as encoding/json does.
func (r *jsonReader) str(dst []byte) ([]byte, error) {
	if err := r.expect('"'); err != nil {
		return dst, err
	}
	for {
		// Copy the plain run up to the next quote or backslash in one go.
		start := r.pos
		for r.pos < len(r.data) && r.data[r.pos] != '"' && r.data[r.pos] != '\\' && r.data[r.pos] >= 0x20 {
			r.pos++
		}
		dst = append(dst, r.data[start:r.pos]...)
		if r.pos >= len(r.data) {
			return dst, r.errorf("unterminated string")
		}
		switch c := r.data[r.pos]; {
		case c == '"':
			r.pos++
			return dst, nil
		case c < 0x20:
			return dst, r.errorf("control character in string")
		}
		// A backslash escape.
		if r.pos+1 >= len(r.data) {
			return dst, r.errorf("unterminated string")
		}
		e := r.data[r.pos+1]
		r.pos += 2
		switch e {
		case '"', '\\', '/':
			dst = append(dst, e)
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			c, ok := r.hex4()
			if !ok {
				return dst, r.errorf(`bad \u escape`)
			}
			if utf16.IsSurrogate(c) {
				save := r.pos
				if r.pos+1 < len(r.data) && r.data[r.pos] == '\\' && r.data[r.pos+1] == 'u' {
					r.pos += 2
					if c2, ok := r.hex4(); ok {
						if d := utf16.DecodeRune(c, c2); d != utf8.RuneError {
							dst = utf8.AppendRune(dst, d)
							continue
						}
					}
				}
				r.pos = save
				c = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, c)
		default:
			return dst, r.errorf("bad escape \\%c", e)
		}
	}
}

func (r *jsonReader) hex4() (rune, bool) {
	if r.pos+4 > len(r.data) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(r.data[r.pos:r.pos+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	r.pos += 4
	return rune(v), true
}

// integer reads a JSON number that must be an integer in int range.
func (r *jsonReader) integer() (int, error) {
	r.ws()
	start := r.pos
	if r.pos < len(r.data) && r.data[r.pos] == '-' {
		r.pos++
	}
	for r.pos < len(r.data) && r.data[r.pos] >= '0' && r.data[r.pos] <= '9' {
		r.pos++
	}
	v, err := strconv.Atoi(string(r.data[start:r.pos]))
	if err != nil {
		r.pos = start
		return 0, r.errorf("expected an integer")
	}
	return v, nil
}

// skip validates and passes over one value, returning its raw bytes.
func (r *jsonReader) skip() ([]byte, error) {
	return r.skipDepth(0)
}

const maxJSONDepth = 1000

func (r *jsonReader) skipDepth(depth int) ([]byte, error) {
	if depth > maxJSONDepth {
		return nil, r.errorf("nested too deeply")
	}
	c := r.peek()
	start := r.pos
	var err error
	switch {
	case c == '{':
		err = r.object(func([]byte) error { _, err := r.skipDepth(depth + 1); return err })
	case c == '[':
		err = r.array(func(int) error { _, err := r.skipDepth(depth + 1); return err })
	case c == '"':
		_, err = r.str(nil)
	case c == 't':
		err = r.literal("true")
	case c == 'f':
		err = r.literal("false")
	case c == 'n':
		err = r.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		err = r.number()
	case c == 0:
		err = r.errorf("unexpected end of input")
	default:
		err = r.errorf("unexpected %q", c)
	}
	if err != nil {
		return nil, err
	}
	return r.data[start:r.pos], nil
}

func (r *jsonReader) literal(word string) error {
	if len(r.data)-r.pos < len(word) || string(r.data[r.pos:r.pos+len(word)]) != word {
		return r.errorf("bad literal")
	}
	r.pos += len(word)
	return nil
}

// number passes over a number in JSON's grammar.
func (r *jsonReader) number() error {
	digits := func() int {
		n := 0
		for r.pos < len(r.data) && r.data[r.pos] >= '0' && r.data[r.pos] <= '9' {
			r.pos++
			n++
		}
		return n
	}
	if r.data[r.pos] == '-' {
		r.pos++
	}
	if r.pos < len(r.data) && r.data[r.pos] == '0' {
		r.pos++
	} else if digits() == 0 {
		return r.errorf("bad number")
	}
	if r.pos < len(r.data) && r.data[r.pos] == '.' {
		r.pos++
		if digits() == 0 {
			return r.errorf("bad number")
		}
	}
	if r.pos < len(r.data) && (r.data[r.pos] == 'e' || r.data[r.pos] == 'E') {
		r.pos++
		if r.pos < len(r.data) && (r.data[r.pos] == '+' || r.data[r.pos] == '-') {
			r.pos++
		}
		if digits() == 0 {
			return r.errorf("bad number")
		}
	}
	return nil
}

// end checks that only white space follows the document.
func (r *jsonReader) end() error {
	if r.peek() != 0 {
		return r.errorf("data after the document")
	}
	return nil
}

var errNotObject = errors.New("not a JSON object")
