package mmapds

import (
	"fmt"
	"time"
)

// Offer is what a plan's profile phase offers the server, read from its records: the rate of
// its planned instants and the bodies it sends again. plan inspect, plan, analyze and
// profile all report it from here, so "offered" means one thing everywhere.
type Offer struct {
	// Requests counts the profile records; Planned those with a planned instant, the earliest
	// at FirstNs and the latest at LastNs (both -1 when none has one: a closed loop).
	Requests, Planned int
	FirstNs, LastNs   int64
	// Records counts the records of both phases, Bodies the distinct bodies they send. Repeats counts the
	// profile records whose body an earlier record (warmup or profile) already sent.
	Records, Bodies, Repeats int
	// PromptTokens is the ISL of the profile records, RepeatTokens that of the repeats: the
	// prompt tokens a server's prefix cache is offered again, whole bodies at least.
	PromptTokens, RepeatTokens int64
}

// Offer reads every record (O(n), one map entry per distinct body).
func (p *Plan) Offer() (Offer, error) {
	o := Offer{FirstNs: -1, LastNs: -1}
	type span struct {
		off uint64
		n   uint32
	}
	seen := make(map[span]struct{})
	for i := range p.Len() {
		r, _, err := p.Record(i)
		if err != nil {
			return Offer{}, err
		}
		k := span{r.BodyOffset, r.BodyLen}
		_, again := seen[k]
		if !again {
			seen[k] = struct{}{}
		}
		if r.Phase != PhaseProfile {
			continue
		}
		o.Requests++
		o.PromptTokens += int64(r.ISL)
		if again {
			o.Repeats++
			o.RepeatTokens += int64(r.ISL)
		}
		if r.SendOffsetNs >= 0 {
			o.Planned++
			if o.FirstNs < 0 || r.SendOffsetNs < o.FirstNs {
				o.FirstNs = r.SendOffsetNs
			}
			o.LastNs = max(o.LastNs, r.SendOffsetNs)
		}
	}
	o.Records, o.Bodies = p.Len(), len(seen)
	return o, nil
}

// Span is the time from the first to the last planned profile instant (0 when fewer than two).
func (o Offer) Span() time.Duration {
	if o.Planned < 2 {
		return 0
	}
	return time.Duration(o.LastNs - o.FirstNs)
}

// Rate is the request rate the plan's own instants offer, in requests per second: the gaps
// between its planned instants over their span, times the requests per planned instant (a
// session's later turns follow their previous turn and have none). 0 when it has no span: a
// closed loop, or a single instant. A Poisson plan of nominal rate 10 req/s may offer 11.2.
func (o Offer) Rate() float64 {
	s := o.Span().Seconds()
	if s <= 0 {
		return 0
	}
	return float64(o.Planned-1) / s * float64(o.Requests) / float64(o.Planned)
}

// ReuseRatio is RepeatTokens over PromptTokens (0 without prompt tokens).
func (o Offer) ReuseRatio() float64 {
	if o.PromptTokens == 0 {
		return 0
	}
	return float64(o.RepeatTokens) / float64(o.PromptTokens)
}

// RepeatNote says, in one sentence, how the profile's requests repeat bodies and the prompt
// tokens that offers a prefix cache again; "" when no profile request repeats a body.
func (o Offer) RepeatNote() string {
	if o.Repeats == 0 {
		return ""
	}
	verb := "repeat"
	if o.Repeats == 1 {
		verb = "repeats"
	}
	return fmt.Sprintf("%d of the %d profile requests %s a body sent before (%d distinct bodies, each sent %.1f times on average): %.1f%% of the profile's prompt tokens (%d of %d) are in bodies sent before, which a prefix-caching server can answer from its cache (TTFT optimistic)",
		o.Repeats, o.Requests, verb, o.Bodies, float64(o.Records)/float64(o.Bodies), 100*o.ReuseRatio(), o.RepeatTokens, o.PromptTokens)
}
