package profile

import (
	"errors"
	"testing"

	"github.com/llmbench/llmbench/sweep"
)

// TestCheckPoints: every sweep point is applied and checked, a failing one of several named;
// a search checks its two bounds, rounded inwards for concurrency, naming the bound.
func TestCheckPoints(t *testing.T) {
	bad := errors.New("bad")
	var at float64
	apply := func(p Point) error { at = p[0].Value; return nil }
	failAt := func(v float64) func() error {
		return func() error {
			if at == v {
				return bad
			}
			return nil
		}
	}
	c := func(v float64) Point { return Point{{Flag: "concurrency", Name: "concurrency", Value: v}} }
	so := &SweepOptions{Points: []Point{c(1), c(4)}}
	if err := so.CheckPoints(apply, failAt(4)); err == nil || err.Error() != "sweep point concurrency=4: bad" {
		t.Errorf("sweep: %v", err)
	}
	so = &SweepOptions{Points: []Point{c(8)}}
	if err := so.CheckPoints(apply, failAt(8)); err != bad {
		t.Errorf("one point: %v, want the error as it is", err)
	}
	so = &SweepOptions{Points: []Point{{}}, Search: SearchMaxConcurrency, Dimension: "concurrency",
		Bounds: sweep.SearchOptions{Min: 1.5, Max: 9.5, Integer: true}}
	if err := so.CheckPoints(apply, failAt(9)); err == nil || err.Error() != "search probe concurrency=9 (--search-max)"+": bad" {
		t.Errorf("search max: %v", err)
	}
	if err := so.CheckPoints(apply, failAt(2)); err == nil || err.Error() != "search probe concurrency=2 (--search-min): bad" {
		t.Errorf("search min: %v", err)
	}
	applyErr := errors.New("apply")
	if err := so.CheckPoints(func(Point) error { return applyErr }, failAt(-1)); err != applyErr {
		t.Errorf("apply error: %v", err)
	}
}
