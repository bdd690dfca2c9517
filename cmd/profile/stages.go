package main

import (
	"fmt"
	"io"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/cmd/internal/cli"
	"github.com/llmbench/llmbench/profile"
)

// stages are profile's plan, replay and analyze flag sets as the stages of profile.Run:
// each sets its set's flags to what the workflow asks (the point, the plan file, the run
// directory) and runs it as the command of that name would.
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

// Replay replays planPath into runDir with the replay flags (cli.RunReplay), after the
// generator validation when --validate-generator asks for it (cli.Validate).
func (s *stages) Replay(planPath, runDir string) int {
	rf := s.c.replay
	bad := func(err error) int {
		fmt.Fprintln(s.stderr, cli.OneLine("profile", err))
		return 2
	}
	if err := setAll(rf.FS, planPath, runDir); err != nil {
		return bad(err)
	}
	o, err := rf.Options(s.argv, s.stderr, s.getenv)
	if err != nil {
		return bad(err)
	}
	// Its file goes into the run directory, where the analysis finds it for the claim; a
	// failed validation does not stop the run.
	if err := rf.Validation.RunIfEnabled(o, s.stderr); err != nil {
		return bad(err)
	}
	code, everyFailed := cli.RunReplayReport(o, s.stderr)
	if everyFailed {
		// A whole run in which every request failed: the analysis judges it (its error-rate
		// line names the failures, and the run does not count), as a run with some failures.
		return 0
	}
	return code
}

// Analyze analyses runDir with the analyze flags (cli.Analyze.Run).
func (s *stages) Analyze(planPath, runDir string) (*analyze.Summary, int) {
	a := s.c.analyze
	if err := setAll(a.FS, planPath, runDir); err != nil {
		fmt.Fprintln(s.stderr, cli.OneLine("profile", err))
		return nil, 2
	}
	code := a.Run([]string{runDir}, s.stdout, s.stderr)
	return a.Last(), code
}

// setAll sets a set's --plan and --output-dir.
func setAll(fs interface {
	Set(name, value string) error
}, planPath, runDir string) error {
	for _, kv := range [][2]string{{"plan", planPath}, {"output-dir", runDir}} {
		if err := fs.Set(kv[0], kv[1]); err != nil {
			return err
		}
	}
	return nil
}
