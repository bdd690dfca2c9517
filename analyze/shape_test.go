package analyze

import (
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/stats"
	"github.com/llmbench/llmbench/tokenizer"
)

// TestShapeCompareFailed: Failed() agrees with the asymptotic p-values (stats.KS2 above its
// exact limit): the same distribution passes and a shifted one fails.
func TestShapeCompareFailed(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	draw := func(n int, shift float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = rng.NormFloat64() + shift
		}
		return out
	}
	same := stats.KS2(draw(2000, 0), draw(1500, 0))
	if same.Exact || same.P < ShapeAlpha {
		t.Errorf("same distribution: %+v", same)
	}
	far := stats.KS2(draw(2000, 0), draw(1500, 1))
	if far.Exact || far.P > 1e-10 {
		t.Errorf("shifted distribution: %+v", far)
	}
	if !(ShapeCompare{KS: far}).Failed() || (ShapeCompare{KS: same}).Failed() {
		t.Error("Failed() disagrees with the p-values")
	}
}

// TestReuseCounter: reuse is the share of tokens in blocks seen before, whether the blocks
// come as hash_ids or as tokens (chained: a block is the same only after the same prefix).
func TestReuseCounter(t *testing.T) {
	c := newReuseCounter(4)
	c.addBlocks([]int64{1, 2}, 6) // 4 + 2 tokens, new
	c.addBlocks([]int64{1, 3}, 8) // block 1 (4 tokens) reused
	if got := c.ratio(); math.Abs(got-4.0/14) > 1e-12 {
		t.Errorf("hash_ids: %v, want 4/14", got)
	}
	k := newReuseCounter(2)
	k.addTokens([]int{1, 2, 3, 4})
	k.addTokens([]int{1, 2, 9, 9}) // first block reused
	k.addTokens([]int{9, 9, 1, 2}) // [1 2] after another prefix: not the same block
	if got := k.ratio(); math.Abs(got-2.0/12) > 1e-12 {
		t.Errorf("tokens: %v, want 2/12", got)
	}
	if newReuseCounter(2).ratio() != -1 {
		t.Error("empty counter should be unknown")
	}
}

// TestGapsOf: gaps between sorted instants at 1 ms resolution.
func TestGapsOf(t *testing.T) {
	got := gapsOf([]int64{3e6, 0, 1.2e6})
	if len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("gapsOf = %v, want [1 2]", got)
	}
}

// TestShapeDescribe: the p-value below float64's resolution is shown as a bound.
func TestShapeDescribe(t *testing.T) {
	r := &ShapeReport{Compares: []ShapeCompare{{Name: "isl", KS: stats.KSResult{D: 1, P: 0}}}, Fidelity: ShapeCompare{Name: "plan_inter_arrival", Skipped: "closed loop"}, Reuse: -1, RefReuse: -1}
	if d := r.describe(); !strings.Contains(d, "isl KS D 1.000 p < 1e-15") || !strings.Contains(d, "plan_inter_arrival not compared (closed loop)") {
		t.Errorf("describe: %s", d)
	}
}

// TestValidateShapeRun: a rate run's own plan as reference matches it (ISL, OSL, arrivals),
// the plan fidelity is compared, and a tokenizer that does not load leaves prefix reuse
// unknown rather than failing; a closed loop skips the fidelity check.
func TestValidateShapeRun(t *testing.T) {
	noTok := func(spec string) (*tokenizer.Tokenizer, error) { return nil, errors.New("no such tokenizer") }
	for _, c := range []struct {
		name     string
		sc       scenario
		fidelity bool
	}{
		{"rate", scenario{n: 40, ttft: 20 * ms, itl: 5 * ms, tokens: 8, rate: 50, streaming: true}, true},
		{"closed loop", scenario{n: 40, ttft: 20 * ms, itl: 5 * ms, tokens: 8, concurrency: 4, streaming: true}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			run := c.sc.build(t, t.TempDir())
			s, err := Analyze(Options{RunDirs: []string{run}, Tokenizer: wordCounter{}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			r, err := ValidateShape(s, ShapeOptions{LoadTokenizer: noTok})
			if err != nil {
				t.Fatal(err)
			}
			if r.Requests != 40 || r.Reference != "" || (r.Fidelity.Skipped == "") != c.fidelity || r.Fidelity.Failed() {
				t.Fatalf("no reference: %+v", r)
			}
			if p := EvaluateClaim(s, ClaimOptions{Shape: r}).Shape; p.Status != StatusNotValidated {
				t.Errorf("no reference: %s", p.Status)
			}
			r, err = ValidateShape(s, ShapeOptions{Reference: s.PlanPath, LoadTokenizer: noTok})
			if err != nil {
				t.Fatal(err)
			}
			if r.RefKind != "plan" || r.RefRequests != 40 || r.Compares[0].KS.D != 0 || r.Compares[1].KS.D != 0 || r.Reuse != -1 ||
				!strings.Contains(r.ReuseNote, "no such tokenizer") {
				t.Fatalf("own plan: %+v", r)
			}
			want := StatusValidated
			if p := EvaluateClaim(s, ClaimOptions{Shape: r}).Shape; p.Status != want {
				t.Errorf("own plan: %s: %s", p.Status, p.Evidence)
			}
			if _, err := ValidateShape(s, ShapeOptions{Reference: filepath.Join(run, "nope.jsonl"), LoadTokenizer: noTok}); err == nil ||
				!strings.Contains(err.Error(), "--validate-shape") || !strings.Contains(err.Error(), "nope.jsonl") {
				t.Errorf("missing reference: %v", err)
			}
		})
	}
}

// TestRunShapeMultiTurnFidelity: in a rate plan of multi-turn sessions only the first turns
// have planned instants; the fidelity compares those turns' achieved gaps with their planned
// ones instead of calling the plan a closed loop.
func TestRunShapeMultiTurnFidelity(t *testing.T) {
	const msNs = int64(1e6)
	var samples []shapeSample
	for i, at := range []int64{0, 100, 300} {
		samples = append(samples,
			shapeSample{index: uint32(2 * i), sendUnixNs: 1e18 + (at+5)*msNs, intendedNs: at * msNs},
			shapeSample{index: uint32(2*i + 1), sendUnixNs: 1e18 + (at+40)*msNs, intendedNs: mmapds.NoSendOffset})
	}
	d, plan, err := runShape(samples, nil, nil, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if d.plannedCount != 3 || !slices.Equal(plan, []float64{100, 200}) || !slices.Equal(d.plannedSentGaps, []float64{100, 200}) {
		t.Fatalf("planned %d, plan gaps %v, achieved %v; want 3, [100 200], [100 200]", d.plannedCount, plan, d.plannedSentGaps)
	}
	if len(d.gaps) != 5 {
		t.Errorf("all sends' gaps: %v", d.gaps)
	}
}
