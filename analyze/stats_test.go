package analyze

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestPercentileMatchesNumpyLinear(t *testing.T) {
	cases := []struct {
		x    []float64
		p    float64
		want float64
	}{
		{[]float64{1, 2, 3, 4}, 50, 2.5},
		{[]float64{1, 2, 3, 4}, 1, 1.03},
		{[]float64{1, 2, 3, 4}, 99, 3.97},
		{[]float64{15, 20, 35, 40, 50}, 40, 29},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 90, 9.1},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0, 1},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 100, 10},
		{[]float64{7}, 99.9, 7},
	}
	for _, c := range cases {
		if got := percentileSorted(c.x, c.p); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("percentile(%v, %v) = %v; want %v", c.x, c.p, got, c.want)
		}
	}
}

func TestStatsPopulationStd(t *testing.T) {
	d := newDist(100, 1)
	for _, v := range []float64{2, 4, 4, 4, 5, 5, 7, 9} {
		d.add(v)
	}
	s := d.stats(1)
	if s.Std != 2 || s.Avg != 5 || s.Count != 8 || s.Sum != 40 || s.Min != 2 || s.Max != 9 || s.Approx {
		t.Fatalf("stats %+v; want avg 5 std 2 (population) sum 40", s)
	}
	if s := newDist(10, 1).stats(1); s != nil {
		t.Fatalf("empty distribution gave %+v", s)
	}
}

func TestStatsNaNIgnored(t *testing.T) {
	d := newDist(10, 1)
	d.add(math.NaN())
	d.add(math.Inf(1))
	d.add(3)
	if s := d.stats(1); s.Count != 1 || s.Avg != 3 {
		t.Fatalf("%+v", s)
	}
}

// Past the exact limit the percentiles come from HdrHistogram: within its 3 significant
// digits of the exact values, with exact count, mean, min and max, negative values included.
func TestStatsHistogramFallback(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	exact := newDist(1<<30, 1)
	approx := newDist(1000, 1)
	for i := 0; i < 200_000; i++ {
		v := math.Exp(r.NormFloat64())*20e6 - 2e6 // latencies in ns, some negative
		exact.add(v)
		approx.add(v)
	}
	e, a := exact.stats(nsToMs), approx.stats(nsToMs)
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
	whole := newDist(1<<20, 1)
	for _, v := range vals {
		whole.add(v)
	}
	parts := []*dist{newDist(1<<20, 1), newDist(1<<20, 1), newDist(1<<20, 1)}
	rev := slices.Clone(vals)
	slices.Reverse(rev)
	for i, v := range rev {
		parts[i%3].add(v)
	}
	merged := newDist(1<<20, 1)
	for _, p := range parts {
		merged.merge(p)
	}
	if a, b := *whole.stats(1), *merged.stats(1); a != b {
		t.Fatalf("merged %+v\nwhole  %+v", b, a)
	}
}

func TestStatsMergeIntoHistogram(t *testing.T) {
	a, b := newDist(100, 1), newDist(100, 1)
	for i := 0; i < 80; i++ {
		a.add(float64(i))
		b.add(float64(i + 80))
	}
	a.merge(b)
	s := a.stats(1)
	if !s.Approx || s.Count != 160 || s.Min != 0 || s.Max != 159 {
		t.Fatalf("%+v", s)
	}
	if math.Abs(s.P[4]-79.5) > 0.5 {
		t.Fatalf("p50 %v; want about 79.5", s.P[4])
	}
}
