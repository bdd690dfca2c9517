package endpoint

// Hugging Face Text Generation Inference: POST /generate returns {"generated_text", "details"}
// (the serverless Inference API wraps it in an array); /generate_stream sends one event per
// token, the last also carrying the full generated_text and the details.

func renderTGI(dst []byte, r *Request) ([]byte, error) {
	var o obj
	o.open(dst, r.Extra)
	if o.key("inputs") {
		o.b = appendPrompt(o.b, r)
	}
	if o.key("parameters") {
		// details:true makes TGI report generated_tokens (the server's output count) in
		// /generate and in the last /generate_stream event.
		o.b = append(o.b, `{"details":true`...)
		if r.MaxTokens > 0 {
			o.b = append(o.b, `,"max_new_tokens":`...)
			o.b = appendInt(o.b, r.MaxTokens)
		}
		o.b = append(o.b, '}')
	}
	return o.close()
}

func parseTGI(s *scan, d *Delta) shapeError {
	switch s.peek() {
	case '[':
		s.enterArray()
		n := 0
		for s.element(&n) {
			if se := parseTGIObject(s, d); se != "" {
				return se
			}
		}
		s.end()
		return ""
	case '{':
		se := parseTGIObject(s, d)
		s.end()
		return se
	}
	if s.err == nil {
		s.skip()
		return "expected a JSON object or array"
	}
	return ""
}

func parseTGIObject(s *scan, d *Delta) shapeError {
	if se, ok := s.enterTopObject(); !ok {
		return se
	}
	var (
		text, generated     span
		special             bool
		sawToken, sawDetail bool
		sawError            bool
	)
	n := 0
	for {
		k, ok := s.member(&n)
		if !ok {
			break
		}
		switch string(k) {
		case "token":
			sawToken = true
			if !s.enterObject() {
				s.skip()
				continue
			}
			m := 0
			for {
				tk, ok := s.member(&m)
				if !ok {
					break
				}
				switch string(tk) {
				case "text":
					text = s.strVal()
				case "special":
					special = s.bool()
				default:
					s.skip()
				}
			}
		case "generated_text":
			generated = s.strVal()
		case "details":
			sawDetail = parseTGIDetails(s, d) || sawDetail
		case "error":
			sawError = parseErrorValue(s, d) || sawError
		default:
			s.skip()
		}
	}
	if s.err != nil {
		return ""
	}
	switch {
	case sawToken:
		// Streaming: each event's token text; special tokens (</s>, <|eot_id|>) are not
		// output. The last event's generated_text repeats the whole output, so it is not
		// appended, only taken as the end of the stream.
		if !special {
			d.Content = s.appendSpan(d.Content, text)
		}
		d.EndMarker = endTGI
		if generated.ok || sawDetail {
			d.Done = true
		}
	case generated.ok:
		d.Content = s.appendSpan(d.Content, generated)
		d.Done = true
	case sawError:
	default:
		return `missing "generated_text" or "token"`
	}
	return ""
}

// parseTGIDetails reads details.generated_tokens (and input_length, sent by TGI >= 2 in
// stream details) as usage. It returns false for null.
func parseTGIDetails(s *scan, d *Delta) bool {
	if !s.enterObject() {
		s.skip()
		return false
	}
	var u Usage
	n := 0
	for {
		k, ok := s.member(&n)
		if !ok {
			break
		}
		switch string(k) {
		case "generated_tokens":
			if v, ok := s.int(); ok {
				u.CompletionTokens, u.Has = v, u.Has|UsageCompletion
			}
		case "input_length":
			if v, ok := s.int(); ok {
				u.PromptTokens, u.Has = v, u.Has|UsagePrompt
			}
		default:
			s.skip()
		}
	}
	d.Usage.Merge(u)
	return true
}
