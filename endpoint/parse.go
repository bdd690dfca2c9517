package endpoint

import (
	"math"

	"github.com/llmbench/llmbench/internal/jsonwire"
)

// Helpers shared by the per-type response parsers.

// enterTopObject enters the object a parser expects. When the value is something else it is
// skipped and ok is false, with the shape error to report: none after a syntax error, which
// the scanner already holds.
func enterTopObject(s *jsonwire.Scanner) (se shapeError, ok bool) {
	if s.EnterObject() {
		return "", true
	}
	if s.Err() == nil {
		s.Skip()
		return "expected a JSON object", false
	}
	return "", false
}

// parseUsage reads a usage object in any of the dialects (OpenAI chat/completions,
// Responses, Anthropic, image generation) into u. It returns false for null or a non-object.
func parseUsage(s *jsonwire.Scanner, u *Usage) bool {
	if !s.EnterObject() {
		s.Skip()
		return false
	}
	var (
		v                     Usage
		cacheRead, cacheWrite int
		hasCacheRead          bool
	)
	n := 0
	for {
		k, ok := s.Member(&n)
		if !ok {
			break
		}
		switch string(k) {
		case "prompt_tokens", "input_tokens":
			if x, ok := s.Int(); ok {
				v.PromptTokens, v.Has = x, v.Has|UsagePrompt
			}
		case "completion_tokens", "output_tokens":
			if x, ok := s.Int(); ok {
				v.CompletionTokens, v.Has = x, v.Has|UsageCompletion
			}
		case "total_tokens":
			if x, ok := s.Int(); ok {
				v.TotalTokens, v.Has = x, v.Has|UsageTotal
			}
		case "reasoning_tokens":
			if x, ok := s.Int(); ok {
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
			cacheRead, hasCacheRead = s.Int()
		case "cache_creation_input_tokens":
			cacheWrite, _ = s.Int()
		default:
			s.Skip()
		}
	}
	if s.Err() != nil {
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
func detailInts(s *jsonwire.Scanner, a, b string) (v [2]int, found [2]bool) {
	if !s.EnterObject() {
		s.Skip()
		return v, found
	}
	n := 0
	for {
		k, ok := s.Member(&n)
		if !ok {
			return v, found
		}
		switch string(k) {
		case a:
			v[0], found[0] = s.Int()
		case b:
			v[1], found[1] = s.Int()
		default:
			s.Skip()
		}
	}
}

// parseErrorValue reads an "error" member: a string, or an object whose "message" (or, for
// lack of one, whose raw JSON) becomes d.ErrorMsg. null means no error. It reports whether
// an error was recorded.
func parseErrorValue(s *jsonwire.Scanner, d *Delta) bool {
	switch s.Peek() {
	case 'n':
		s.Skip()
		return false
	case '"':
		sp := s.StrSpan()
		d.ErrorMsg = string(s.AppendSpan(nil, sp))
		if d.ErrorMsg == "" {
			d.ErrorMsg = "error"
		}
		return true
	case '{':
		start := s.Pos()
		s.EnterObject()
		var msg jsonwire.Span
		n := 0
		for {
			k, ok := s.Member(&n)
			if !ok {
				break
			}
			if string(k) == "message" {
				msg = s.StrSpan()
			} else {
				s.Skip()
			}
		}
		if s.Err() != nil {
			return false
		}
		if msg.OK && msg.Len() > 0 {
			d.ErrorMsg = string(s.AppendSpan(nil, msg))
		} else {
			d.ErrorMsg = string(s.Bytes()[start:s.Pos()])
		}
		return true
	default:
		raw := s.Raw()
		if s.Err() != nil {
			return false
		}
		d.ErrorMsg = string(raw)
		return true
	}
}

// errorFromSpan records a top-level message of an {"object":"error","message":...} body
// (vLLM's and SGLang's older error format).
func errorFromSpan(s *jsonwire.Scanner, d *Delta, msg jsonwire.Span) {
	d.ErrorMsg = string(s.AppendSpan(nil, msg))
	if d.ErrorMsg == "" {
		d.ErrorMsg = "error"
	}
}

// saturatingAdd is a + b, the nearest int past either end of the range on overflow.
func saturatingAdd(a, b int) int {
	c := a + b
	switch {
	case a > 0 && b > 0 && c < 0:
		return math.MaxInt
	case a < 0 && b < 0 && c >= 0:
		return math.MinInt
	}
	return c
}
