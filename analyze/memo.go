package analyze

import (
	"bytes"
	"unicode/utf8"

	"github.com/llmbench/llmbench/endpoint"
)

// A stream's content events are nearly always the same JSON with a different text in one
// string: vLLM, SGLang and TensorRT-LLM repeat the id, created, model and choice layout in
// every chunk. shapeMemo remembers that shape (the bytes before and after the text) from an
// event the endpoint parser handled, so the next events of the same shape are read without
// parsing JSON: the one difference is a plain string, which the parser would append as is.
// This is what lets analysis keep up with millions of events per second per core.
//
// The memo is learned only when it is provably equivalent to parsing: the text occurs once
// in the event as a plain JSON string (no escapes, valid UTF-8), and a probe event with a
// different text in its place parses to exactly that text in the same field and nothing else.
type shapeMemo struct {
	ok        bool
	name      []byte // SSE event type
	prefix    []byte // up to and including the text's opening quote
	suffix    []byte // from the text's closing quote
	reasoning bool   // the text is reasoning, not visible output
	probe     endpoint.Delta
	buf       []byte
}

// probeText replaces the text in the probe event.
const probeText = "llmbench probe 7f3a"

// plainString reports whether b can stand between quotes in JSON and means itself: no quote,
// backslash or control character, and valid UTF-8.
func plainString(b []byte) bool {
	for _, c := range b {
		if c == '"' || c == '\\' || c < 0x20 {
			return false
		}
	}
	return utf8.Valid(b)
}

// match returns the text of an event that has the memorised shape.
func (s *shapeMemo) match(name, data []byte) ([]byte, bool) {
	if !s.ok || len(data) <= len(s.prefix)+len(s.suffix) || !bytes.Equal(name, s.name) ||
		!bytes.HasPrefix(data, s.prefix) || !bytes.HasSuffix(data, s.suffix) {
		return nil, false
	}
	text := data[len(s.prefix) : len(data)-len(s.suffix)]
	if !plainString(text) {
		return nil, false
	}
	return text, true
}

// learn tries to memorise the shape of an event whose parse appended text, and only text, to
// Content (or to Reasoning when reasoning is set).
func (s *shapeMemo) learn(ep *endpoint.Endpoint, name, data, text []byte, reasoning bool) {
	s.ok = false
	if len(text) == 0 || !plainString(text) {
		return
	}
	s.buf = append(append(append(s.buf[:0], '"'), text...), '"')
	i := bytes.Index(data, s.buf)
	if i < 0 || bytes.Contains(data[i+1:], s.buf) {
		return
	}
	s.name = append(s.name[:0], name...)
	s.prefix = append(s.prefix[:0], data[:i+1]...)
	s.suffix = append(s.suffix[:0], data[i+1+len(text):]...)
	s.reasoning = reasoning
	s.buf = append(append(append(s.buf[:0], s.prefix...), probeText...), s.suffix...)
	s.probe.Reset()
	s.probe.Usage, s.probe.Done, s.probe.Items, s.probe.ErrorMsg = endpoint.Usage{}, false, 0, ""
	if ep.ParseEvent(s.buf, &s.probe) != nil || s.probe.ErrorMsg != "" || s.probe.Done {
		return
	}
	got, other := s.probe.Content, s.probe.Reasoning
	if reasoning {
		got, other = other, got
	}
	s.ok = string(got) == probeText && len(other) == 0
}
