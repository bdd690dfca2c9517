package main

import (
	"errors"
	"fmt"

	"github.com/llmbench/llmbench/adaptive"
	"github.com/llmbench/llmbench/cmd/internal/cli"
	"github.com/llmbench/llmbench/profile"
)

// adaptivePlan readies in-run adaptive scale (--adaptive-scale): the SLAs resolve against
// analyze's metrics (user metrics too), and a plan compiled here carries the control's
// ceiling, its maximum: --concurrency, --prefill-concurrency or --request-rate is set to it
// (a smaller one given is refused: the controller could not reach its maximum). One run finds
// the boundary, so a sweep or a search is refused, and the run is sized by time.
func (c *command) adaptivePlan(so *profile.SweepOptions, planMode bool) error {
	ad := c.replay.Adaptive
	ad.Metrics = c.analyze.MetricRegistry
	s, err := ad.Settings()
	if err != nil || !s.Enabled {
		return err
	}
	if so.Search != "" || len(so.Points) > 1 || so.Runs > 1 {
		return errors.New("--adaptive-scale finds the boundary in one run: drop the sweep list, --search or --num-profile-runs (docs/profile.md: adaptive scale, --search or a sweep)")
	}
	if planMode {
		return nil // the shared plan's ceiling is checked when its run starts
	}
	o := &c.plan.O
	if o.BenchmarkDuration <= 0 {
		return errors.New("--adaptive-scale: give --benchmark-duration: the search, its windows and the sustain run on time")
	}
	set := func(flag string, given float64, ceiling *float64) error {
		if cli.Changed(c.fs, flag) && given < s.Max {
			return fmt.Errorf("--%s %v is below --adaptive-scale-control's maximum %v: the plan is compiled at the maximum, the controller releases less", flag, given, s.Max)
		}
		*ceiling = s.Max
		return nil
	}
	switch s.Variable {
	case adaptive.Concurrency:
		v := float64(o.Concurrency)
		if err := set("concurrency", v, &v); err != nil {
			return err
		}
		o.Concurrency = int(v)
	case adaptive.PrefillConcurrency:
		if o.Concurrency <= 0 {
			return errors.New("--adaptive-scale-control prefill_concurrency: give --concurrency too (prefill concurrency caps part of it)")
		}
		v := float64(o.PrefillConcurrency)
		if err := set("prefill-concurrency", v, &v); err != nil {
			return err
		}
		o.PrefillConcurrency = int(v)
	case adaptive.RequestRate:
		if err := set("request-rate", o.RequestRate, &o.RequestRate); err != nil {
			return err
		}
	}
	return nil
}
