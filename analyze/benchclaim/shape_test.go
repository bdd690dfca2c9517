package benchclaim

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/stats"
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

// TestRunShapeMultiTurnFidelity: in a rate plan of multi-turn sessions only the first turns
// have planned instants; the fidelity compares those turns' achieved gaps with their planned
// ones instead of calling the plan a closed loop.
func TestRunShapeMultiTurnFidelity(t *testing.T) {
	const msNs = int64(1e6)
	var samples []analyze.ShapeSample
	for i, at := range []int64{0, 100, 300} {
		samples = append(samples,
			analyze.ShapeSample{Index: uint32(2 * i), SendUnixNs: 1e18 + (at+5)*msNs, IntendedNs: at * msNs},
			analyze.ShapeSample{Index: uint32(2*i + 1), SendUnixNs: 1e18 + (at+40)*msNs, IntendedNs: mmapds.NoSendOffset})
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
