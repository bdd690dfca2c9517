package stats

import (
	"math"
	"slices"
)

// MannWhitney returns the Mann–Whitney U statistic of a against b (the number of pairs in
// which a's value is larger, ties counting one half) and its two-sided p-value by the normal
// approximation with the tie correction and a continuity correction, as
// scipy.stats.mannwhitneyu(a, b, method="asymptotic"). With an empty sample, or when every
// value is equal, p is 1.
//
// gonum has no rank test. The normal tail is math.Erfc rather than distuv.Normal.Survival,
// which computes 1 − Erf and so rounds a small p-value to 0.
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

// cmpFloat orders a and b, NaN equal to everything (a sort comparator that never panics).
func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
