package endpoint

import "github.com/llmbench/llmbench/internal/jsonwire"

// OpenAI Responses API (/v1/responses), as served by OpenAI, vLLM and SGLang. Streaming
// events carry their kind in "type" (vLLM writes it after "delta"), so values are recorded
// as spans and interpreted once the whole event has been read.

func renderResponses(dst []byte, r *Request) ([]byte, error) {
	var o obj
	o.openModel(dst, r)
	// System turns become "instructions", the Responses API's system prompt.
	appendSystem(&o, "instructions", r)
	if o.key("input") {
		o.b = appendMessageParts(o.b, r, true, partsResponses)
	}
	o.bool("stream", r.Streaming)
	if r.MaxTokens > 0 {
		o.int("max_output_tokens", r.MaxTokens)
	}
	return o.close()
}

// parseResponses parses one streaming event or a whole response object.
func parseResponses(s *jsonwire.Scanner, d *Delta) shapeError {
	if se, ok := enterTopObject(s); !ok {
		return se
	}
	var (
		typ, delta, object, message jsonwire.Span
		item, response, output      jsonwire.RawSpan
		sawError                    bool
	)
	n := 0
	for {
		k, ok := s.Member(&n)
		if !ok {
			break
		}
		switch string(k) {
		case "type":
			typ = s.StrSpan()
		case "delta":
			delta = s.StrSpan()
		case "item":
			item = s.ValueSpan()
		case "response":
			response = s.ValueSpan()
		case "output":
			output = s.ValueSpan()
		case "object":
			object = s.StrSpan()
		case "message":
			message = s.StrSpan()
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
	if !typ.OK {
		switch {
		case s.Is(object, "response") || output.Len() > 0:
			// A whole non-streaming response; its usage was read above.
			parseResponseOutput(s, output, d)
			d.Done = true
			return ""
		case sawError:
			return ""
		case s.Is(object, "error"):
			errorFromSpan(s, d, message)
			return ""
		}
		return `missing "type" or "output"`
	}
	d.EndMarker = endResponses
	switch string(s.SpanBytes(typ)) {
	case "response.output_text.delta", "response.refusal.delta", "response.function_call_arguments.delta":
		d.Content = s.AppendSpan(d.Content, delta)
	case "response.reasoning_text.delta", "response.reasoning_summary_text.delta":
		d.Reasoning = s.AppendSpan(d.Reasoning, delta)
	case "response.output_item.added":
		// A function call starts: its name counts as output like chat tool calls; the
		// arguments follow as response.function_call_arguments.delta events.
		t := s.Sub(item)
		var ityp, name jsonwire.Span
		if t.EnterObject() {
			m := 0
			for {
				k, ok := t.Member(&m)
				if !ok {
					break
				}
				switch string(k) {
				case "type":
					ityp = t.StrSpan()
				case "name":
					name = t.StrSpan()
				default:
					t.Skip()
				}
			}
		}
		s.Adopt(&t)
		if t.Is(ityp, "function_call") {
			d.Content = t.AppendSpan(d.Content, name)
		}
	case "response.completed", "response.incomplete", "response.failed":
		d.Done = true
		t := s.Sub(response)
		if t.EnterObject() {
			m := 0
			for {
				k, ok := t.Member(&m)
				if !ok {
					break
				}
				switch string(k) {
				case "usage":
					parseUsage(&t, &d.Usage)
				case "error":
					parseErrorValue(&t, d)
				default:
					t.Skip()
				}
			}
		}
		s.Adopt(&t)
	case "error":
		if !sawError {
			errorFromSpan(s, d, message)
		}
	}
	return ""
}

// parseResponseOutput reads the output items of a whole response: message text (output_text,
// refusal), reasoning (reasoning_text content and summary_text) and function calls.
func parseResponseOutput(s *jsonwire.Scanner, r jsonwire.RawSpan, d *Delta) {
	t := s.Sub(r)
	defer s.Adopt(&t)
	if !t.EnterArray() {
		return
	}
	n := 0
	for t.Element(&n) {
		if !t.EnterObject() {
			t.Skip()
			continue
		}
		var typ, name, args jsonwire.Span
		var content, summary jsonwire.RawSpan
		m := 0
		for {
			k, ok := t.Member(&m)
			if !ok {
				break
			}
			switch string(k) {
			case "type":
				typ = t.StrSpan()
			case "name":
				name = t.StrSpan()
			case "arguments":
				args = t.StrSpan()
			case "content":
				content = t.ValueSpan()
			case "summary":
				summary = t.ValueSpan()
			default:
				t.Skip()
			}
		}
		switch {
		case t.Is(typ, "message"):
			parseResponseParts(&t, content, &d.Content)
		case t.Is(typ, "reasoning"):
			parseResponseParts(&t, content, &d.Reasoning)
			parseResponseParts(&t, summary, &d.Reasoning)
		case t.Is(typ, "function_call"):
			d.Content = t.AppendSpan(d.Content, name)
			d.Content = t.AppendSpan(d.Content, args)
		}
	}
}

// parseResponseParts appends the text (or refusal) of each content part.
func parseResponseParts(s *jsonwire.Scanner, r jsonwire.RawSpan, dst *[]byte) {
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
		if !t.EnterObject() {
			t.Skip()
			continue
		}
		m := 0
		for {
			k, ok := t.Member(&m)
			if !ok {
				break
			}
			switch string(k) {
			case "text", "refusal":
				*dst, _ = t.Str(*dst)
			default:
				t.Skip()
			}
		}
	}
}
