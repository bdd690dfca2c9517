package export

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/analyze/benchclaim"
	"github.com/llmbench/llmbench/analyze/judge"
	"github.com/llmbench/llmbench/analyze/output"
	"github.com/llmbench/llmbench/tokenizer"
)

// Claim is the evidence for the benchmark claim's three parts (docs/metrics.md "The
// benchmark claim") and whether an untrustworthy claim fails the run.
type Claim struct {
	// RequireTrustworthy makes an untrustworthy claim exit ExitGate.
	RequireTrustworthy bool
	// AcceptScheduleMiss keeps the exit status of a run whose client did not keep its
	// schedule (--accept-schedule-miss): by default such a run exits ExitGate, since its
	// numbers describe the client, not the server.
	AcceptScheduleMiss bool
	// GatesFile is the --gates file (an input of the analysis), Agreed what it holds.
	GatesFile string
	Agreed    *judge.GatesFile
	// ValidateShape is the --validate-shape reference ("" none).
	ValidateShape string
	// GeneratorFile is the generator validation file to reuse; "" takes RUN_DIR's.
	GeneratorFile string
}

// judge evaluates the claim of s (analysed from dirs) and sets s.Claim. tokSpec is
// --tokenizer, load how a tokenizer is loaded. Errors are bad input: an unreadable
// validation file or reference.
func (c *Claim) judge(s *analyze.Summary, gates []judge.Gate, dirs []string, tokSpec string, load func(string) (*tokenizer.Tokenizer, error)) error {
	o := benchclaim.Options{Gates: gates, Agreed: c.Agreed}
	if id, err := benchclaim.RunIdentityOf(dirs[0]); err == nil {
		o.Run = id
	} else {
		o.Run.PlanHash = s.PlanHash
	}
	path := c.GeneratorFile
	if path == "" {
		if p := filepath.Join(dirs[0], benchclaim.GeneratorValidationName); fileExists(p) {
			path = p
		}
	}
	if path != "" {
		g, err := benchclaim.ReadGeneratorValidation(path)
		if err != nil {
			return fmt.Errorf("--generator-validation: %w", err)
		}
		o.Generator, o.GeneratorFile = g, path
	}
	// Loaded only when prefix reuse is measured (a reference was given): --tokenizer, else
	// the plan's. A tokenizer that does not load leaves the reuse unknown, and says why.
	loadSpec := func(spec string) (*tokenizer.Tokenizer, error) {
		if tokSpec != "" {
			spec = tokSpec
		}
		return load(spec)
	}
	so := benchclaim.ShapeOptions{Reference: c.ValidateShape, LoadTokenizer: loadSpec}
	if s.Counts.Valid > 0 {
		r, err := benchclaim.ValidateShape(s, so)
		if err != nil {
			return err
		}
		o.Shape = r
	} else if c.ValidateShape != "" {
		return fmt.Errorf("--validate-shape: the run has no valid profile requests to take the shape of")
	}
	benchclaim.Evaluate(s, o)
	return nil
}

// exit is the run's exit status once the claim is judged, from code (the gates'): ExitGate
// when a part that was checked failed (a generator validation that failed, a shape that
// differs from the --validate-shape reference), when RequireTrustworthy is set and the claim
// is not trustworthy, and when the client did not keep its schedule unless
// AcceptScheduleMiss. Each is said on stderr; the schedule's line comes last, since it says
// what the numbers describe.
func (c *Claim) exit(s *analyze.Summary, code int, stderr io.Writer) int {
	if s.Claim != nil {
		if p := s.Claim.Generator; p.Status == analyze.StatusFailed && s.Verdict.Kept {
			// (A schedule not kept fails the generator part too: its own line below.)
			fmt.Fprintf(stderr, "analyze: GENERATOR FAILED: %s\n", p.Evidence)
			code = ExitGate
		}
		if p := s.Claim.Shape; p.Status == analyze.StatusFailed && c.ValidateShape != "" {
			fmt.Fprintf(stderr, "analyze: SHAPE FAILED: %s\n", p.Evidence)
			code = ExitGate
		}
		if c.RequireTrustworthy && !s.Claim.Trustworthy {
			fmt.Fprintln(stderr, "analyze: --require-trustworthy: the benchmark claim is not trustworthy:")
			for _, l := range output.ClaimLines(s.Claim)[1:] {
				fmt.Fprintln(stderr, l)
			}
			code = ExitGate
		}
	}
	if v := s.Verdict; v.Known && !v.Kept {
		if c.AcceptScheduleMiss {
			fmt.Fprintln(stderr, "analyze: schedule NOT kept, accepted (--accept-schedule-miss): these numbers describe the client, not the server")
		} else {
			fmt.Fprintf(stderr, "analyze: SCHEDULE NOT KEPT: %s; these numbers describe the client, not the server (use more workers or a lower rate, or --accept-schedule-miss to accept them)\n",
				strings.Join(v.Reasons, "; "))
			code = ExitGate
		}
	}
	return code
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil || !errors.Is(err, fs.ErrNotExist)
}
