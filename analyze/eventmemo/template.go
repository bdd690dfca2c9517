package eventmemo

import (
	"bytes"
	"unicode/utf8"

	"github.com/llmbench/llmbench/endpoint"
)

// A stream's content events are nearly always the same JSON with a different text in one
// string: vLLM, SGLang and TensorRT-LLM repeat the id, created, model and choice layout in
// every chunk. Template remembers that layout (the bytes before and after the text) from an
// event the endpoint parser handled, so the next events of the same layout are read without
// parsing JSON: the one difference is a plain string, which the parser would append as is.
// This is what lets analysis keep up with millions of events per second per core.
//
// The memo is a cache of the parser, never a second judge: it is learned only when it is
// provably equivalent to parsing. The text occurs once in the event as a plain JSON string
// (no escapes, valid UTF-8), and a probe event with a different text in its place, parsed
// into an empty Delta, gives exactly what Apply would: that text in the same field, the same
// end marker (so a stream the memo read is judged complete or cut exactly as the parser would
// judge it), and nothing else: no usage, no end, no items, no error. The memo outlives a
// request (a worker's requests share one layout), so everything the parser would have set
// must come from Apply, never from an earlier request's parse.
type Template struct {
	ok        bool
	name      []byte // SSE event type
	prefix    []byte // up to and including the text's opening quote
	suffix    []byte // from the text's closing quote
	reasoning bool   // the text is reasoning, not visible output
	endMarker string // the Delta.EndMarker parsing the event sets ("" when it sets none)
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

// Match returns the text of an event that has the memorised layout.
func (s *Template) Match(name, data []byte) ([]byte, bool) {
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

// Learn tries to memorise the layout of an event whose parse appended text, and only text, to
// Content (or to Reasoning when reasoning is set).
func (s *Template) Learn(ep *endpoint.Endpoint, name, data, text []byte, reasoning bool) {
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
	if ep.ParseEvent(s.buf, &s.probe) != nil {
		return
	}
	s.endMarker = s.probe.EndMarker
	s.ok = s.parsesAsApplied(&s.probe)
}

// Reasoning reports whether the memorised layout's text is reasoning, not visible output.
func (s *Template) Reasoning() bool { return s.reasoning }

// Apply adds what an event of the memorised layout carrying text contributes to d: exactly
// what ParseEvent would add.
func (s *Template) Apply(d *endpoint.Delta, text []byte) {
	if s.reasoning {
		d.Reasoning = append(d.Reasoning, text...)
	} else {
		d.Content = append(d.Content, text...)
	}
	if s.endMarker != "" {
		d.EndMarker = s.endMarker
	}
}

// parsesAsApplied reports whether got, the probe event parsed into an empty Delta, is what
// Apply gives an empty Delta for the probe text: every field of endpoint.Delta is compared
// (TestEventTemplateComparesEveryDeltaField keeps this list whole).
func (s *Template) parsesAsApplied(got *endpoint.Delta) bool {
	text, other := got.Content, got.Reasoning
	if s.reasoning {
		text, other = other, text
	}
	return string(text) == probeText && len(other) == 0 && got.EndMarker == s.endMarker &&
		got.Usage == (endpoint.Usage{}) && !got.Done && got.Items == 0 && got.ErrorMsg == ""
}
