package endpoint

import "github.com/llmbench/llmbench/internal/jsonwire"

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
			o.b = jsonwire.AppendInt(o.b, r.MaxTokens)
		}
		o.b = append(o.b, '}')
	}
	return o.close()
}

func parseTGI(s *jsonwire.Scanner, d *Delta) shapeError {
	switch s.Peek() {
	case '[':
		s.EnterArray()
		n := 0
		for s.Element(&n) {
			if se := parseTGIObject(s, d); se != "" {
				return se
			}
		}
		s.End()
		return ""
	case '{':
		se := parseTGIObject(s, d)
		s.End()
		return se
	}
	if s.Err() == nil {
		s.Skip()
		return "expected a JSON object or array"
	}
	return ""
}

func parseTGIObject(s *jsonwire.Scanner, d *Delta) shapeError {
	if se, ok := enterTopObject(s); !ok {
		return se
	}
	var (
		text, generated     jsonwire.Span
		special             bool
		sawToken, sawDetail bool
		sawError            bool
	)
	n := 0
	for {
		k, ok := s.Member(&n)
		if !ok {
			break
		}
		switch string(k) {
		case "token":
			sawToken = true
			if !s.EnterObject() {
				s.Skip()
				continue
			}
			m := 0
			for {
				tk, ok := s.Member(&m)
				if !ok {
					break
				}
				switch string(tk) {
				case "text":
					text = s.StrSpan()
				case "special":
					special = s.Bool()
				default:
					s.Skip()
				}
			}
		case "generated_text":
			generated = s.StrSpan()
		case "details":
			sawDetail = parseTGIDetails(s, d) || sawDetail
		case "error":
			sawError = parseErrorValue(s, d) || sawError
		default:
			s.Skip()
		}
	}
	if s.Err() != nil {
		return ""
	}
	switch {
	case sawToken:
		// Streaming: each event's token text; special tokens (</s>, <|eot_id|>) are not
		// output. The last event's generated_text repeats the whole output, so it is not
		// appended, only taken as the end of the stream.
		if !special {
			d.Content = s.AppendSpan(d.Content, text)
		}
		d.EndMarker = endTGI
		if generated.OK || sawDetail {
			d.Done = true
		}
	case generated.OK:
		d.Content = s.AppendSpan(d.Content, generated)
		d.Done = true
	case sawError:
	default:
		return `missing "generated_text" or "token"`
	}
	return ""
}

// parseTGIDetails reads details.generated_tokens (and input_length, sent by TGI >= 2 in
// stream details) as usage. It returns false for null.
func parseTGIDetails(s *jsonwire.Scanner, d *Delta) bool {
	if !s.EnterObject() {
		s.Skip()
		return false
	}
	var u Usage
	n := 0
	for {
		k, ok := s.Member(&n)
		if !ok {
			break
		}
		switch string(k) {
		case "generated_tokens":
			if v, ok := s.Int(); ok {
				u.CompletionTokens, u.Has = v, u.Has|UsageCompletion
			}
		case "input_length":
			if v, ok := s.Int(); ok {
				u.PromptTokens, u.Has = v, u.Has|UsagePrompt
			}
		default:
			s.Skip()
		}
	}
	d.Usage.Merge(u)
	return true
}
