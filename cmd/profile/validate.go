package main

import "github.com/llmbench/llmbench/replay"

// validateGenerator runs the generator validation (--validate-generator, cli.Validate)
// before the point's replay: the same plan, load, workers and CPUs against an in-process
// mock server with known timing. Its file goes into the run directory, where the analysis
// that follows finds it for the benchmark claim; a failed validation does not stop the run.
func (r *runner) validateGenerator(o *replay.Options) error {
	return r.c.replay.Validation.RunIfEnabled(o, r.stderr)
}
