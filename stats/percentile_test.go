package stats

import (
	"math"
	"testing"
)

// TestPercentileMatchesNumpyLinear: values of numpy.percentile(x, p) (method="linear", the
// default).
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
		if got := PercentileSorted(c.x, c.p); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("percentile(%v, %v) = %v; want %v", c.x, c.p, got, c.want)
		}
	}
}

// TestLerp: numpy's lerp, made total at infinities and overflow.
func TestLerp(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct{ a, b, t, want float64 }{
		{1, 3, 0, 1}, {1, 3, 0.25, 1.5}, {1, 3, 0.75, 2.5}, {1, 3, 1, 3},
		{1, inf, 0.5, inf}, {-inf, 1, 0.5, -inf}, {inf, inf, 0.5, inf},
		{-math.MaxFloat64, math.MaxFloat64, 0.5, 0},
	} {
		if got := Lerp(c.a, c.b, c.t); got != c.want {
			t.Errorf("Lerp(%v, %v, %v) = %v, want %v", c.a, c.b, c.t, got, c.want)
		}
	}
	if got := Lerp(-inf, inf, 0.5); !math.IsNaN(got) {
		t.Errorf("Lerp(-Inf, +Inf, 0.5) = %v, want NaN", got)
	}
}

// TestMeanAndSampleStd: 2, 4, 4, 4, 5, 5, 7, 9 have mean 5 and Σ(x−5)² = 32, so the sample
// standard deviation is √(32/7).
func TestMeanAndSampleStd(t *testing.T) {
	x := []float64{2, 4, 4, 4, 5, 5, 7, 9}
	m := Mean(x)
	if m != 5 {
		t.Errorf("Mean = %v, want 5", m)
	}
	if s := SampleStd(x, m); s != math.Sqrt(32.0/7) {
		t.Errorf("SampleStd = %v, want √(32/7)", s)
	}
	if s := SampleStd([]float64{3}, 3); s != 0 {
		t.Errorf("SampleStd of one value = %v, want 0", s)
	}
	if !math.IsNaN(Mean(nil)) {
		t.Error("Mean of no value is not NaN")
	}
}
