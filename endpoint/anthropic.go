package endpoint

import "github.com/llmbench/llmbench/internal/jsonwire"

import "errors"

// Anthropic Messages API (/v1/messages). The system prompt is a top-level field, max_tokens
// is required, and streaming uses named events whose data repeats the name in "type".

var errAnthropicMaxTokens = errors.New("max_tokens is required by the Messages API: set an output length or an extra input max_tokens")

func renderAnthropic(dst []byte, r *Request) ([]byte, error) {
	if r.MaxTokens <= 0 {
		if _, ok := r.Extra["max_tokens"]; !ok {
			return dst, errAnthropicMaxTokens
		}
	}
	var o obj
	o.openModel(dst, r)
	o.int("max_tokens", r.MaxTokens) // 0 only when Extra supplies it (checked above)
	appendSystem(&o, "system", r)
	if o.key("messages") {
		o.b = appendMessages(o.b, r, true)
	}
	o.bool("stream", r.Streaming)
	return o.close()
}

// parseAnthropic parses one streaming event or a whole message body. Inner objects are read
// by key, which is unambiguous in this API: text_delta carries "text", thinking_delta
// "thinking", input_json_delta "partial_json", a tool_use block "name".
func parseAnthropic(s *jsonwire.Scanner, d *Delta) shapeError {
	if se, ok := enterTopObject(s); !ok {
		return se
	}
	var typ jsonwire.Span
	var sawError bool
	var content jsonwire.RawSpan
	n := 0
	for {
		k, ok := s.Member(&n)
		if !ok {
			break
		}
		switch string(k) {
		case "type":
			typ = s.StrSpan()
		case "delta", "content_block":
			parseAnthropicBlock(s, d, false)
		case "message":
			// message_start: the message object carries the input usage.
			parseAnthropicMessage(s, d)
		case "content":
			content = s.ValueSpan()
		case "usage":
			parseUsage(s, &d.Usage)
		case "error":
			sawError = parseErrorValue(s, d) || sawError
		default:
			s.Skip()
		}
	}
	s.End()
	if s.Err() != nil {
		return ""
	}
	switch {
	case s.Is(typ, "message_stop"):
		d.Done = true
	case s.Is(typ, "message"):
		// A whole non-streaming message.
		parseAnthropicContent(s, content, d)
		d.Done = true
	case !typ.OK && !sawError:
		return `missing "type"`
	}
	if typ.OK {
		d.EndMarker = endAnthropic
	}
	return ""
}

// parseAnthropicMessage reads message_start's message: usage and (normally empty) content.
func parseAnthropicMessage(s *jsonwire.Scanner, d *Delta) {
	if !s.EnterObject() {
		s.Skip()
		return
	}
	n := 0
	for {
		k, ok := s.Member(&n)
		if !ok {
			return
		}
		switch string(k) {
		case "usage":
			parseUsage(s, &d.Usage)
		case "content":
			r := s.ValueSpan()
			parseAnthropicContent(s, r, d)
		default:
			s.Skip()
		}
	}
}

// parseAnthropicBlock reads a content block: a streaming delta or content_block object, or
// (whole) an element of a complete message's content array. A tool_use call's input counts as
// output: in a whole message it is the input JSON, in a stream the input_json_delta's
// partial_json (content_block_start's input is an empty placeholder, so it is skipped).
func parseAnthropicBlock(s *jsonwire.Scanner, d *Delta, whole bool) {
	if !s.EnterObject() {
		s.Skip()
		return
	}
	n := 0
	for {
		k, ok := s.Member(&n)
		if !ok {
			return
		}
		switch string(k) {
		case "text", "name":
			d.Content, _ = s.Str(d.Content)
		case "thinking":
			d.Reasoning, _ = s.Str(d.Reasoning)
		case "partial_json":
			if whole {
				s.Skip()
			} else {
				d.Content, _ = s.Str(d.Content)
			}
		case "input":
			if whole {
				d.Content = append(d.Content, s.Raw()...)
			} else {
				s.Skip()
			}
		default:
			s.Skip()
		}
	}
}

// parseAnthropicContent reads a content block array: text and thinking blocks, and tool_use
// blocks whose name and input JSON count as output.
func parseAnthropicContent(s *jsonwire.Scanner, r jsonwire.RawSpan, d *Delta) {
	if r.Len() == 0 {
		return
	}
	t := s.Sub(r)
	defer s.Adopt(&t)
	if !t.EnterArray() {
		return
	}
	n := 0
	for t.Element(&n) {
		parseAnthropicBlock(&t, d, true)
	}
}
