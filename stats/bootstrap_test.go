package stats

import (
	"math"
	"testing"
)

func TestBootstrapCI(t *testing.T) {
	a := make([]float64, 200)
	b := make([]float64, 200)
	for i := range a {
		a[i] = float64(i % 20)
		b[i] = float64(i%20) + 10
	}
	lo, hi := BootstrapCI(a, b, 50)
	if lo > 10 || hi < 10 || hi-lo > 6 {
		t.Errorf("CI [%v, %v] of a shift by 10", lo, hi)
	}
	lo2, hi2 := BootstrapCI(a, b, 50)
	if lo2 != lo || hi2 != hi {
		t.Errorf("not reproducible: [%v, %v] then [%v, %v]", lo, hi, lo2, hi2)
	}
	if lo, hi := BootstrapCI(nil, b, 50); !math.IsNaN(lo) || !math.IsNaN(hi) {
		t.Errorf("empty sample: [%v, %v]", lo, hi)
	}
}
