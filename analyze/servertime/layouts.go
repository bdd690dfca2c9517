package servertime

import (
	"math"

	"github.com/llmbench/llmbench/servertrace"
)

// Phase is one server phase of a request that a span's attributes give as a duration.
type Phase int

// The phases, each the source of one metric.
const (
	Queue   Phase = iota // waiting for a batch slot
	Prefill              // computing the prompt
	Decode               // generating after the first token
	TTFT                 // arrival at the server to first token
	E2E                  // arrival at the server to the last token
	numPhases
)

// Layout is one server's span layout: the span it emits per request and the attribute
// that gives each phase's duration (docs/metrics.md "Server traces" is its table).
type Layout struct {
	// Name names the layout in the per-request export (metadata.server_span.layout).
	Name string
	// Span is the name of the server's per-request span.
	Span string
	// Attributes are the attribute of each phase ("" when the server gives none), in
	// seconds.
	Attributes [numPhases]string
}

// Layouts are the span layouts the join knows. vLLM's llm_request span (vllm/tracing.py's
// SpanAttributes) is the one servers copy: a server whose spans carry these attributes is
// read through it whatever it calls itself.
var Layouts = []Layout{
	{Name: "vllm", Span: "llm_request", Attributes: [numPhases]string{
		Queue:   "gen_ai.latency.time_in_queue",
		Prefill: "gen_ai.latency.time_in_model_prefill",
		Decode:  "gen_ai.latency.time_in_model_decode",
		TTFT:    "gen_ai.latency.time_to_first_token",
		E2E:     "gen_ai.latency.e2e",
	}},
}

// phase is span s's duration of p in ns, false when s does not give it (or gives a value
// that is not a finite, non-negative number of seconds).
func (l *Layout) phase(s *servertrace.Span, p Phase) (int64, bool) {
	a := l.Attributes[p]
	if a == "" {
		return 0, false
	}
	sec, ok := s.Float(a)
	if !ok || !(sec >= 0 && sec < 1e9) { // NaN, negative, infinite or beyond 30 years
		return 0, false
	}
	// Rounded to the nanosecond (what a float of seconds holds beyond it is noise), so
	// that 0.000123456 s is 0.123456 ms.
	return int64(math.Round(sec * 1e9)), true
}

// choose returns the layout span s follows (nil: none known; its attributes go raw to the
// per-request export) and its score among the spans of one request. A request can have
// several spans (a router's, a frontend's and the engine's): the engine's, the one that
// carries the phase attributes, wins; among those with as many, a span of the layout's
// name, then a SERVER span; among equals, the first read.
func choose(s *servertrace.Span) (*Layout, int) {
	var best *Layout
	bestN := 0
	for i := range Layouts {
		l := &Layouts[i]
		n := 0
		for p := Phase(0); p < numPhases; p++ {
			if _, ok := l.phase(s, p); ok {
				n++
			}
		}
		if n > bestN {
			best, bestN = l, n
		}
	}
	score := bestN * 4
	if best != nil && s.Name == best.Span {
		score += 2
	}
	if s.Kind == "Server" {
		score++
	}
	return best, score
}
