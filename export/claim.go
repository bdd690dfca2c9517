package export

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/tokenizer"
)

// Claim is the evidence for the benchmark claim's three parts (docs/metrics.md "The
// benchmark claim") and whether an untrustworthy claim fails the run.
type Claim struct {
	// RequireTrustworthy makes an untrustworthy claim exit ExitGate.
	RequireTrustworthy bool
	// GatesFile is the --gates file (an input of the analysis), Agreed what it holds.
	GatesFile string
	Agreed    *analyze.GatesFile
	// ValidateShape is the --validate-shape reference ("" none).
	ValidateShape string
	// GeneratorFile is the generator validation file to reuse; "" takes RUN_DIR's.
	GeneratorFile string
}

// judge evaluates the claim of s (analysed from dirs) and sets s.Claim. tokSpec is
// --tokenizer, load how a tokenizer is loaded. Errors are bad input: an unreadable
// validation file or reference.
func (c *Claim) judge(s *analyze.Summary, gates []analyze.Gate, dirs []string, tokSpec string, load func(string) (*tokenizer.Tokenizer, error)) error {
	o := analyze.ClaimOptions{Gates: gates, Agreed: c.Agreed}
	if id, err := analyze.RunIdentityOf(dirs[0]); err == nil {
		o.Run = id
	} else {
		o.Run.PlanHash = s.PlanHash
	}
	path := c.GeneratorFile
	if path == "" {
		if p := filepath.Join(dirs[0], analyze.GeneratorValidationName); fileExists(p) {
			path = p
		}
	}
	if path != "" {
		g, err := analyze.ReadGeneratorValidation(path)
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
	so := analyze.ShapeOptions{Reference: c.ValidateShape, LoadTokenizer: loadSpec}
	if s.Counts.Valid > 0 {
		r, err := analyze.ValidateShape(s, so)
		if err != nil {
			return err
		}
		o.Shape = r
	} else if c.ValidateShape != "" {
		return fmt.Errorf("--validate-shape: the run has no valid profile requests to take the shape of")
	}
	analyze.EvaluateClaim(s, o)
	return nil
}

// exit turns code into ExitGate when RequireTrustworthy is set and the claim is not
// trustworthy, saying so on stderr.
func (c *Claim) exit(s *analyze.Summary, code int, stderr io.Writer) int {
	if !c.RequireTrustworthy || s.Claim == nil || s.Claim.Trustworthy {
		return code
	}
	fmt.Fprintln(stderr, "analyze: --require-trustworthy: the benchmark claim is not trustworthy:")
	for _, l := range analyze.ClaimLines(s.Claim)[1:] {
		fmt.Fprintln(stderr, l)
	}
	return ExitGate
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil || !errors.Is(err, fs.ErrNotExist)
}
