package main

import (
	"github.com/llmbench/llmbench/cmd/internal/cli"
	"github.com/llmbench/llmbench/profile"
)

// adaptivePlan readies in-run adaptive scale (--adaptive-scale, profile.AdaptivePlan): the
// SLAs resolve against analyze's metrics (user metrics too), and a plan compiled here carries
// the control's ceiling.
func (c *command) adaptivePlan(so *profile.SweepOptions, planMode bool) error {
	ad := c.replay.Adaptive
	ad.Metrics = c.analyze.MetricRegistry
	s, err := ad.Settings()
	if err != nil {
		return err
	}
	return profile.AdaptivePlan(s, so, planMode, &c.plan.O, func(flag string) bool { return cli.Changed(c.fs, flag) })
}
