package analyze_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/analyze/benchclaim"
	"github.com/llmbench/llmbench/tokenizer"
)

// TestValidateShapeRun: a rate run's own plan as reference matches it (ISL, OSL, arrivals),
// the plan fidelity is compared, and a tokenizer that does not load leaves prefix reuse
// unknown rather than failing; a closed loop skips the fidelity check. The runs are
// analyze's synthetic ones (export_test.go); benchclaim.ValidateShape checks them.
func TestValidateShapeRun(t *testing.T) {
	noTok := func(spec string) (*tokenizer.Tokenizer, error) { return nil, errors.New("no such tokenizer") }
	for _, c := range analyze.ShapeCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			run, s := c.RunDir, c.Summary
			r, err := benchclaim.ValidateShape(s, benchclaim.ShapeOptions{LoadTokenizer: noTok})
			if err != nil {
				t.Fatal(err)
			}
			if r.Requests != 40 || r.Reference != "" || (r.Fidelity.Skipped == "") != c.Fidelity || r.Fidelity.Failed() {
				t.Fatalf("no reference: %+v", r)
			}
			if p := benchclaim.ShapeClaim(r); p.Status != analyze.StatusNotValidated {
				t.Errorf("no reference: %s", p.Status)
			}
			r, err = benchclaim.ValidateShape(s, benchclaim.ShapeOptions{Reference: s.PlanPath, LoadTokenizer: noTok})
			if err != nil {
				t.Fatal(err)
			}
			if r.RefKind != "plan" || r.RefRequests != 40 || r.Compares[0].KS.D != 0 || r.Compares[1].KS.D != 0 || r.Reuse != -1 ||
				!strings.Contains(r.ReuseNote, "no such tokenizer") {
				t.Fatalf("own plan: %+v", r)
			}
			want := analyze.StatusValidated
			if p := benchclaim.ShapeClaim(r); p.Status != want {
				t.Errorf("own plan: %s: %s", p.Status, p.Evidence)
			}
			if _, err := benchclaim.ValidateShape(s, benchclaim.ShapeOptions{Reference: filepath.Join(run, "nope.jsonl"), LoadTokenizer: noTok}); err == nil ||
				!strings.Contains(err.Error(), "--validate-shape") || !strings.Contains(err.Error(), "nope.jsonl") {
				t.Errorf("missing reference: %v", err)
			}
		})
	}
}
