package main

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/llmbench/llmbench/profile"
	"github.com/llmbench/llmbench/replay"
)

// checkStages checks the flags of every stage before the artifact directory is made and
// anything is compiled or sent: the plan at every sweep point (or at both ends of the
// search range), replay's options, the generator validation's, and analyze's (gates,
// goodput, bounds), including the metrics a run that does not stream cannot give. A bad
// flag then costs nothing: one line, exit 2, no directory, no request.
func (c *command) checkStages(so *profile.SweepOptions, planMode, streaming bool, argv []string, getenv func(string) string) error {
	if !planMode {
		if err := c.checkPoints(so); err != nil {
			return err
		}
	}
	o, err := c.replay.Options(argv, io.Discard, getenv)
	if err != nil {
		return err
	}
	if err := replay.CheckOptions(*o); err != nil {
		return err
	}
	if c.replay.Validation.Enabled() {
		if err := c.replay.Validation.Check(); err != nil {
			return err
		}
	}
	if err := c.analyze.Check(); err != nil {
		return err
	}
	if streaming {
		return nil
	}
	if err := c.analyze.CheckStreaming(false); err != nil {
		return err
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

// checkPoints checks the plan flags at every point the runs will compile: each sweep point,
// or a search's smallest and largest probe. The flags are left at the first point (a
// search's varied flag at its value as given).
func (c *command) checkPoints(so *profile.SweepOptions) error {
	points := so.Points
	if so.Search != "" {
		lo, hi := so.Bounds.Min, so.Bounds.Max
		if so.Bounds.Integer {
			lo, hi = math.Ceil(lo), math.Floor(hi)
		}
		name := so.Dimension
		points = []profile.Point{{{Flag: name, Name: name, Value: lo}}, {{Flag: name, Name: name, Value: hi}}}
		f := c.plan.FS.Lookup(name)
		orig, changed := f.Value.String(), f.Changed
		defer func() { _ = f.Value.Set(orig); f.Changed = changed }()
	}
	for _, p := range points {
		if err := c.sweep.Apply(p); err != nil {
			return err
		}
		if err := c.plan.Validate(); err != nil {
			if len(points) > 1 {
				return fmt.Errorf("%s: %w", pointWords(so, p), err)
			}
			return err
		}
	}
	return c.sweep.Apply(so.Points[0])
}

// pointWords names a point for an error line: "sweep point concurrency=64" or "search
// probe concurrency=1024 (--search-max)".
func pointWords(so *profile.SweepOptions, p profile.Point) string {
	if so.Search != "" {
		bound := "--search-min"
		if p[0].Value == math.Floor(so.Bounds.Max) || p[0].Value == so.Bounds.Max {
			bound = "--search-max"
		}
		return fmt.Sprintf("search probe %s=%s (%s)", p[0].Flag, strconv.FormatFloat(p[0].Value, 'f', -1, 64), bound)
	}
	return "sweep point " + profile.Describe(p)
}
