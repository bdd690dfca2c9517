package cli

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/analyze/benchclaim"
	"github.com/llmbench/llmbench/analyze/judge"
)

// claimFlags are analyze's flags of the benchmark claim (docs/metrics.md "The benchmark
// claim"): the evidence for its three parts and whether an untrustworthy claim fails.
type claimFlags struct {
	requireTrustworthy bool
	acceptScheduleMiss bool
	gatesFile          string
	validateShape      string
	generatorFile      string
	agreed             *judge.GatesFile
}

// AcceptScheduleMissEnv names the environment variable that, set to 1, makes
// --accept-schedule-miss the default: for test suites and CI machines whose load is not what
// they judge (docs/exit-codes.md). The last line still says that the schedule was not kept.
const AcceptScheduleMissEnv = "LLMBENCH_ACCEPT_SCHEDULE_MISS"

// addClaimFlags defines the claim flags on fs.
func addClaimFlags(fs *pflag.FlagSet) *claimFlags {
	c := &claimFlags{}
	fs.BoolVar(&c.requireTrustworthy, "require-trustworthy", false, "exit 1 when the benchmark claim is not trustworthy (generator, shape and thresholds each validated)")
	fs.BoolVar(&c.acceptScheduleMiss, "accept-schedule-miss", os.Getenv(AcceptScheduleMissEnv) == "1", "exit 0 (gates permitting) even when the client did not keep its schedule; by default such a run exits 1, as its numbers describe the client, not the server ($"+AcceptScheduleMissEnv+"=1 sets this default)")
	fs.StringVar(&c.gatesFile, "gates", "", "YAML file of agreed gates (version: 1; gates: each with gate, owner and reason): adds them and marks them agreed")
	fs.StringVar(&c.validateShape, "validate-shape", "", "compare the run's ISL, OSL, inter-arrival and prefix reuse with REFERENCE: a dataset file in any --custom-dataset-type (TYPE:PATH to force one), a plan file or another run directory")
	fs.StringVar(&c.generatorFile, "generator-validation", "", "generator validation file to reuse (default: RUN_DIR/"+benchclaim.GeneratorValidationName+" when there is one); it counts only for the same plan, machine and workers")
	return c
}

// gates reads --gates and returns the gates with the file's appended.
func (c *claimFlags) gates(reg *analyze.Registry, gates []judge.Gate) ([]judge.Gate, error) {
	if c.gatesFile == "" {
		return gates, nil
	}
	b, err := os.ReadFile(c.gatesFile)
	if err != nil {
		return nil, fmt.Errorf("--gates: %w", err)
	}
	f, err := judge.ParseGatesFileOf(reg, b, c.gatesFile)
	if err != nil {
		return nil, err
	}
	c.agreed = f
	for _, g := range f.Gates {
		if _, dup := findGate(gates, g.Parsed); !dup {
			gates = append(gates, g.Parsed)
		}
	}
	return gates, nil
}

func findGate(gates []judge.Gate, g judge.Gate) (int, bool) {
	for i, x := range gates {
		if x.Metric.Tag == g.Metric.Tag && x.Stat == g.Stat && x.Op == g.Op && x.Value == g.Value {
			return i, true
		}
	}
	return -1, false
}

// check checks the claim's files before a run: the --validate-shape reference exists and a
// --generator-validation file reads.
func (c *claimFlags) check() error {
	if c.validateShape != "" {
		if err := benchclaim.CheckReference(c.validateShape); err != nil {
			return err
		}
	}
	if c.generatorFile != "" {
		if _, err := benchclaim.ReadGeneratorValidation(c.generatorFile); err != nil {
			return fmt.Errorf("--generator-validation: %w", err)
		}
	}
	return nil
}
