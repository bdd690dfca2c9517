package profile

import (
	"fmt"
	"math"
	"strconv"
)

// CheckPoints checks the plan at every point the runs will compile, before any is sent:
// each sweep point, or a search's smallest and largest probe (its bounds rounded inwards
// for concurrency). apply sets the plan's flags to a point (its error returned as it is),
// validate checks them; a validate error of one of several points names the point.
func (so *SweepOptions) CheckPoints(apply func(Point) error, validate func() error) error {
	points := so.Points
	if so.Search != "" {
		lo, hi := so.Bounds.Min, so.Bounds.Max
		if so.Bounds.Integer {
			lo, hi = math.Ceil(lo), math.Floor(hi)
		}
		name := so.Dimension
		points = []Point{{{Flag: name, Name: name, Value: lo}}, {{Flag: name, Name: name, Value: hi}}}
	}
	for _, p := range points {
		if err := apply(p); err != nil {
			return err
		}
		if err := validate(); err != nil {
			if len(points) > 1 {
				return fmt.Errorf("%s: %w", so.pointWords(p), err)
			}
			return err
		}
	}
	return nil
}

// pointWords names a point for an error line: "sweep point concurrency=64" or "search
// probe concurrency=1024 (--search-max)".
func (so *SweepOptions) pointWords(p Point) string {
	if so.Search != "" {
		bound := "--search-min"
		if p[0].Value == math.Floor(so.Bounds.Max) || p[0].Value == so.Bounds.Max {
			bound = "--search-max"
		}
		return fmt.Sprintf("search probe %s=%s (%s)", p[0].Flag, strconv.FormatFloat(p[0].Value, 'f', -1, 64), bound)
	}
	return "sweep point " + Describe(p)
}

// CheckStreaming refuses, for a plan that does not stream (streaming false), the SLAs and
// the convergence metric that only streamed responses have values for, naming the flag.
func (so *SweepOptions) CheckStreaming(streaming bool) error {
	if streaming {
		return nil
	}
	for _, s := range so.SLAs {
		if s.Gate.Metric.NeedsStream() {
			return fmt.Errorf("SLA %s: the plan does not stream, so no run has %s values (plan with --streaming)", s.SLA, s.Gate.Metric.Tag)
		}
	}
	if cv := so.Convergence; cv != nil && cv.Gate.Metric.NeedsStream() {
		return fmt.Errorf("--convergence-metric %s: the plan does not stream, so no run has its values (plan with --streaming)", cv.Gate.Metric.Tag)
	}
	return nil
}
