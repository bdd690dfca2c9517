package sweep

import (
	"fmt"
	"math"
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
	var sum float64
	for _, v := range xs {
		sum += v
		c.Min, c.Max = math.Min(c.Min, v), math.Max(c.Max, v)
	}
	n := float64(len(xs))
	c.Mean = sum / n
	if len(xs) == 1 {
		c.CILow, c.CIHigh, c.TCritical = c.Mean, c.Mean, math.NaN()
		return c
	}
	var ss float64
	for _, v := range xs {
		ss += (v - c.Mean) * (v - c.Mean)
	}
	c.Std = math.Sqrt(ss / (n - 1))
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

// Convergence modes (AIPerf's --convergence-mode).
const (
	ModeCIWidth = "ci_width" // relative t-interval width at most the threshold
	ModeCV      = "cv"       // coefficient of variation at most the threshold
)

// DefaultThreshold is AIPerf's default --convergence-threshold of a mode: 0.10 for
// ci_width, 0.05 for cv.
func DefaultThreshold(mode string) float64 {
	if mode == ModeCV {
		return 0.05
	}
	return 0.10
}

// MinRunsForConvergence is how many runs AIPerf waits for before it may stop early:
// min(3, planned).
func MinRunsForConvergence(planned int) int { return min(3, planned) }

// Converged reports whether c meets the convergence criterion of mode at threshold, and the
// measured value. Fewer than two values never converge.
func Converged(c Confidence, mode string, threshold float64) (bool, float64, error) {
	var v float64
	switch mode {
	case ModeCIWidth:
		v = c.RelativeCIWidth()
	case ModeCV:
		v = math.Abs(c.CV)
		if c.N < 2 {
			v = math.NaN()
		}
	default:
		return false, 0, fmt.Errorf("convergence mode %q: want %s or %s", mode, ModeCIWidth, ModeCV)
	}
	return v <= threshold, v, nil // NaN compares false
}

// TQuantile returns the p-quantile of Student's t distribution with df degrees of freedom
// (df > 0, 0 < p < 1): the t with P(T ≤ t) = p, as scipy.stats.t.ppf computes it. The tail
// probability comes from the regularized incomplete beta function and the quantile is found
// by bisection to the last bit, so no table is involved and any df works.
func TQuantile(p, df float64) float64 {
	switch {
	case !(df > 0) || !(p > 0 && p < 1):
		return math.NaN()
	case p == 0.5:
		return 0
	case p < 0.5:
		return -TQuantile(1-p, df)
	}
	q := 1 - p // upper tail to hit: solving on it keeps precision near p = 1
	lo, hi := 0.0, 1.0
	for tTail(hi, df) > q {
		lo, hi = hi, hi*2
		if math.IsInf(hi, 0) {
			return math.Inf(1)
		}
	}
	for i := 0; i < 2000; i++ {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if tTail(mid, df) > q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo + (hi-lo)/2
}

// tTail is P(T > t) for t ≥ 0: I_x(df/2, 1/2)/2 with x = df/(df+t²).
func tTail(t, df float64) float64 {
	x := df / (df + t*t)
	return 0.5 * regIncBeta(df/2, 0.5, x)
}

// regIncBeta is the regularized incomplete beta function I_x(a, b), by the continued
// fraction (modified Lentz), applied directly or through the symmetry
// I_x(a,b) = 1 − I_{1−x}(b,a), whichever converges fast.
func regIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a + b)
	lb, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(b)
	front := math.Exp(la - lb - lc + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, 1-x)/b
}

// betaCF evaluates the continued fraction of the incomplete beta function.
func betaCF(a, b, x float64) float64 {
	const tiny, eps = 1e-300, 1e-16
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1-qab*x/qap
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= 10000; m++ {
		fm := float64(m)
		m2 := 2 * fm
		aa := fm * (b - fm) * x / ((qam + m2) * (a + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		h *= d * c
		aa = -(a + fm) * (qab + fm) * x / ((a + m2) * (qap + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}
