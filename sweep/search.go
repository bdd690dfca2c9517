package sweep

import (
	"errors"
	"fmt"
	"math"
)

// Outcome is what one probe of a search found.
type Outcome int

// The outcomes of a probe.
const (
	// Pass: the probe ran, the client kept its schedule and every SLA held.
	Pass Outcome = iota
	// Fail: the probe ran, the client kept its schedule and an SLA did not hold.
	Fail
	// Abort: the probe cannot be judged (the client could not keep up, the run failed or
	// was interrupted): the search stops there with the probe's reason.
	Abort
)

// Why a search stopped: AIPerf's monotonic planner's convergence reasons, plus max-goodput's.
// An aborted probe stops it with the reason the probe gave.
const (
	ReasonPrecision     = "monotonic_precision_reached"   // the bracket is within the precision
	ReasonNoFailure     = "monotonic_no_failure_in_range" // the maximum passed
	ReasonNoPass        = "monotonic_no_pass_in_range"    // the minimum failed
	ReasonMaxIterations = "max_iterations"                // the probe budget ran out first
	ReasonGoodputPeak   = "max_goodput_precision_reached" // the peak is bracketed within the precision
	ReasonGoodputAtMax  = "max_goodput_at_max"            // goodput still grew at the maximum
	ReasonGoodputNoPass = "max_goodput_no_pass_in_range"  // no probe passed: there is no goodput to maximise
)

// SearchOptions bound a search over one load dimension (concurrency or request rate).
type SearchOptions struct {
	// Min and Max bound the values probed (0 < Min ≤ Max).
	Min, Max float64
	// Integer rounds probes to whole numbers (concurrency); a bracket one apart is then done.
	Integer bool
	// Precision ends the bisection once (first failing − last passing) / first failing is
	// below it (AIPerf's 5%: 0.05).
	Precision float64
	// MaxIterations bounds the probes (0: no bound).
	MaxIterations int
}

// Check says what is wrong with o, naming AIPerf's flags.
func (o SearchOptions) Check() error {
	switch {
	case !(o.Min > 0) || math.IsInf(o.Min, 0):
		return fmt.Errorf("--search-min %v: must be positive", o.Min)
	case !(o.Max >= o.Min) || math.IsInf(o.Max, 0):
		return fmt.Errorf("--search-max %v: must be at least --search-min %v", o.Max, o.Min)
	case !(o.Precision > 0 && o.Precision < 1):
		return fmt.Errorf("--search-precision %v: want a fraction between 0 and 1", o.Precision)
	case o.MaxIterations < 0:
		return fmt.Errorf("--search-max-iterations %d: must be positive (0: no bound)", o.MaxIterations)
	case o.Integer && math.Floor(o.Max) < math.Ceil(o.Min):
		return fmt.Errorf("--search-min %v and --search-max %v hold no whole number", o.Min, o.Max)
	}
	return nil
}

// Probe is one probe of a search, in the order run.
type Probe struct {
	Index   int
	Value   float64
	Outcome Outcome
	// Objective is the probed objective (max-goodput), NaN for an SLA search.
	Objective float64
	// Reason is the probe's own account: the SLA that failed, or why it was aborted.
	Reason string
}

// SearchResult is a finished search.
type SearchResult struct {
	Probes []Probe
	// Found says Boundary is the answer: the largest value that passed (the SLA search) or
	// the value of the highest objective (max-goodput). It is false when nothing passed or
	// a probe was aborted: a search the client could not judge reports no boundary.
	Found    bool
	Boundary float64
	// FeasibleMax and InfeasibleMin bracket the boundary: the largest passing value and the
	// smallest failing one above it (NaN when there is none); for max-goodput, the probed
	// values either side of the peak.
	FeasibleMax, InfeasibleMin float64
	// Reason says why the search stopped.
	Reason string
}

// ProbeFunc runs one probe at value and says what it found; objective is the value to
// maximise (max-goodput) and is ignored by the SLA search; reason explains a Fail or Abort.
type ProbeFunc func(value float64) (outcome Outcome, objective float64, reason string)

// errStop ends a search loop early; the result already holds the reason.
var errStop = errors.New("stop")

// searcher runs probes, remembering each value's outcome so that none is run twice.
type searcher struct {
	o     SearchOptions
	probe ProbeFunc
	res   SearchResult
	seen  map[float64]int // value → index in res.Probes
}

func newSearcher(o SearchOptions, probe ProbeFunc) *searcher {
	return &searcher{o: o, probe: probe, seen: map[float64]int{},
		res: SearchResult{FeasibleMax: math.NaN(), InfeasibleMin: math.NaN()}}
}

// at probes x (rounded and clamped), or returns the earlier probe of the same value.
func (s *searcher) at(x float64) (Probe, error) {
	x = s.clamp(x)
	if i, ok := s.seen[x]; ok {
		return s.res.Probes[i], nil
	}
	if s.o.MaxIterations > 0 && len(s.res.Probes) >= s.o.MaxIterations {
		s.res.Reason = ReasonMaxIterations
		return Probe{}, errStop
	}
	out, obj, why := s.probe(x)
	p := Probe{Index: len(s.res.Probes), Value: x, Outcome: out, Objective: obj, Reason: why}
	s.seen[x] = p.Index
	s.res.Probes = append(s.res.Probes, p)
	if out == Abort {
		s.res.Reason = why
		s.res.Found = false
		return p, errStop
	}
	return p, nil
}

