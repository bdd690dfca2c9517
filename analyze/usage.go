package analyze

import (
	"fmt"

	"github.com/llmbench/llmbench/endpoint"
)

// Impossible server token counts (docs/metrics.md "Server token counts"). A server's usage
// block is its claim; analyze takes it (with --use-server-token-count, as ISL and OSL) only
// where it could be true:
//
//   - a negative count is invalid: the field is treated as absent (as if the server had not
//     sent it), and the response counted;
//   - a completion count whose visible part (completion_tokens less reasoning_tokens and
//     audio tokens) is more than the response's text could encode is implausible: every
//     token of text carries at least one byte, so a response cannot hold more such tokens
//     than the bytes of content, tool calls and reasoning it delivered, plus one per content
//     event and usageSlack for the tokens that carry none (an end-of-sequence token, special
//     tokens). The count is kept (it is the server's claim) and the response counted.
//
// A run whose token counts come from the server (--use-server-token-count) and holds either
// kind does not pass: Health reports it (ProblemUsage) and analyze exits 1. Without it the
// counts are only the usage_* metrics', and a note says how many were invalid.

// usageSlack is the tokens a response may hold beyond one per byte of text and one per
// content event.
const usageSlack = 16

// Bits of requestMetrics.BadUsage.
const (
	usageNegative    uint8 = 1 << iota // a count was negative (and is now absent)
	usageImplausible                   // completion_tokens beyond what the text could encode
)

// usageFieldsChecked are the usage fields a negative value is removed from.
var usageFieldsChecked = [...]struct {
	bit endpoint.UsageField
	get func(*endpoint.Usage) *int
}{
	{endpoint.UsagePrompt, func(u *endpoint.Usage) *int { return &u.PromptTokens }},
	{endpoint.UsageCompletion, func(u *endpoint.Usage) *int { return &u.CompletionTokens }},
	{endpoint.UsageTotal, func(u *endpoint.Usage) *int { return &u.TotalTokens }},
	{endpoint.UsageReasoning, func(u *endpoint.Usage) *int { return &u.ReasoningTokens }},
	{endpoint.UsageCachedPrompt, func(u *endpoint.Usage) *int { return &u.CachedPromptTokens }},
	{endpoint.UsagePromptAudio, func(u *endpoint.Usage) *int { return &u.PromptAudioTokens }},
	{endpoint.UsageCompletionAudio, func(u *endpoint.Usage) *int { return &u.CompletionAudioTokens }},
}

// checkUsage removes the negative counts from u and reports them and an implausible
// completion count (tokens: the endpoint produces tokens) for a response that delivered
// textBytes bytes of text in events content events.
func checkUsage(u *endpoint.Usage, tokens bool, textBytes, events int) (bad uint8) {
	for _, f := range usageFieldsChecked {
		if p := f.get(u); u.Has&f.bit != 0 && *p < 0 {
			u.Has &^= f.bit
			*p = 0
			bad |= usageNegative
		}
	}
	if !tokens || u.Has&endpoint.UsageCompletion == 0 {
		return bad
	}
	visible := u.CompletionTokens
	if u.Has&endpoint.UsageReasoning != 0 && u.ReasoningTokens <= visible {
		visible -= u.ReasoningTokens
	}
	if u.Has&endpoint.UsageCompletionAudio != 0 && u.CompletionAudioTokens <= visible {
		visible -= u.CompletionAudioTokens
	}
	if visible > MaxPlausibleTokens(textBytes, events) {
		bad |= usageImplausible
	}
	return bad
}

// MaxPlausibleTokens is the most visible output tokens a response that delivered textBytes
// bytes of text in events content events can hold (checkUsage's rule).
func MaxPlausibleTokens(textBytes, events int) int { return textBytes + events + usageSlack }

// UsageCheck counts the valid profile responses whose server token counts were invalid.
type UsageCheck struct {
	// Negative counts the responses with a negative count (treated as absent), Implausible
	// those claiming more output tokens than their text could encode.
	Negative, Implausible int64
	// Rests says the run's token counts, and so its token throughput, came from the
	// server (--use-server-token-count).
	Rests bool
}

// Bad reports whether any response's counts were invalid.
func (u UsageCheck) Bad() bool { return u.Negative > 0 || u.Implausible > 0 }

// String says what was found, for a note, a problem or an error line.
func (u UsageCheck) String() string {
	s := ""
	if u.Negative > 0 {
		s = fmt.Sprintf("%d responses had negative token counts in their usage (treated as absent)", u.Negative)
	}
	if u.Implausible > 0 {
		if s != "" {
			s += "; "
		}
		s += fmt.Sprintf("%d responses claimed more completion tokens than their text could encode (more than one per byte of text and per content event, plus %d)",
			u.Implausible, usageSlack)
	}
	if s != "" && u.Rests {
		s += ": the token counts and throughputs rest on the server's usage (--use-server-token-count)"
	}
	return s
}

// add counts one valid profile request's bad usage.
func (u *UsageCheck) add(bad uint8) {
	if bad&usageNegative != 0 {
		u.Negative++
	}
	if bad&usageImplausible != 0 {
		u.Implausible++
	}
}

func (u *UsageCheck) merge(o UsageCheck) {
	u.Negative += o.Negative
	u.Implausible += o.Implausible
}
