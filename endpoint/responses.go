package endpoint

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
func parseResponses(s *scan, d *Delta) shapeError {
	if se, ok := s.enterTopObject(); !ok {
		return se
	}
	var (
		typ, delta, object, message span
		item, response, output      rawSpan
		sawError                    bool
	)
	n := 0
	for {
		k, ok := s.member(&n)
		if !ok {
			break
		}
		switch string(k) {
		case "type":
			typ = s.strVal()
		case "delta":
			delta = s.strVal()
		case "item":
			item = s.rawVal()
		case "response":
			response = s.rawVal()
		case "output":
			output = s.rawVal()
		case "object":
			object = s.strVal()
		case "message":
			message = s.strVal()
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
	if !typ.ok {
		switch {
		case s.is(object, "response") || output.end > output.start:
			// A whole non-streaming response; its usage was read above.
			parseResponseOutput(s, output, d)
			d.Done = true
			return ""
		case sawError:
			return ""
		case s.is(object, "error"):
			errorFromSpan(s, d, message)
			return ""
		}
		return `missing "type" or "output"`
	}
	d.EndMarker = endResponses
	switch string(s.b[typ.start:typ.end]) {
	case "response.output_text.delta", "response.refusal.delta", "response.function_call_arguments.delta":
		d.Content = s.appendSpan(d.Content, delta)
	case "response.reasoning_text.delta", "response.reasoning_summary_text.delta":
		d.Reasoning = s.appendSpan(d.Reasoning, delta)
	case "response.output_item.added":
		// A function call starts: its name counts as output like chat tool calls; the
		// arguments follow as response.function_call_arguments.delta events.
		t := s.sub(item)
		var ityp, name span
		if t.enterObject() {
			m := 0
			for {
				k, ok := t.member(&m)
				if !ok {
					break
				}
				switch string(k) {
				case "type":
					ityp = t.strVal()
				case "name":
					name = t.strVal()
				default:
					t.skip()
				}
			}
		}
		s.adopt(&t)
		if t.is(ityp, "function_call") {
			d.Content = t.appendSpan(d.Content, name)
		}
	case "response.completed", "response.incomplete", "response.failed":
		d.Done = true
		t := s.sub(response)
		if t.enterObject() {
			m := 0
			for {
				k, ok := t.member(&m)
				if !ok {
					break
				}
				switch string(k) {
				case "usage":
					parseUsage(&t, &d.Usage)
				case "error":
					parseErrorValue(&t, d)
				default:
					t.skip()
				}
			}
		}
		s.adopt(&t)
	case "error":
		if !sawError {
			errorFromSpan(s, d, message)
		}
	}
	return ""
}

// parseResponseOutput reads the output items of a whole response: message text (output_text,
// refusal), reasoning (reasoning_text content and summary_text) and function calls.
func parseResponseOutput(s *scan, r rawSpan, d *Delta) {
	t := s.sub(r)
	defer s.adopt(&t)
	if !t.enterArray() {
		return
	}
	n := 0
	for t.element(&n) {
		if !t.enterObject() {
			t.skip()
			continue
		}
		var typ, name, args span
		var content, summary rawSpan
		m := 0
		for {
			k, ok := t.member(&m)
			if !ok {
				break
			}
			switch string(k) {
			case "type":
				typ = t.strVal()
			case "name":
				name = t.strVal()
			case "arguments":
				args = t.strVal()
			case "content":
				content = t.rawVal()
			case "summary":
				summary = t.rawVal()
			default:
				t.skip()
			}
		}
		switch {
		case t.is(typ, "message"):
			parseResponseParts(&t, content, &d.Content)
		case t.is(typ, "reasoning"):
			parseResponseParts(&t, content, &d.Reasoning)
			parseResponseParts(&t, summary, &d.Reasoning)
		case t.is(typ, "function_call"):
			d.Content = t.appendSpan(d.Content, name)
			d.Content = t.appendSpan(d.Content, args)
		}
	}
}

// parseResponseParts appends the text (or refusal) of each content part.
func parseResponseParts(s *scan, r rawSpan, dst *[]byte) {
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
		if !t.enterObject() {
			t.skip()
			continue
		}
		m := 0
		for {
			k, ok := t.member(&m)
			if !ok {
				break
			}
			switch string(k) {
			case "text", "refusal":
				*dst, _ = t.str(*dst)
			default:
				t.skip()
			}
		}
	}
}
