package plan

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Arrival is an arrival process. It answers one question: the gap to the next arrival,
// drawn from r, in units of the mean gap (so its mean is 1). The compiler scales the gaps by
// the rate at each instant (see Ramp), which keeps the process independent of the rate and
// of ramps.
type Arrival interface {
	Next(r *rand.Rand) float64
}

// Constant arrivals are evenly spaced.
type Constant struct{}

// Next returns 1.
func (Constant) Next(*rand.Rand) float64 { return 1 }

// Poisson arrivals have exponential gaps: memoryless, the usual model of independent users.
type Poisson struct{}

// Next draws an exponential gap of mean 1.
func (Poisson) Next(r *rand.Rand) float64 { return r.ExpFloat64() }

// Gamma arrivals have gamma-distributed gaps of shape Smoothness and mean 1, vLLM's
// --burstiness: 1 is Poisson, below 1 burstier, above 1 smoother, and large values
// approach Constant.
type Gamma struct{ Smoothness float64 }

// Next draws a gamma(k, 1/k) gap.
func (g Gamma) Next(r *rand.Rand) float64 { return gammaVariate(r, g.Smoothness) / g.Smoothness }

// NewArrival returns the process named by --arrival-pattern. Smoothness applies to gamma.
func NewArrival(pattern string, smoothness float64) (Arrival, error) {
	switch pattern {
	case "constant":
		return Constant{}, nil
	case "poisson":
		return Poisson{}, nil
	case "gamma":
		if !(smoothness > 0) || math.IsInf(smoothness, 0) {
			return nil, fmt.Errorf("--arrival-smoothness must be > 0 (got %v)", smoothness)
		}
		return Gamma{Smoothness: smoothness}, nil
	}
	return nil, fmt.Errorf("--arrival-pattern must be constant, poisson or gamma (got %q)", pattern)
}

// gammaVariate draws from gamma(k, 1) by Marsaglia and Tsang's method; for k < 1 it draws
// gamma(k+1) and scales by U^(1/k).
func gammaVariate(r *rand.Rand, k float64) float64 {
	if k < 1 {
		u := r.Float64()
		for u == 0 {
			u = r.Float64()
		}
		return gammaVariate(r, k+1) * math.Pow(u, 1/k)
	}
	d := k - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		if u < 1-0.0331*x*x*x*x || (u > 0 && math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v))) {
			return d * v
		}
	}
}
