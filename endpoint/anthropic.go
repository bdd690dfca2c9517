package endpoint

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
func parseAnthropic(s *scan, d *Delta) shapeError {
	if se, ok := s.enterTopObject(); !ok {
		return se
	}
	var typ span
	var sawError bool
	var content rawSpan
	n := 0
	for {
		k, ok := s.member(&n)
		if !ok {
			break
		}
		switch string(k) {
		case "type":
			typ = s.strVal()
		case "delta", "content_block":
			parseAnthropicBlock(s, d, false)
		case "message":
			// message_start: the message object carries the input usage.
			parseAnthropicMessage(s, d)
		case "content":
			content = s.rawVal()
		case "usage":
			parseUsage(s, &d.Usage)
		case "error":
			sawError = parseErrorValue(s, d) || sawError
		default:
			s.skip()
		}
	}
	s.end()
	if s.err != nil {
		return ""
	}
	switch {
	case s.is(typ, "message_stop"):
		d.Done = true
	case s.is(typ, "message"):
		// A whole non-streaming message.
		parseAnthropicContent(s, content, d)
		d.Done = true
	case !typ.ok && !sawError:
		return `missing "type"`
	}
	if typ.ok {
		d.EndMarker = endAnthropic
	}
	return ""
}

// parseAnthropicMessage reads message_start's message: usage and (normally empty) content.
func parseAnthropicMessage(s *scan, d *Delta) {
	if !s.enterObject() {
		s.skip()
		return
	}
	n := 0
	for {
		k, ok := s.member(&n)
		if !ok {
			return
		}
		switch string(k) {
		case "usage":
			parseUsage(s, &d.Usage)
		case "content":
			r := s.rawVal()
			parseAnthropicContent(s, r, d)
		default:
			s.skip()
		}
	}
}

// parseAnthropicBlock reads a content block: a streaming delta or content_block object, or
// (whole) an element of a complete message's content array. A tool_use call's input counts as
// output: in a whole message it is the input JSON, in a stream the input_json_delta's
// partial_json (content_block_start's input is an empty placeholder, so it is skipped).
func parseAnthropicBlock(s *scan, d *Delta, whole bool) {
	if !s.enterObject() {
		s.skip()
		return
	}
	n := 0
	for {
		k, ok := s.member(&n)
		if !ok {
			return
		}
		switch string(k) {
		case "text", "name":
			d.Content, _ = s.str(d.Content)
		case "thinking":
			d.Reasoning, _ = s.str(d.Reasoning)
		case "partial_json":
			if whole {
				s.skip()
			} else {
				d.Content, _ = s.str(d.Content)
			}
		case "input":
			if whole {
				d.Content = append(d.Content, s.raw()...)
			} else {
				s.skip()
			}
		default:
			s.skip()
		}
	}
}

// parseAnthropicContent reads a content block array: text and thinking blocks, and tool_use
// blocks whose name and input JSON count as output.
func parseAnthropicContent(s *scan, r rawSpan, d *Delta) {
	if r.end == r.start {
		return
	}
	t := s.sub(r)
	defer s.adopt(&t)
	if !t.enterArray() {
		return
	}
	n := 0
	for t.element(&n) {
		parseAnthropicBlock(&t, d, true)
	}
}
