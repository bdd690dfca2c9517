package main

import (
	"fmt"
	"io"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/cmd/internal/cli"
	"github.com/llmbench/llmbench/export"
	"github.com/llmbench/llmbench/profile"
	"github.com/llmbench/llmbench/replay"
)

// stages are profile's plan, replay and analyze flag sets as the stages of profile.Run:
// each converts its set into its workflow's options, sets in them what profile.Run asks
// (the point, the plan file, the run directory) and runs it as the command of that name
// would.
type stages struct {
	c              *command
	argv           []string
	stdout, stderr io.Writer
	getenv         func(string) string
}

// Apply sets the plan flags to the point's values (cli.Sweep.Apply).
func (s *stages) Apply(p profile.Point) (profile.Stimulus, error) {
	if err := s.c.sweep.Apply(p); err != nil {
		return profile.Stimulus{}, err
	}
	return s.c.stimulus(), nil
}

// Compile compiles the plan flags to path (cli.Plan.Compile).
func (s *stages) Compile(path string) int {
	s.c.plan.O.Output = path
	return s.c.plan.Compile(s.getenv, s.stdout, s.stderr)
}

// Replay replays planPath into runDir with the replay flags' options (cli.RunReplay), after
// the generator validation when --validate-generator asks for it (cli.Validate).
func (s *stages) Replay(planPath, runDir string) int {
	rf := s.c.replay
	o, err := rf.Options(s.argv, s.stderr, s.getenv)
	if err != nil {
		return cli.BadInput(s.stderr, "profile")(err)
	}
	o.Plan, o.OutputDir = planPath, runDir
	if err := rf.Adaptive.Apply(o, s.stderr); err != nil { // --adaptive-scale: its controller observes the run
		return cli.BadInput(s.stderr, "profile")(err)
	}
	// Its file goes into the run directory, where the analysis finds it for the claim; a
	// failed validation does not stop the run.
	if err := rf.Validation.RunIfEnabled(o, s.stderr); err != nil {
		return cli.BadInput(s.stderr, "profile")(err)
	}
	code, everyFailed := replay.RunReport(o, s.stderr)
	if everyFailed {
		// A whole run in which every request failed: the analysis judges it (its error-rate
		// line names the failures, and the run does not count), as a run with some failures.
		code = 0
	}
	return rf.Adaptive.Exit(code, s.stderr, "profile") // an adaptive search that failed or did not end: 1
}

// Analyze analyses runDir with the analyze flags' options (export.Run), the plan planPath.
func (s *stages) Analyze(planPath, runDir string) (*analyze.Summary, int) {
	o, err := s.c.analyze.Options([]string{runDir}, s.stdout, s.stderr)
	if err != nil {
		fmt.Fprintln(s.stderr, cli.OneLine("analyze", err))
		return nil, 2
	}
	o.Analysis.PlanPath, o.OutputDir = planPath, runDir
	return export.Run(o)
}
