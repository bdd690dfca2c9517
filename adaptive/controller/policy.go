package controller

import (
	"math"

	"github.com/llmbench/llmbench/adaptive"
)

// Phases of the search, as events name them.
const (
	PhaseRamp    = "ramp"
	PhaseBisect  = "bisect"
	PhaseSustain = "sustain"
)

// Completed reasons of the summary.
const (
	ReasonSustained      = "sustain_duration_completed"
	ReasonFailedAtMin    = "sla_failed_at_minimum"
	ReasonRunEnded       = "run_ended_before_sustain_completed"
	ReasonControlFailed  = "control_failed"
	ReasonNoWindow       = "no_window_judged"
	ReasonBoundaryAtMax  = "passed_at_maximum"
	ReasonBoundaryBisect = "bisection_converged"
)

// Policy is the search over the control value, window by window, with no clock and no I/O:
// a ramp from the minimum (each passing window steps up: a fixed percent, or a step sized by
// the binding SLA's margin), then, at the first failing window, a bisection between the last
// passing and the first failing value until they are one step apart (whole values) or 5 %
// apart (rates), then the sustain: the boundary (the last passing value) held for the sustain
// windows. A failing sustain window lowers the boundary one step and starts the sustain
// again. Failing at the minimum fails the search.
type Policy struct {
	s     adaptive.Settings
	phase string
	value float64
	// lastPass and firstFail are the largest passing and smallest failing values (NaN: none).
	lastPass, firstFail float64
	boundary            float64
	// sustainNeed is how many windows the sustain holds; sustainWindows/Passed its count.
	sustainNeed, sustainWindows, sustainPassed int
	sustainTotal, sustainPassedTotal           int
	candidates                                 []adaptive.Candidate
	status, reason                             string
}

// NewPolicy starts the search at s.Min (s checked, with defaults).
func NewPolicy(s adaptive.Settings) *Policy {
	need := int(math.Ceil(float64(s.SustainDuration) / float64(s.AssessmentPeriod)))
	return &Policy{s: s, phase: PhaseRamp, value: s.Min, lastPass: math.NaN(), firstFail: math.NaN(), boundary: math.NaN(), sustainNeed: need}
}

// Step is what the policy decided after a window.
type Step struct {
	// Next is the control value from now on; Changed says it differs from the window's.
	Next    float64
	Changed bool
	// Boundary says the boundary was found (or lowered) at this step: Boundary value is
	// BoundaryValue. SustainStarted says the sustain (re)starts at Next.
	Boundary       bool
	BoundaryValue  float64
	SustainStarted bool
	// Done says the search is over: Status and Reason are the summary's.
	Done           bool
	Status, Reason string
}

// Value is the control value in force; Phase the search's phase.
func (p *Policy) Value() float64 { return p.value }
func (p *Policy) Phase() string  { return p.phase }

// Judge takes the verdict of a window run at Value: passed, and the binding SLA's margin
// (AIPerf's normalised margin, for the SLA-margin step).
func (p *Policy) Judge(passed bool, margin float64) Step {
	v := p.value
	p.count(v, passed)
	if passed {
		p.lastPass = maxNaN(p.lastPass, v)
	} else {
		p.firstFail = minNaN(p.firstFail, v)
	}
	switch p.phase {
	case PhaseRamp:
		if passed {
			if v >= p.s.Max {
				return p.found(v)
			}
			return p.move(p.up(v, margin))
		}
		if math.IsNaN(p.lastPass) {
			return p.done(adaptive.StatusFailed, ReasonFailedAtMin)
		}
		p.phase = PhaseBisect
		return p.bisect()
	case PhaseBisect:
		return p.bisect()
	case PhaseSustain:
		p.sustainWindows++
		p.sustainTotal++
		if passed {
			p.sustainPassed++
			p.sustainPassedTotal++
			if p.sustainWindows >= p.sustainNeed {
				return p.done(adaptive.StatusComplete, ReasonSustained)
			}
			return Step{Next: v}
		}
		// The boundary did not hold: lower it a step and sustain again.
		if v <= p.s.Min {
			return p.done(adaptive.StatusFailed, ReasonFailedAtMin)
		}
		p.lastPass = math.NaN()
		return p.found(p.down(v))
	}
	return Step{Next: v, Done: true, Status: p.status, Reason: p.reason}
}

// bisect is the next step between the last passing and the first failing value.
func (p *Policy) bisect() Step {
	lo, hi := p.lastPass, p.firstFail
	if p.converged(lo, hi) {
		return p.found(lo)
	}
	mid := (lo + hi) / 2
	if p.s.Integer {
		mid = math.Floor(mid)
	}
	return p.move(mid)
}

