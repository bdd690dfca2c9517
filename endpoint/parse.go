package endpoint

// Helpers shared by the per-type response parsers.

// span is where a string value sits in the input, recorded so a parser can decide what the
// text means after it has seen a sibling key (Responses API events put "type" last).
type span struct {
	start, end int
	esc        bool // contains escapes
	ok         bool // a string was present (not null, not missing)
}

// strVal reads a string value as a span; null or any other value gives ok=false.
func (s *scan) strVal() span {
	if s.peek() != '"' {
		s.skip()
		return span{}
	}
	if j := plainEnd(s.b, s.i+1); j >= 0 {
		start := s.i + 1
		s.i = j + 1
		return span{start: start, end: j, ok: true}
	}
	start, end, esc := s.strSpan()
	if s.err != nil {
		return span{}
	}
	if esc && !validEscapes(s.b[start:end]) {
		s.i = start
		s.fail("invalid escape in string")
		return span{}
	}
	return span{start: start, end: end, esc: esc, ok: true}
}

// appendSpan appends the decoded text of sp.
func (s *scan) appendSpan(dst []byte, sp span) []byte {
	if !sp.ok {
		return dst
	}
	raw := s.b[sp.start:sp.end]
	if sp.esc {
		return unescapeInto(dst, raw)
	}
	return appendValidUTF8(dst, raw)
}

// is reports whether sp holds exactly the text lit (lit never needs escaping).
func (s *scan) is(sp span, lit string) bool {
	return sp.ok && !sp.esc && string(s.b[sp.start:sp.end]) == lit
}

// hasPrefix reports whether sp's text starts with prefix.
func (s *scan) hasPrefix(sp span, prefix string) bool {
	return sp.ok && !sp.esc && sp.end-sp.start >= len(prefix) && string(s.b[sp.start:sp.start+len(prefix)]) == prefix
}

// enterTopObject enters the object a parser expects. When the value is something else it is
// skipped and ok is false, with the shape error to report: none after a syntax error, which
// the scanner already holds.
func (s *scan) enterTopObject() (se shapeError, ok bool) {
	if s.enterObject() {
		return "", true
	}
	if s.err == nil {
		s.skip()
		return "expected a JSON object", false
	}
	return "", false
}

// rawSpan is a value's byte range, to be read later with sub.
type rawSpan struct{ start, end int }

func (s *scan) rawVal() rawSpan {
	s.ws()
	start := s.i
	s.skip()
	return rawSpan{start, s.i}
}

// sub returns a scanner over a recorded value; offsets stay those of the whole input.
func (s *scan) sub(r rawSpan) scan {
	return scan{b: s.b[:r.end], i: r.start, depth: s.depth}
}

// adopt carries a sub-scanner's syntax error back (values were validated when skipped, so
// this only matters for defence in depth).
func (s *scan) adopt(t *scan) {
	if t.err != nil && s.err == nil {
		s.err = t.err
	}
}

// parseUsage reads a usage object in any of the dialects (OpenAI chat/completions,
// Responses, Anthropic, image generation) into u. It returns false for null or a non-object.
func parseUsage(s *scan, u *Usage) bool {
	if !s.enterObject() {
		s.skip()
		return false
	}
	var (
		v                     Usage
		cacheRead, cacheWrite int
		hasCacheRead          bool
	)
	n := 0
	for {
		k, ok := s.member(&n)
		if !ok {
			break
		}
		switch string(k) {
		case "prompt_tokens", "input_tokens":
			if x, ok := s.int(); ok {
				v.PromptTokens, v.Has = x, v.Has|UsagePrompt
			}
		case "completion_tokens", "output_tokens":
			if x, ok := s.int(); ok {
				v.CompletionTokens, v.Has = x, v.Has|UsageCompletion
			}
		case "total_tokens":
			if x, ok := s.int(); ok {
				v.TotalTokens, v.Has = x, v.Has|UsageTotal
			}
		case "reasoning_tokens":
			if x, ok := s.int(); ok {
				v.ReasoningTokens, v.Has = x, v.Has|UsageReasoning
			}
		case "completion_tokens_details", "output_tokens_details":
			x, ok := detailInts(s, "reasoning_tokens", "audio_tokens")
			if ok[0] {
				v.ReasoningTokens, v.Has = x[0], v.Has|UsageReasoning
			}
			if ok[1] {
				v.CompletionAudioTokens, v.Has = x[1], v.Has|UsageCompletionAudio
			}
		case "prompt_tokens_details", "input_tokens_details":
			x, ok := detailInts(s, "cached_tokens", "audio_tokens")
			if ok[0] {
				v.CachedPromptTokens, v.Has = x[0], v.Has|UsageCachedPrompt
			}
			if ok[1] {
				v.PromptAudioTokens, v.Has = x[1], v.Has|UsagePromptAudio
			}
		case "cache_read_input_tokens":
			cacheRead, hasCacheRead = s.int()
		case "cache_creation_input_tokens":
			cacheWrite, _ = s.int()
		default:
			s.skip()
		}
	}
	if s.err != nil {
		return false
	}
	// Anthropic's input_tokens leaves out cached tokens; add them so PromptTokens means the
	// whole prompt as in the OpenAI APIs.
	if hasCacheRead {
		v.CachedPromptTokens, v.Has = cacheRead, v.Has|UsageCachedPrompt
	}
	if v.Has&UsagePrompt != 0 {
		v.PromptTokens = saturatingAdd(v.PromptTokens, saturatingAdd(cacheRead, cacheWrite))
	}
	u.Merge(v)
	return true
}

// detailInts reads keys a and b from a details object ({"reasoning_tokens": 12,
// "audio_tokens": 3}).
func detailInts(s *scan, a, b string) (v [2]int, found [2]bool) {
	if !s.enterObject() {
		s.skip()
		return v, found
	}
	n := 0
	for {
		k, ok := s.member(&n)
		if !ok {
			return v, found
		}
		switch string(k) {
		case a:
			v[0], found[0] = s.int()
		case b:
			v[1], found[1] = s.int()
		default:
			s.skip()
		}
	}
}

// parseErrorValue reads an "error" member: a string, or an object whose "message" (or, for
// lack of one, whose raw JSON) becomes d.ErrorMsg. null means no error. It reports whether
// an error was recorded.
func parseErrorValue(s *scan, d *Delta) bool {
	switch s.peek() {
	case 'n':
		s.skip()
		return false
	case '"':
		sp := s.strVal()
		d.ErrorMsg = string(s.appendSpan(nil, sp))
		if d.ErrorMsg == "" {
			d.ErrorMsg = "error"
		}
		return true
	case '{':
		start := s.i
		s.enterObject()
		var msg span
		n := 0
		for {
			k, ok := s.member(&n)
			if !ok {
				break
			}
			if string(k) == "message" {
				msg = s.strVal()
			} else {
				s.skip()
			}
		}
		if s.err != nil {
			return false
		}
		if msg.ok && msg.end > msg.start {
			d.ErrorMsg = string(s.appendSpan(nil, msg))
		} else {
			d.ErrorMsg = string(s.b[start:s.i])
		}
		return true
	default:
		raw := s.raw()
		if s.err != nil {
			return false
		}
		d.ErrorMsg = string(raw)
		return true
	}
}

// errorFromSpan records a top-level message of an {"object":"error","message":...} body
// (vLLM's and SGLang's older error format).
func errorFromSpan(s *scan, d *Delta, msg span) {
	d.ErrorMsg = string(s.appendSpan(nil, msg))
	if d.ErrorMsg == "" {
		d.ErrorMsg = "error"
	}
}
