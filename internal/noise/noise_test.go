package noise

import (
	"runtime"
	"testing"
	"time"
)

// TestSampler: a sampler run for 20 ms records sleeps that ended no earlier than asked,
// sorted, and pins its thread to an allowed CPU without error.
func TestSampler(t *testing.T) {
	s := Start(0)
	time.Sleep(20 * time.Millisecond)
	l := s.Stop()
	if runtime.GOOS == "linux" && s.Err() != nil {
		t.Errorf("pin to CPU 0: %v", s.Err())
	}
	if len(l) == 0 || l[0] < 0 {
		t.Fatalf("%d samples, earliest %v", len(l), l)
	}
	for i := 1; i < len(l); i++ {
		if l[i] < l[i-1] {
			t.Fatalf("not sorted at %d: %v", i, l)
		}
	}
	if l.Max() != l[len(l)-1] || l.Quantile(0) != l[0] || l.Quantile(1) != l.Max() {
		t.Errorf("max %v quantiles %v %v of %v", l.Max(), l.Quantile(0), l.Quantile(1), l)
	}
}

// TestLatenessQuantile: nearest rank below, and zero for no samples.
func TestLatenessQuantile(t *testing.T) {
	l := Lateness{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0, 1}, {0.5, 6}, {0.9, 10}, {0.99, 10}, {1, 10}} {
		if got := l.Quantile(c.q); got != c.want {
			t.Errorf("Quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if (Lateness{}).Quantile(0.5) != 0 || (Lateness{}).Max() != 0 {
		t.Error("empty lateness is not zero")
	}
}

// TestPressureParses: on a kernel with pressure stall information both figures read as
// percentages; Calm holds for a machine without it.
func TestPressureParses(t *testing.T) {
	p := ReadPressure()
	if p.OK && (p.CPU < 0 || p.CPU > 100 || p.IO < 0 || p.IO > 100) {
		t.Fatalf("pressure %+v out of range", p)
	}
	if !(Pressure{}).Calm(0) || (Pressure{CPU: 50, OK: true}).Calm(10) || !(Pressure{CPU: 5, IO: 1, OK: true}).Calm(10) {
		t.Fatal("Calm")
	}
	if _, ok := someAvg10("/nonexistent/pressure"); ok {
		t.Fatal("a missing file reads")
	}
}
