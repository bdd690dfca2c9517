package profile

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/internal/errline"
	"github.com/llmbench/llmbench/plan"
)

// PlanFile is the plan's name inside a point's directory.
const PlanFile = "plan.llmplan"

// Run measures what o asks for in the new artifact directory dir (NewDir): a search, a
// sweep, or one point (repeated or not). It returns the exit status: 0 every run complete
// and valid and every gate held, 1 a run, a point, a probe, a gate or the search failed, 2
// bad input, 130 interrupted. An artifact directory in which nothing was sent (bad input
// only the compiler could see, the preflight's refusal, a server down, Ctrl-C before the
// first request) is removed whole, plan included: the next run takes its documented name.
func Run(dir string, o Options) int {
	r := &runner{o: o.Sweep, opts: o, stdout: o.Stdout, stderr: o.Stderr}
	var code int
	switch {
	case r.o.Search != "":
		code = r.search(dir)
	case len(r.o.Points) > 1:
		code = r.sweep(dir)
	default:
		code = r.point(dir, r.o.Points[0]).code
	}
	if code != 0 && !r.sent {
		if err := os.RemoveAll(dir); err == nil {
			fmt.Fprintf(r.stderr, "profile: nothing was sent: %s removed\n", dir)
		}
	}
	return code
}

// ErrorBound is the error-rate bound every probe of a search is judged by: the search's
// --error-rate-sla sla when --max-error-rate was not given (maxGiven false), the stricter
// of the two when both were, and --max-error-rate maxErrorRate when sla is negative (not
// given). The command makes it analyze's bound too, so each probe's own error-rate gate
// line says the bound the probe is held to.
func ErrorBound(sla, maxErrorRate float64, maxGiven bool) float64 {
	if sla < 0 {
		return maxErrorRate
	}
	if maxGiven {
		return math.Min(sla, maxErrorRate)
	}
	return sla
}

// say prints err as profile's one line on stderr.
func (r *runner) say(err error) {
	fmt.Fprintln(r.stderr, errline.Format("profile", err))
}

// runOnce replays the plan at planPath into runDir and analyses it there. It returns the
// summary (nil when the analysis failed) and the exit status: replay's when it failed,
// else analyze's.
func (r *runner) runOnce(planPath, runDir string) (*analyze.Summary, int, int) {
	code := r.opts.Stages.Replay(planPath, runDir)
	if code == 2 {
		return nil, code, code
	}
	r.sent = true
	s, acode := r.opts.Stages.Analyze(planPath, runDir)
	fmt.Fprintf(r.stderr, "profile: artifacts in %s (replay again: replay --plan %s --url URL --output-dir DIR)\n", runDir, planPath)
	if code != 0 {
		return s, code, code
	}
	return s, code, acode
}

// placePlan puts the point's plan into dir: the shared --plan copied, or one compiled from
// the flags (set to the point's values), and beside it AIPerf's inputs.json, the payloads
// per session written from the plan. It returns the plan's path and an exit status.
func (r *runner) placePlan(dir string) (string, int) {
	planPath := filepath.Join(dir, PlanFile)
	if r.opts.SharedPlan != "" {
		if err := copyFile(r.opts.SharedPlan, planPath); err != nil {
			r.say(err)
			return "", 2
		}
	} else if code := r.opts.Stages.Compile(planPath); code != 0 {
		return planPath, code
	}
	if err := plan.WriteInputsJSONFile(planPath, filepath.Join(dir, plan.InputsJSONFile)); err != nil {
		r.say(err)
		return "", 1
	}
	return planPath, 0
}

// copyFile copies the shared plan into the artifact directory.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("--plan: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("artifact directory: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copying --plan %s: %w", src, err)
	}
	return out.Close()
}
