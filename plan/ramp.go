package plan

import "math"

// Ramp answers "the request rate at time t" (t in seconds from the phase start). Rates are
// piecewise constant; NextChange tells where the current piece ends, so the compiler can
// integrate the rate exactly.
type Ramp interface {
	// Rate returns the rate in requests per second at t (> 0).
	Rate(t float64) float64
	// NextChange returns the first instant after t where the rate changes, or +Inf.
	NextChange(t float64) float64
}

// Steady is a constant rate.
type Steady float64

// Rate returns the rate.
func (s Steady) Rate(float64) float64 { return float64(s) }

// NextChange returns +Inf: the rate never changes.
func (Steady) NextChange(float64) float64 { return math.Inf(1) }

// rampStep is how often a linear ramp updates its rate (AIPerf: every 0.1 s).
const rampStep = 0.1

// Linear ramps the rate up to Target over Duration seconds in steps of 0.1 s, starting at
// Target·0.1/Duration, as AIPerf's --request-rate-ramp-duration does.
type Linear struct {
	Target   float64
	Duration float64
}

// Rate returns Target·min(1, (⌊t/0.1⌋+1)·0.1/Duration).
func (l Linear) Rate(t float64) float64 {
	if t >= l.Duration {
		return l.Target
	}
	step := math.Floor(t/rampStep) + 1
	return l.Target * math.Min(1, step*rampStep/l.Duration)
}

// NextChange returns the next 0.1 s boundary while ramping, then +Inf.
func (l Linear) NextChange(t float64) float64 {
	if t >= l.Duration {
		return math.Inf(1)
	}
	return math.Min(l.Duration, (math.Floor(t/rampStep)+1)*rampStep)
}

// NewRamp returns the rate over time for a target rate and a ramp duration (0: none).
func NewRamp(rate, rampSeconds float64) Ramp {
	if rampSeconds > 0 {
		return Linear{Target: rate, Duration: rampSeconds}
	}
	return Steady(rate)
}

// advance returns the instant after t at which units of "mean gaps" have elapsed under the
// ramp's rate: the time-rescaling that turns a unit-rate arrival process into one that
// follows the ramp. Instants are absolute (cumulative), so rounding never drifts.
func advance(r Ramp, t, units float64) float64 {
	for {
		rate := r.Rate(t)
		end := r.NextChange(t)
		if !(end > t) { // a boundary lost to rounding: step past it
			t = math.Nextafter(t, math.Inf(1))
			continue
		}
		if math.IsInf(end, 1) || units <= rate*(end-t) {
			return t + units/rate
		}
		units -= rate * (end - t)
		t = end
	}
}
