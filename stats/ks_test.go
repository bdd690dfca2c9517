package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// bruteKSP is the exact two-sample p-value by enumeration: the share of the C(n+m, n) ways
// to split the pooled (distinct) values whose statistic is at least d.
func bruteKSP(a, b []float64, d float64) float64 {
	pool := append(append([]float64{}, a...), b...)
	n := len(a)
	hit, all := 0, 0
	for mask := 0; mask < 1<<len(pool); mask++ {
		if popcount(mask) != n {
			continue
		}
		var x, y []float64
		for i, v := range pool {
			if mask&(1<<i) != 0 {
				x = append(x, v)
			} else {
				y = append(y, v)
			}
		}
		all++
		if KS2(x, y).D >= d-1e-9 {
			hit++
		}
	}
	return float64(hit) / float64(all)
}

func popcount(x int) int {
	n := 0
	for ; x > 0; x &= x - 1 {
		n++
	}
	return n
}

// TestKS2Known: statistics and exact p-values of textbook cases (SciPy's ks_2samp
// method="exact" gives the same: 0.1 for 3 vs 3 disjoint, 2/252 for 5 vs 5).
func TestKS2Known(t *testing.T) {
	cases := []struct {
		a, b  []float64
		d, p  float64
		exact bool
	}{
		{[]float64{1, 2, 3}, []float64{4, 5, 6}, 1, 0.1, true},
		{[]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 1, 2.0 / 252, true},
		{[]float64{1, 2, 3, 4}, []float64{1, 2, 3, 4}, 0, 1, true},
		// 1,3 | 2,4: D = 1/2, which every one of the 6 splits reaches.
		{[]float64{1, 3}, []float64{2, 4}, 0.5, 1, true},
		// 1,2,4 | 3,5,6: D = 2/3, reached by 12 of the 20 splits.
		{[]float64{1, 2, 4}, []float64{3, 5, 6}, 2.0 / 3, 0.6, true},
	}
	for _, c := range cases {
		r := KS2(c.a, c.b)
		if math.Abs(r.D-c.d) > 1e-12 || math.Abs(r.P-c.p) > 1e-9 || r.Exact != c.exact {
			t.Errorf("KS2(%v, %v) = D %v p %v exact %v; want D %v p %v", c.a, c.b, r.D, r.P, r.Exact, c.d, c.p)
		}
	}
}

// TestKS2ExactMatchesEnumeration: the lattice-path p-value equals brute-force enumeration.
func TestKS2ExactMatchesEnumeration(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 20; trial++ {
		n, m := 2+rng.IntN(5), 2+rng.IntN(6)
		var a, b []float64
		for i := 0; i < n; i++ {
			a = append(a, rng.Float64())
		}
		for i := 0; i < m; i++ {
			b = append(b, rng.Float64()+0.3*rng.Float64())
		}
		r := KS2(a, b)
		if want := bruteKSP(a, b, r.D); math.Abs(r.P-want) > 1e-9 {
			t.Errorf("n=%d m=%d D=%v: p %v, enumeration %v", n, m, r.D, r.P, want)
		}
	}
}

// TestKolmogorovQ: the limiting distribution's published critical values (Smirnov 1948:
// λ for α = 0.10, 0.05, 0.01: 1.2238, 1.3581, 1.6276).
func TestKolmogorovQ(t *testing.T) {
	for _, c := range []struct{ lambda, q float64 }{{1.2238, 0.10}, {1.3581, 0.05}, {1.6276, 0.01}, {0.1, 1}, {5, 0}} {
		if got := KolmogorovQ(c.lambda); math.Abs(got-c.q) > 2e-4 {
			t.Errorf("Q(%v) = %v, want %v", c.lambda, got, c.q)
		}
	}
}

// TestKS2Asymptotic: above the exact limit the p-value is asymptotic; the same distribution
// passes and a shifted one fails.
func TestKS2Asymptotic(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	draw := func(n int, shift float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = rng.NormFloat64() + shift
		}
		return out
	}
	same := KS2(draw(2000, 0), draw(1500, 0))
	if same.Exact || same.P < 0.01 { // 0.01: analyze's ShapeAlpha, the level its shape check fails at
		t.Errorf("same distribution: %+v", same)
	}
	// D of two normals one sd apart tends to 2Φ(0.5) − 1 = 0.383.
	far := KS2(draw(2000, 0), draw(1500, 1))
	if far.Exact || far.P > 1e-10 || math.Abs(far.D-0.383) > 0.05 {
		t.Errorf("shifted distribution: %+v", far)
	}
}
