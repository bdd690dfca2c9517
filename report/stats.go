package report

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/llmbench/llmbench/analyze"
)

// MannWhitney returns the Mann–Whitney U statistic of a against b (the number of pairs in
// which a's value is larger, ties counting one half) and its two-sided p-value by the normal
// approximation with the tie correction and a continuity correction. With an empty sample,
// or when every value is equal, p is 1.
func MannWhitney(a, b []float64) (u, p float64) {
	n1, n2 := float64(len(a)), float64(len(b))
	if n1 == 0 || n2 == 0 {
		return 0, 1
	}
	type obs struct {
		v     float64
		fromA bool
	}
	all := make([]obs, 0, len(a)+len(b))
	for _, v := range a {
		all = append(all, obs{v, true})
	}
	for _, v := range b {
		all = append(all, obs{v, false})
	}
	slices.SortFunc(all, func(x, y obs) int { return cmpFloat(x.v, y.v) })
	var rankA, ties float64
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		rank := float64(i+j+1) / 2 // ranks i+1 … j, averaged
		for k := i; k < j; k++ {
			if all[k].fromA {
				rankA += rank
			}
		}
		t := float64(j - i)
		ties += t*t*t - t
		i = j
	}
	u = rankA - n1*(n1+1)/2
	n := n1 + n2
	sigma2 := n1 * n2 / 12 * ((n + 1) - ties/(n*(n-1)))
	if sigma2 <= 0 {
		return u, 1
	}
	z := (math.Abs(u-n1*n2/2) - 0.5) / math.Sqrt(sigma2)
	if z < 0 {
		z = 0
	}
	return u, math.Min(1, math.Erfc(z/math.Sqrt2))
}

// Bootstrap settings: resamples, and the most values drawn from each run (a larger run is
// first subsampled to this many, without changing the statistic's expectation).
const (
	bootstrapResamples = 1000
	bootstrapMaxN      = 4000
)

// bootstrapCI returns the 95% percentile-bootstrap interval of pct(b) − pct(a), the
// difference of the p-th percentiles of b and a. The generator is seeded from the inputs'
// sizes so the same runs give the same interval.
func bootstrapCI(a, b []float64, pct float64) (lo, hi float64) {
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
		diffs[i] = analyze.PercentileSorted(rb, pct) - analyze.PercentileSorted(ra, pct)
	}
	slices.Sort(diffs)
	return analyze.PercentileSorted(diffs, 2.5), analyze.PercentileSorted(diffs, 97.5)
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
