package accum

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestStatsPopulationStd(t *testing.T) {
	d := NewDist(100, 1)
	for _, v := range []float64{2, 4, 4, 4, 5, 5, 7, 9} {
		d.Add(v)
	}
	s := d.Stats(1)
	if s.Std != 2 || s.Avg != 5 || s.Count != 8 || s.Sum != 40 || s.Min != 2 || s.Max != 9 || s.Approx {
		t.Fatalf("stats %+v; want avg 5 std 2 (population) sum 40", s)
	}
	if s := NewDist(10, 1).Stats(1); s != nil {
		t.Fatalf("empty distribution gave %+v", s)
	}
}

// NaN is no value: left out and counted. Infinite values are values: they count, and every
// statistic they reach is infinite (NaN where both signs meet), in the exact and the
// histogram modes alike.
func TestStatsNonFinite(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	cases := []struct {
		name               string
		in                 []float64
		count, nans        int64
		sum, avg, min, max float64
		p50, p99           float64
		std                float64
	}{
		{"nan left out", []float64{nan, 3, nan}, 1, 2, 3, 3, 3, 3, 3, 3, 0},
		{"+inf counted", []float64{3, inf, 1}, 3, 0, inf, inf, 1, inf, 3, inf, nan},
		{"-inf counted", []float64{3, -inf, 1}, 3, 0, -inf, -inf, -inf, 3, 1, 2.96, nan},
		{"both signs", []float64{-inf, 0, 0, 0, inf}, 5, 0, nan, nan, -inf, inf, 0, inf, nan},
		{"only +inf", []float64{inf, inf}, 2, 0, inf, inf, inf, inf, inf, inf, nan},
	}
	same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
	for _, c := range cases {
		for _, limit := range []int{100, 1} { // exact, then histogram mode
			d := NewDist(limit, 1)
			for _, v := range c.in {
				d.Add(v)
			}
			s := d.Stats(1)
			if s == nil || s.Count != c.count || s.NaN != c.nans || !same(s.Sum, c.sum) || !same(s.Avg, c.avg) ||
				!same(s.Min, c.min) || !same(s.Max, c.max) || !same(s.P[4], c.p50) || !same(s.P[8], c.p99) || !same(s.Std, c.std) {
				t.Errorf("%s (limit %d): %+v", c.name, limit, s)
			}
		}
	}
	d := NewDist(10, 1)
	d.Add(nan)
	if s := d.Stats(1); s != nil {
		t.Errorf("only NaN: %+v, want no statistics", s)
	}
}

// Finite values never overflow a statistic: values at the float64 limit have a finite mean,
// standard deviation and percentiles (a spread of 3.4e308 included), Sum is +Inf only
// because the true sum is beyond float64, and values of ordinary size give exactly what the
// plain sums gave.
func TestStatsNoOverflow(t *testing.T) {
	for _, limit := range []int{100, 1} {
		d := NewDist(limit, 1)
		for _, v := range []float64{1.7e308, -1.7e308, 1.7e308, 1.7e308} {
			d.Add(v)
		}
		s := d.Stats(1)
		if s.Avg != 0.85e308 || s.Min != -1.7e308 || s.Max != 1.7e308 || math.IsNaN(s.Std) || math.IsInf(s.Std, 0) ||
			math.Abs(s.Std-math.Sqrt(3)*0.85e308)/s.Std > 1e-12 || !math.IsInf(s.Sum, 1) {
			t.Errorf("limit %d: %+v", limit, s)
		}
		for i, p := range s.P {
			if math.IsNaN(p) || math.IsInf(p, 0) {
				t.Errorf("limit %d: %s = %v", limit, PercentileNames[i], p)
			}
		}
		// A true sum beyond float64.
		e := NewDist(limit, 1)
		e.Add(1.7e308)
		e.Add(1.7e308)
		if st := e.Stats(1); !math.IsInf(st.Sum, 1) || st.Avg != 1.7e308 || st.Std != 0 {
			t.Errorf("limit %d: sum of two 1.7e308: %+v", limit, st)
		}
		// The same as unscaled sums for ordinary values.
		f := NewDist(limit, 1)
		var sum float64
		for i := range 50 {
			v := float64(i*i) * 1.37e6
			f.Add(v)
			sum += v
		}
		if st := f.Stats(1e6); st.Avg != sum/50/1e6 && math.Abs(st.Avg-sum/50/1e6) > 1e-9 {
			t.Errorf("limit %d: avg %v, want %v", limit, st.Avg, sum/50/1e6)
		}
	}
}

// Past the exact limit the percentiles come from HdrHistogram: within its 3 significant
// digits of the exact values, with exact count, mean, min and max, negative values included.
func TestStatsHistogramFallback(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	exact := NewDist(1<<30, 1)
	approx := NewDist(1000, 1)
	for i := 0; i < 200_000; i++ {
		v := math.Exp(r.NormFloat64())*20e6 - 2e6 // latencies in ns, some negative
		exact.Add(v)
		approx.Add(v)
	}
	e, a := exact.Stats(1e6), approx.Stats(1e6) // ns to ms
	if !a.Approx || e.Approx {
		t.Fatalf("approx flags %v %v", e.Approx, a.Approx)
	}
	if a.Count != e.Count || a.Min != e.Min || a.Max != e.Max {
		t.Fatalf("count/min/max differ: %+v vs %+v", a, e)
	}
	if math.Abs(a.Avg-e.Avg) > 1e-9*math.Abs(e.Avg) || math.Abs(a.Std-e.Std) > 1e-6*e.Std {
		t.Fatalf("moments differ: avg %v vs %v, std %v vs %v", a.Avg, e.Avg, a.Std, e.Std)
	}
	for i, p := range Percentiles {
		if math.Abs(a.P[i]-e.P[i]) > 2e-3*math.Max(math.Abs(e.P[i]), 1) {
			t.Errorf("p%v: histogram %v, exact %v", p, a.P[i], e.P[i])
		}
	}
}

// Merging partial distributions in any grouping gives identical exact statistics, so the
// output does not depend on how logs were split.
func TestStatsMergeDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	vals := make([]float64, 5000)
	for i := range vals {
		vals[i] = r.Float64() * 1e7
	}
	whole := NewDist(1<<20, 1)
	for _, v := range vals {
		whole.Add(v)
	}
	parts := []*Dist{NewDist(1<<20, 1), NewDist(1<<20, 1), NewDist(1<<20, 1)}
	rev := slices.Clone(vals)
	slices.Reverse(rev)
	for i, v := range rev {
		parts[i%3].Add(v)
	}
	merged := NewDist(1<<20, 1)
	for _, p := range parts {
		merged.Merge(p)
	}
	if a, b := *whole.Stats(1), *merged.Stats(1); a != b {
		t.Fatalf("merged %+v\nwhole  %+v", b, a)
	}
}

func TestStatsMergeIntoHistogram(t *testing.T) {
	a, b := NewDist(100, 1), NewDist(100, 1)
	for i := 0; i < 80; i++ {
		a.Add(float64(i))
		b.Add(float64(i + 80))
	}
	a.Merge(b)
	s := a.Stats(1)
	if !s.Approx || s.Count != 160 || s.Min != 0 || s.Max != 159 {
		t.Fatalf("%+v", s)
	}
	if math.Abs(s.P[4]-79.5) > 0.5 {
		t.Fatalf("p50 %v; want about 79.5", s.P[4])
	}
}
