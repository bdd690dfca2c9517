package stats

import (
	"math"
	"testing"
)

func TestMannWhitney(t *testing.T) {
	seq := func(lo, hi int) []float64 {
		var v []float64
		for i := lo; i <= hi; i++ {
			v = append(v, float64(i))
		}
		return v
	}
	for _, tc := range []struct {
		name string
		a, b []float64
		u, p float64
	}{
		// scipy.stats.mannwhitneyu(a, b, method="asymptotic") gives U=0, p=0.01219.
		{"separated", seq(1, 5), seq(6, 10), 0, 0.01219},
		{"separated reversed", seq(6, 10), seq(1, 5), 25, 0.01219},
		{"identical", seq(1, 5), seq(1, 5), 12.5, 1},
		{"all equal", []float64{3, 3, 3}, []float64{3, 3}, 3, 1},
		{"empty", nil, seq(1, 3), 0, 1},
		// Ties, worked by hand: U = 3 ties of 3 against 3, halved = 1.5; tie groups of sizes
		// 2, 4, 2 give Σ(t³−t) = 72, σ² = 24/12·(11 − 72/90) = 20.4, z = (10.5 − 0.5)/√20.4 =
		// 2.21404, p = erfc(z/√2) = 0.026826.
		{"ties", []float64{1, 2, 2, 3, 3, 3}, []float64{3, 4, 4, 5}, 1.5, 0.026826},
	} {
		u, p := MannWhitney(tc.a, tc.b)
		if u != tc.u || math.Abs(p-tc.p) > 5e-4 {
			t.Errorf("%s: U %v p %v, want U %v p %v", tc.name, u, p, tc.u, tc.p)
		}
	}
}

// withU builds samples of sizes n1 and n2, no value repeated, in which a's U is u
// (0 ≤ u ≤ n1·n2): b is 2, 4, …, 2·n2 and each value of a lies above as many of b's as
// it has left to count.
func withU(n1, n2, u int) (a, b []float64) {
	for i := 1; i <= n2; i++ {
		b = append(b, float64(2*i))
	}
	for i := 0; i < n1; i++ {
		k := min(u, n2)
		u -= k
		a = append(a, float64(2*k+1)+float64(i)/float64(2*n1))
	}
	return a, b
}

// TestMannWhitneyTable: the normal approximation keeps the published critical values of U
// for a two-sided test at α = 0.05 (the standard table of critical values of U printed in
// nonparametric-statistics texts such as Siegel & Castellan's; the exact distribution of U
// gives the same: n1 = n2 = 5 → 2, n1 = 4, n2 = 6 → 2, n1 = n2 = 10 → 23, n1 = n2 = 20 →
// 127): U at the critical value is significant, one more is not. (At 8 vs 8 and 6 vs 9 the approximation's p at the critical value is 0.052: the
// table comes from the exact distribution, so only the sizes where both agree are listed.)
func TestMannWhitneyTable(t *testing.T) {
	for _, c := range []struct{ n1, n2, crit int }{{5, 5, 2}, {4, 6, 2}, {10, 10, 23}, {20, 20, 127}} {
		a, b := withU(c.n1, c.n2, c.crit)
		u, p := MannWhitney(a, b)
		if u != float64(c.crit) || p > 0.05 {
			t.Errorf("%d vs %d: U %v p %v, want U %d significant at 0.05", c.n1, c.n2, u, p, c.crit)
		}
		a, b = withU(c.n1, c.n2, c.crit+1)
		if u, p = MannWhitney(a, b); u != float64(c.crit+1) || p <= 0.05 {
			t.Errorf("%d vs %d: U %v p %v, want U %d not significant at 0.05", c.n1, c.n2, u, p, c.crit+1)
		}
	}
	// 5 vs 5 at U = 2 and 3, the formula's exact values: erfc(z/√2) with z = 10/√(275/12)
	// and 9/√(275/12).
	a, b := withU(5, 5, 2)
	if _, p := MannWhitney(a, b); math.Abs(p-0.03671385636270413) > 1e-15 {
		t.Errorf("5 vs 5, U 2: p %.17g", p)
	}
	a, b = withU(5, 5, 3)
	if _, p := MannWhitney(a, b); math.Abs(p-0.06010280593886632) > 1e-15 {
		t.Errorf("5 vs 5, U 3: p %.17g", p)
	}
}
