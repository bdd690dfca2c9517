package stats

import (
	"math"
	"slices"
)

// KSResult is a two-sample Kolmogorov–Smirnov comparison.
type KSResult struct {
	// D is the statistic: the largest distance between the two empirical CDFs.
	D float64
	// P is the two-sided p-value: exact (Exact true) for small samples, else asymptotic.
	P     float64
	Exact bool
	N, M  int
}

// exactKSLimit bounds n·m for the exact p-value (the lattice-path count costs n·m steps).
const exactKSLimit = 1_000_000

// KS2 compares samples a and b with the two-sample Kolmogorov–Smirnov test. The exact
// p-value counts the lattice paths that stay within D (no ties assumed, as SciPy's
// method="exact"); above n·m = 10^6 it is the asymptotic Kolmogorov distribution with
// Stephens' small-sample correction, Q((√e + 0.12 + 0.11/√e)·D) with e = nm/(n+m).
//
// Written here because gonum has neither p-value, and its stat.KolmogorovSmirnov adds 1/n
// step by step, so its D drifts from the exact i/n − j/m that the lattice count compares.
func KS2(a, b []float64) KSResult {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	n, m := len(x), len(y)
	r := KSResult{N: n, M: m, P: 1}
	if n == 0 || m == 0 {
		return r
	}
	i, j := 0, 0
	for i < n && j < m {
		v := min(x[i], y[j])
		for i < n && x[i] == v {
			i++
		}
		for j < m && y[j] == v {
			j++
		}
		r.D = math.Max(r.D, math.Abs(float64(i)/float64(n)-float64(j)/float64(m)))
	}
	if n*m <= exactKSLimit {
		r.P, r.Exact = ksExactP(r.D, n, m), true
		return r
	}
	e := math.Sqrt(float64(n) * float64(m) / float64(n+m))
	r.P = KolmogorovQ((e + 0.12 + 0.11/e) * r.D)
	return r
}

// ksExactP is P(D_{n,m} ≥ d) under the null: 1 − (paths from (0,0) to (n,m) that keep
// |i/n − j/m| < d) / C(n+m, n). u holds each point's path count over C(i+j, i), which stays
// in [0, 1]: u(i,j) = (i·u(i−1,j) + j·u(i,j−1)) / (i+j).
func ksExactP(d float64, n, m int) float64 {
	if d <= 0 {
		return 1
	}
	eps := 1e-9
	inside := func(i, j int) bool { return math.Abs(float64(i)/float64(n)-float64(j)/float64(m)) < d-eps }
	u := make([]float64, m+1)
	for i := 0; i <= n; i++ {
		for j := 0; j <= m; j++ {
			switch {
			case !inside(i, j):
				u[j] = 0
			case i == 0 && j == 0:
				u[j] = 1
			case i == 0:
				u[j] = u[j-1] // one path along the edge: C(j,0)/C(j,0)
			case j == 0:
				// u[0] keeps the row above's value
			default:
				u[j] = (float64(i)*u[j] + float64(j)*u[j-1]) / float64(i+j)
			}
		}
	}
	return math.Min(1, math.Max(0, 1-u[m]))
}

// KolmogorovQ is the survival function of the Kolmogorov distribution:
// Q(λ) = 2 Σ_{k≥1} (−1)^{k−1} e^{−2k²λ²}.
func KolmogorovQ(lambda float64) float64 {
	if lambda < 0.2 {
		return 1
	}
	sum, sign := 0.0, 1.0
	for k := 1; k <= 100; k++ {
		t := sign * math.Exp(-2*float64(k*k)*lambda*lambda)
		sum += t
		if math.Abs(t) < 1e-12 {
			break
		}
		sign = -sign
	}
	return math.Min(1, math.Max(0, 2*sum))
}
