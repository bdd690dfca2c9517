package stats

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Bootstrap settings: resamples, and the most values drawn from each sample (a larger one
// is first subsampled to this many, without changing the statistic's expectation).
const (
	bootstrapResamples = 1000
	bootstrapMaxN      = 4000
)

// BootstrapCI returns the 95% percentile-bootstrap interval of pct(b) − pct(a), the
// difference of the p-th percentiles (PercentileSorted) of b and a; NaN, NaN with an empty
// sample. The generator is seeded from the inputs' sizes so the same samples give the same
// interval.
func BootstrapCI(a, b []float64, pct float64) (lo, hi float64) {
	if len(a) == 0 || len(b) == 0 {
		return math.NaN(), math.NaN()
	}
	rng := rand.New(rand.NewPCG(uint64(len(a)), uint64(len(b))))
	a, b = subsample(a, rng), subsample(b, rng)
	diffs := make([]float64, bootstrapResamples)
	ra, rb := make([]float64, len(a)), make([]float64, len(b))
	for i := range diffs {
		for j := range ra {
			ra[j] = a[rng.IntN(len(a))]
		}
		for j := range rb {
			rb[j] = b[rng.IntN(len(b))]
		}
		slices.Sort(ra)
		slices.Sort(rb)
		diffs[i] = PercentileSorted(rb, pct) - PercentileSorted(ra, pct)
	}
	slices.Sort(diffs)
	return PercentileSorted(diffs, 2.5), PercentileSorted(diffs, 97.5)
}

func subsample(v []float64, rng *rand.Rand) []float64 {
	if len(v) <= bootstrapMaxN {
		return v
	}
	out := make([]float64, bootstrapMaxN)
	for i := range out {
		out[i] = v[rng.IntN(len(v))]
	}
	return out
}
