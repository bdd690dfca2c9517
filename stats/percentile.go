package stats

import "math"

// PercentileSorted is numpy.percentile(x, p) with the default "linear" method over x sorted
// ascending, including numpy's lerp, which computes from the upper neighbour when the
// fraction is at least 0.5: the definition every distribution here reports.
func PercentileSorted(x []float64, p float64) float64 {
	return PercentileRanked(int64(len(x)), p, func(k int64) float64 { return x[k] })
}

// PercentileRanked is PercentileSorted over n ≥ 1 ordered values read by rank: at(k) is the
// k-th smallest (0-based). A distribution that does not hold its values as one sorted slice
// (infinities counted apart, a histogram) reports the same percentile through it.
func PercentileRanked(n int64, p float64, at func(k int64) float64) float64 {
	vi := float64(n-1) * (p / 100)
	lo := math.Floor(vi)
	k := int64(lo)
	if k >= n-1 {
		return at(n - 1)
	}
	if k < 0 {
		return at(0)
	}
	return Lerp(at(k), at(k+1), vi-lo)
}

// Lerp is numpy's lerp, made total: between neighbours whose difference overflows it
// weighs them instead, and an infinite neighbour with any weight gives that infinity (NaN
// between -Inf and +Inf). Percentiles read from other representations (a histogram)
// interpolate with it so that they agree with PercentileSorted.
func Lerp(a, b, t float64) float64 {
	switch {
	case t == 0:
		return a
	case math.IsInf(a, 0) && math.IsInf(b, 0):
		if a == b {
			return a
		}
		return math.NaN()
	case math.IsInf(a, 0):
		return a
	case math.IsInf(b, 0):
		return b
	}
	diff := b - a
	if math.IsInf(diff, 0) {
		return a*(1-t) + b*t
	}
	if t >= 0.5 {
		return b - diff*(1-t)
	}
	return a + diff*t
}

// Mean is the arithmetic mean of x, summed in order; NaN for no value.
func Mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// SampleStd is the sample standard deviation (n−1) of x about its mean m, summed in order:
// the spread AIPerf reports over runs and over pooled requests. 0 for fewer than two values.
func SampleStd(x []float64, m float64) float64 {
	if len(x) < 2 {
		return 0
	}
	var ss float64
	for _, v := range x {
		ss += (v - m) * (v - m)
	}
	return math.Sqrt(ss / float64(len(x)-1))
}
