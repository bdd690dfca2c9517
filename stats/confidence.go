package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Confidence is what AIPerf's multi-run aggregate reports for one metric over the runs:
// the mean of the runs' values, their sample standard deviation (n−1), min and max, the
// coefficient of variation std/mean, the standard error std/√n and the Student-t
// confidence interval mean ± t·SE, t being the two-sided critical value for n−1 degrees
// of freedom. With one value the spread is 0, the interval collapses to the mean and
// TCritical is NaN (AIPerf's single-run shape).
type Confidence struct {
	N                        int
	Mean, Std, Min, Max      float64
	CV, SE                   float64
	CILow, CIHigh, TCritical float64
}

// Summarize computes the Confidence of values at the confidence level (0 < level < 1).
// NaN and infinite values are left out, as AIPerf leaves them out; with none left, every
// field but N is NaN.
func Summarize(values []float64, level float64) Confidence {
	var xs []float64
	for _, v := range values {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			xs = append(xs, v)
		}
	}
	c := Confidence{N: len(xs)}
	if len(xs) == 0 {
		nan := math.NaN()
		c.Mean, c.Std, c.Min, c.Max, c.CV, c.SE, c.CILow, c.CIHigh, c.TCritical = nan, nan, nan, nan, nan, nan, nan, nan, nan
		return c
	}
	c.Min, c.Max = xs[0], xs[0]
	for _, v := range xs {
		c.Min, c.Max = math.Min(c.Min, v), math.Max(c.Max, v)
	}
	c.Mean = Mean(xs)
	if len(xs) == 1 {
		c.CILow, c.CIHigh, c.TCritical = c.Mean, c.Mean, math.NaN()
		return c
	}
	n := float64(len(xs))
	c.Std = SampleStd(xs, c.Mean)
	if c.Mean != 0 {
		c.CV = c.Std / c.Mean
	} else {
		c.CV = math.Inf(1)
	}
	c.SE = c.Std / math.Sqrt(n)
	c.TCritical = TQuantile(1-(1-level)/2, n-1)
	c.CILow, c.CIHigh = c.Mean-c.TCritical*c.SE, c.Mean+c.TCritical*c.SE
	return c
}

// Aggregate computes the Confidence of every key over runs (each run's values by key) at
// the confidence level. A key is aggregated over the runs that have a value of it, and its
// Confidence.N says how many did: an aggregate always says what it was taken over.
func Aggregate(runs []map[string]float64, level float64) map[string]Confidence {
	vals := map[string][]float64{}
	for _, r := range runs {
		for k, v := range r {
			vals[k] = append(vals[k], v)
		}
	}
	out := make(map[string]Confidence, len(vals))
	for k, v := range vals {
		out[k] = Summarize(v, level)
	}
	return out
}

// RelativeCIWidth is the confidence interval's width over |mean| (the ci_width convergence
// measure); +Inf for a zero mean, NaN for fewer than two values.
func (c Confidence) RelativeCIWidth() float64 {
	if c.N < 2 {
		return math.NaN()
	}
	if c.Mean == 0 {
		return math.Inf(1)
	}
	return (c.CIHigh - c.CILow) / math.Abs(c.Mean)
}

// TQuantile returns the p-quantile of Student's t distribution with df degrees of freedom
// (df > 0, 0 < p < 1): the t with P(T ≤ t) = p, as scipy.stats.t.ppf computes it, by
// gonum's distuv.StudentsT (the inverse of the regularized incomplete beta function), so
// no table is involved and any df works. Outside its domain it is NaN where gonum panics.
func TQuantile(p, df float64) float64 {
	if !(df > 0) || !(p > 0 && p < 1) {
		return math.NaN()
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(p)
}
