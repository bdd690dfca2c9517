package report

import (
	"math"
	"strings"
	"testing"
)

// TestFinding: the difference of medians in words, from the figures behind its significant
// flag, with numbers no reader can misread (no exponent).
func TestFinding(t *testing.T) {
	ci := func(lo, hi float64) [2]Number { return [2]Number{Number(lo), Number(hi)} }
	thr := &Threshold{Metric: "time_to_first_token", Stat: "p50", Pct: 10}
	cases := []struct {
		name    string
		d       Diff
		crossed *Threshold
		want    string
	}{
		{"below the minimum effect", Diff{MedianDiff: -1.373e-4, MedianDiffPct: -1.373e-3, PValue: 6.1e-9, MedianCI: ci(-2e-4, -1e-4)}, nil,
			"no significant change: -0.001373 %, below the 1 % minimum effect"},
		{"p not below alpha", Diff{MedianDiff: 0.7, MedianDiffPct: 3.2, PValue: 0.21, MedianCI: ci(-0.1, 1.4)}, nil,
			"no significant change: +3.2 % (p = 0.21, not below 0.05)"},
		{"interval includes 0", Diff{MedianDiff: 0.7, MedianDiffPct: 3.2, PValue: 0.03, MedianCI: ci(-0.1, 1.4)}, nil,
			"no significant change: +3.2 % (p = 0.03, but the 95 % interval of the median difference [-0.1, 1.4] includes 0)"},
		{"worse", Diff{MedianDiff: 2.5, MedianDiffPct: 12.3, PValue: 0.002, Significant: true, Worse: true, MedianCI: ci(2, 3)}, nil,
			"significant regression: +12.3 % (p = 0.002)"},
		{"better", Diff{MedianDiff: -2.5, MedianDiffPct: -12.3, PValue: 6.1e-9, Significant: true, MedianCI: ci(-3, -2)}, nil,
			"significant improvement: -12.3 % (p < 0.0001)"},
		{"threshold crossed", Diff{MedianDiff: 5, MedianDiffPct: 25, PValue: 1e-12, Significant: true, Worse: true, Regression: true, MedianCI: ci(4, 6)}, thr,
			"significant regression: +25 % (p < 0.0001), beyond the --fail-on-regression threshold of 10 %"},
		{"equal medians", Diff{PValue: 0.8, MedianCI: ci(-1, 1)}, nil, "no change: the medians are equal"},
		{"rise from 0", Diff{MedianDiff: 3, MedianDiffPct: Number(math.Inf(1)), PValue: 1e-5, Significant: true, Worse: true, MedianCI: ci(2, 4)}, nil,
			"significant regression: +Inf % (p < 0.0001)"},
	}
	for _, c := range cases {
		got := Finding(c.d, 0.05, DefaultMinEffectPct, c.crossed)
		if got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
		if strings.Contains(got, "e-") {
			t.Errorf("%s: an exponent in %q", c.name, got)
		}
	}
}