// converged says lo and hi are as close as the search resolves.
func (p *Policy) converged(lo, hi float64) bool {
	if p.s.Integer {
		return hi-lo <= 1
	}
	return hi-lo <= 0.05*lo
}

// found makes v the boundary and starts the sustain there.
func (p *Policy) found(v float64) Step {
	p.phase, p.boundary = PhaseSustain, v
	p.sustainWindows, p.sustainPassed = 0, 0
	st := Step{Next: v, Changed: v != p.value, Boundary: true, BoundaryValue: v, SustainStarted: true}
	p.value = v
	if p.sustainNeed == 0 {
		d := p.done(adaptive.StatusComplete, ReasonSustained)
		d.Next, d.Changed, d.Boundary, d.BoundaryValue, d.SustainStarted = st.Next, st.Changed, true, v, true
		return d
	}
	return st
}

func (p *Policy) move(v float64) Step {
	st := Step{Next: v, Changed: v != p.value}
	p.value = v
	return st
}

func (p *Policy) done(status, reason string) Step {
	p.phase, p.status, p.reason = "", status, reason
	return Step{Next: p.value, Done: true, Status: status, Reason: reason}
}

// up is the ramp's next value after a window that passed at v with the binding margin.
func (p *Policy) up(v, margin float64) float64 {
	var next float64
	switch p.s.StepPolicy {
	case adaptive.SLAMargin:
		// Each 10 % of headroom on the binding SLA is one base step, up to the multiplier.
		m := math.Min(math.Max(margin*10, 1), p.s.MaxStepMultiplier)
		if math.IsNaN(margin) {
			m = 1
		}
		next = v + p.s.BaseStep*m
	default:
		next = v * (1 + p.s.StepPercent/100)
	}
	if p.s.Integer {
		next = math.Max(math.Floor(next), v+1)
	}
	if !math.IsNaN(p.firstFail) && next >= p.firstFail {
		next = (v + p.firstFail) / 2
		if p.s.Integer {
			next = math.Floor(next)
		}
	}
	return math.Min(next, p.s.Max)
}

// down is one step below v, never under the minimum.
func (p *Policy) down(v float64) float64 {
	next := v * 0.95
	if p.s.Integer {
		next = v - 1
	}
	return math.Max(next, p.s.Min)
}

// count adds a window at v to its candidate.
func (p *Policy) count(v float64, passed bool) {
	for i := range p.candidates {
		if c := &p.candidates[i]; c.Value == v {
			c.Windows++
			if passed {
				c.WindowsPassed++
			}
			c.Passed = c.Windows == c.WindowsPassed
			return
		}
	}
	c := adaptive.Candidate{Value: v, Windows: 1, Passed: passed}
	if passed {
		c.WindowsPassed = 1
	}
	p.candidates = append(p.candidates, c)
}

// Summary is the search's summary so far; a search not done is incomplete (the run ended
// before it sustained the boundary).
func (p *Policy) Summary() adaptive.Summary {
	s := adaptive.Summary{Status: p.status, CompletedReason: p.reason, ControlVariable: p.s.Variable,
		BoundaryValue: ptr(p.boundary), LastPassingValue: ptr(p.lastPass), FirstFailingValue: ptr(p.firstFail),
		FinalValue: ptr(p.value), SustainWindowsPassed: p.sustainPassedTotal, SustainWindowsTotal: p.sustainTotal,
		Candidates: append([]adaptive.Candidate{}, p.candidates...)}
	if s.Status == "" {
		s.Status, s.CompletedReason = adaptive.StatusIncomplete, ReasonRunEnded
	}
	for _, sla := range p.s.SLAs {
		s.SLAs = append(s.SLAs, sla.String())
	}
	return s
}

// LastPass and FirstFail are the largest passing and smallest failing values (nil: none).
func (p *Policy) LastPass() *float64  { return ptr(p.lastPass) }
func (p *Policy) FirstFail() *float64 { return ptr(p.firstFail) }

// Abandon ends the search with status and reason (a control that could not be applied).
func (p *Policy) Abandon(status, reason string) { p.done(status, reason) }

func ptr(v float64) *float64 {
	if math.IsNaN(v) {
		return nil
	}
	return &v
}

func maxNaN(a, b float64) float64 {
	if math.IsNaN(a) {
		return b
	}
	return math.Max(a, b)
}

func minNaN(a, b float64) float64 {
	if math.IsNaN(a) {
		return b
	}
	return math.Min(a, b)
}
