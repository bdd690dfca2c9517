package main

import (
	"io"

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
	if err := c.analyze.CheckStreaming(streaming); err != nil {
		return err
	}
	return so.CheckStreaming(streaming)
}

// checkPoints checks the plan flags at every point the runs will compile
// (profile.SweepOptions.CheckPoints). The flags are left at the first point (a search's
// varied flag at its value as given).
func (c *command) checkPoints(so *profile.SweepOptions) error {
	if so.Search != "" {
		f := c.plan.FS.Lookup(so.Dimension)
		orig, changed := f.Value.String(), f.Changed
		defer func() { _ = f.Value.Set(orig); f.Changed = changed }()
	}
	if err := so.CheckPoints(c.sweep.Apply, c.plan.Validate); err != nil {
		return err
	}
	return c.sweep.Apply(so.Points[0])
}