func (s *searcher) clamp(x float64) float64 {
	if s.o.Integer {
		x = math.Round(x)
		return math.Min(math.Max(x, math.Ceil(s.o.Min)), math.Floor(s.o.Max))
	}
	return math.Min(math.Max(x, s.o.Min), s.o.Max)
}

// narrow reports whether lo and hi (lo < hi) are within the precision of each other.
func (s *searcher) narrow(lo, hi float64) bool {
	if s.o.Integer && hi-lo <= 1 {
		return true
	}
	return (hi-lo)/math.Max(hi, 1e-300) < s.o.Precision
}

// mid is the point between lo and hi, rounded down for integers but always strictly inside
// when there is room.
func (s *searcher) mid(lo, hi float64) float64 {
	m := lo + (hi-lo)/2
	if s.o.Integer {
		m = math.Floor(m)
		if m <= lo {
			m = lo + 1
		}
	}
	return m
}

// MaxUnderSLA finds the largest value whose probe passes, assuming probes pass below some
// boundary and fail above it: an exponential probe from Min (doubling until a probe fails
// or Max is reached), then bisection between the last passing and the first failing value
// until they are within the precision (AIPerf's monotonic planner, perf_analyzer's
// --binary-search). An aborted probe stops the search without a boundary.
func MaxUnderSLA(o SearchOptions, probe ProbeFunc) SearchResult {
	s := newSearcher(o, probe)
	s.maxUnderSLA()
	return s.res
}

func (s *searcher) maxUnderSLA() {
	r := &s.res
	x := s.clamp(s.o.Min)
	for { // exponential probe
		p, err := s.at(x)
		if err != nil {
			return
		}
		if p.Outcome == Fail {
			r.InfeasibleMin = p.Value
			break
		}
		r.FeasibleMax = p.Value
		r.Found, r.Boundary = true, p.Value
		if p.Value >= s.clamp(s.o.Max) {
			r.Reason = ReasonNoFailure
			return
		}
		x = s.clamp(p.Value * 2)
	}
	if math.IsNaN(r.FeasibleMax) {
		r.Reason = ReasonNoPass
		return
	}
	for !s.narrow(r.FeasibleMax, r.InfeasibleMin) { // bisection
		p, err := s.at(s.mid(r.FeasibleMax, r.InfeasibleMin))
		if err != nil {
			if r.Reason == ReasonMaxIterations {
				r.Found = true // the bracket so far stands: the last passing value
			}
			return
		}
		if p.Outcome == Pass {
			r.FeasibleMax, r.Boundary = p.Value, p.Value
		} else {
			r.InfeasibleMin = p.Value
		}
	}
	r.Reason = ReasonPrecision
}

// MaxObjective finds the value of the highest objective, assuming the objective rises to
// one peak and then falls (goodput over load): an exponential probe from Min until the
// objective falls below the best so far or Max is reached, then halving the bracket around
// the best value (probing the midpoints on either side) until it is within the precision.
// A failed probe counts as objective −∞; an aborted one stops the search without a result.
func MaxObjective(o SearchOptions, probe ProbeFunc) SearchResult {
	s := newSearcher(o, probe)
	s.maxObjective()
	return s.res
}

func (s *searcher) maxObjective() {
	r := &s.res
	score := func(p Probe) float64 {
		if p.Outcome != Pass || math.IsNaN(p.Objective) {
			return math.Inf(-1)
		}
		return p.Objective
	}
	var best Probe
	lo, hi := s.clamp(s.o.Min), s.clamp(s.o.Max)
	x, prev, first := lo, lo, true
	for { // exponential probe
		p, err := s.at(x)
		if err != nil {
			return
		}
		if first || score(p) > score(best) {
			lo, best, first = prev, p, false
		} else {
			hi = p.Value
			break
		}
		if p.Value >= s.clamp(s.o.Max) {
			hi = p.Value
			break
		}
		prev, x = p.Value, s.clamp(p.Value*2)
	}
	setBest := func() {
		r.Found = score(best) > math.Inf(-1)
		r.Boundary = best.Value
		r.FeasibleMax, r.InfeasibleMin = lo, hi
	}
	setBest()
	if best.Value >= s.clamp(s.o.Max) {
		r.Reason = ReasonGoodputAtMax
		if !r.Found {
			r.Reason = ReasonGoodputNoPass
		}
		return
	}
	for !s.narrow(lo, hi) {
		progressed := false
		for _, m := range [...]float64{s.mid(lo, best.Value), s.mid(best.Value, hi)} {
			if m <= lo || m >= hi || m == best.Value {
				continue
			}
			p, err := s.at(m)
			if err != nil {
				setBest()
				if r.Reason != ReasonMaxIterations {
					r.Found = false
				}
				return
			}
			progressed = true
			if score(p) > score(best) {
				if p.Value < best.Value {
					hi = best.Value
				} else {
					lo = best.Value
				}
				best = p
				break
			}
			if p.Value < best.Value {
				lo = p.Value
			} else {
				hi = p.Value
			}
		}
		if !progressed {
			break
		}
	}
	setBest()
	r.Reason = ReasonGoodputPeak
	if !r.Found {
		r.Reason = ReasonGoodputNoPass
	}
}
