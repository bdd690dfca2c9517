package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/analyze/benchclaim"
	"github.com/llmbench/llmbench/replay"
	"github.com/llmbench/llmbench/tokenizer"
	"github.com/llmbench/llmbench/validate"
)

// Validate is the flag set of the generator validation (package validate): replay the plan
// against an in-process mock server with known timing, before the run, and keep the result
// in the run directory (generator_validation.json).
type Validate struct {
	// FS holds the flags; compose it into a larger set with AddFlagSet.
	FS       *pflag.FlagSet
	enabled  bool
	ttft     time.Duration
	itl      time.Duration
	requests int
	duration time.Duration
}

// NewValidate defines the validation flags; enable names the flag that turns it on
// (profile: validate-generator, replay: validate).
func NewValidate(enable string) *Validate {
	v := &Validate{FS: NewFlagSet("validate")}
	fs := v.FS
	fs.BoolVar(&v.enabled, enable, false, "first replay the plan (same load, bodies, workers and CPUs) against an in-process mock server with known TTFT/ITL, judge the client's errors against the documented tolerances and write generator_validation.json into the run directory")
	fs.DurationVar(&v.ttft, "validate-ttft", validate.DefaultTTFT, "the mock server's TTFT for the generator validation")
	fs.DurationVar(&v.itl, "validate-itl", 0, "the mock server's ITL for the generator validation (default: 1 s over the plan's mean requested output length, between 1 ms and 5 ms)")
	fs.IntVar(&v.requests, "validate-requests", 0, "replay at most this many profile requests in the generator validation (default: what fits in --validate-duration)")
	fs.DurationVar(&v.duration, "validate-duration", validate.DefaultDuration, "replay at most this long of the plan in the generator validation")
	return v
}

// Enabled reports whether the validation was asked for.
func (v *Validate) Enabled() bool { return v.enabled }

// Check checks the validation flags.
func (v *Validate) Check() error {
	switch {
	case v.ttft < 0:
		return fmt.Errorf("--validate-ttft %v: must not be negative", v.ttft)
	case v.itl < 0:
		return fmt.Errorf("--validate-itl %v: must not be negative", v.itl)
	case v.requests < 0:
		return fmt.Errorf("--validate-requests %d: must not be negative", v.requests)
	case v.duration <= 0:
		return fmt.Errorf("--validate-duration %v: must be positive", v.duration)
	}
	return nil
}

// RunIfEnabled runs the validation (validate.Before) for the replay o when it was asked
// for: its file goes into o.OutputDir once the run has claimed it, and the run then goes
// ahead whatever the outcome. Errors are bad input or a validation that could not run.
func (v *Validate) RunIfEnabled(o *replay.Options, stderr io.Writer) error {
	if !v.enabled {
		return nil
	}
	if err := v.Check(); err != nil {
		return err
	}
	return validate.Before(validate.Options{TTFT: v.ttft, ITL: v.itl, Requests: v.requests, Duration: v.duration,
		Tokenizers: tokenizer.EnvLoadOptions(os.Getenv)}, o, stderr)
}

// Exit is replay's exit status once the run is over, from code (the run's): a generator
// validation that was asked for and failed fails the run (1), said in one line, since the
// run's numbers may describe the client. profile leaves this to analyze, which judges the
// same file in the benchmark claim.
func (v *Validate) Exit(o *replay.Options, code int, stderr io.Writer) int {
	if !v.enabled || code != 0 {
		return code
	}
	path := filepath.Join(o.OutputDir, benchclaim.GeneratorValidationName)
	g, err := benchclaim.ReadGeneratorValidation(path)
	if err != nil {
		fmt.Fprintf(stderr, "replay: the generator validation left no readable %s: %v\n", path, err)
		return 1
	}
	if !g.Passed {
		fmt.Fprintf(stderr, "replay: the run is complete, but the generator validation failed (%s): its numbers may describe the client, not the server\n", path)
		return 1
	}
	return code
}
