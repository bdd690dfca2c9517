package report

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

func diffOf(t *testing.T, c *ComparePage, tag string) Diff {
	t.Helper()
	for _, m := range c.Metrics {
		if m.Tag == tag {
			if len(m.Diffs) != 1 {
				t.Fatalf("%s: %d diffs", tag, len(m.Diffs))
			}
			return m.Diffs[0]
		}
	}
	t.Fatalf("no %s in the comparison", tag)
	return Diff{}
}

// TestCompareSignificance: mockllm at TTFT 20 ms against 25 ms differs significantly in TTFT
// (a regression beyond 10%), two runs at 20 ms do not.
func TestCompareSignificance(t *testing.T) {
	a, a2, b := analyseFixture(t, "rate-a", 0), analyseFixture(t, "rate-a2", 0), analyseFixture(t, "rate-b", 0)
	ttft10, err := ParseThreshold("time_to_first_token:10")
	if err != nil {
		t.Fatal(err)
	}
	ttft50, err := ParseThreshold("time_to_first_token.p99:50")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		other       Run
		significant bool
		regressions int
	}{
		{"20ms vs 25ms", b, true, 1},
		{"20ms vs 20ms", a2, false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Compare([]Run{a, tc.other}, CompareOptions{FailOn: []Threshold{ttft10, ttft50}, MaxErrorRate: 0.1})
			if err != nil {
				t.Fatal(err)
			}
			d := diffOf(t, c, "time_to_first_token")
			if d.Significant != tc.significant {
				t.Errorf("TTFT significant = %v, want %v (diff %v%%, p %v, CI %v)", d.Significant, tc.significant, d.MedianDiffPct, d.PValue, d.MedianCI)
			}
			if tc.significant && (d.MedianDiff < 3 || d.MedianDiff > 8 || !d.Worse) {
				t.Errorf("TTFT median diff %v ms (worse %v), want about +5 ms", d.MedianDiff, d.Worse)
			}
			if len(c.Regressions) != tc.regressions {
				t.Errorf("regressions %+v, want %d", c.Regressions, tc.regressions)
			}
			if itl := diffOf(t, c, "inter_token_latency"); itl.Significant {
				t.Errorf("ITL flagged significant: %+v (ITL is 2 ms in every run)", itl)
			}
			if len(c.Warnings) != 0 {
				t.Errorf("warnings %q: same plan, schedules kept", c.Warnings)
			}
			if c.Sweep != nil {
				t.Errorf("two runs of one plan taken for a sweep: %+v", c.Sweep)
			}
			var j bytes.Buffer
			if err := WriteCompareJSON(&j, c); err != nil {
				t.Fatal(err)
			}
			var back map[string]any
			if err := json.Unmarshal(j.Bytes(), &back); err != nil {
				t.Fatal(err)
			}
			if back["compare_version"] != float64(CompareVersion) {
				t.Errorf("compare_version %v", back["compare_version"])
			}
		})
	}
}

// TestCompareWarnings: a saturated client is said; the points of a concurrency sweep have
// different plans by design (the concurrency) and send the same bodies, which is no warning;
// runs of a concurrency sweep make a sweep with a Pareto.
func TestCompareWarnings(t *testing.T) {
	runs := []Run{analyseFixture(t, "conc-1", 0), analyseFixture(t, "conc-2", 0), analyseFixture(t, "conc-4", 0)}
	runs[2].Summary.Verdict.Kept = false
	runs[2].Summary.Verdict.Reasons = []string{"dispatch lag p99 5 ms > 1 ms"}
	c, err := Compare(runs, CompareOptions{MaxErrorRate: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "conc-4: the client was saturated") {
		t.Errorf("warnings %q: want the saturated client only (a sweep's plans differ by design)", c.Warnings)
	}
	if c.Runs[0].PlanHash == c.Runs[1].PlanHash || c.Runs[0].BodiesHash == "" || c.Runs[0].BodiesHash != c.Runs[1].BodiesHash || c.Runs[0].BodiesHash != c.Runs[2].BodiesHash {
		t.Errorf("a concurrency sweep's runs: plan hashes %s %s, bodies hashes %q %q %q: want different plans, one bodies hash",
			c.Runs[0].PlanHash, c.Runs[1].PlanHash, c.Runs[0].BodiesHash, c.Runs[1].BodiesHash, c.Runs[2].BodiesHash)
	}
	if !c.Runs[2].Saturated || !strings.Contains(c.Runs[2].Verdict, "NOT kept") {
		t.Errorf("run row %+v", c.Runs[2])
	}
	sw := c.Sweep
	if sw == nil || sw.Parameter != "concurrency" || len(sw.Points) != 3 {
		t.Fatalf("sweep %+v", sw)
	}
	pareto := 0
	for i, p := range sw.Points {
		if p.Value != float64([]int{1, 2, 4}[i]) {
			t.Errorf("point %d value %v", i, p.Value)
		}
		if p.Pareto {
			pareto++
		}
		if !finite(p.OutputTPS) || !finite(p.TTFTP50) || finite(p.OutputTPSPerGPU) {
			t.Errorf("point %+v: want throughput and TTFT, no per-GPU figure without telemetry", p)
		}
	}
	if pareto == 0 || sw.PerGPU {
		t.Errorf("pareto points %d, per GPU %v", pareto, sw.PerGPU)
	}
	ids := map[string]bool{}
	for _, ch := range c.Charts {
		ids[ch.ID] = true
	}
	if !ids["sweep_ttft_throughput"] || !ids["sweep_pareto"] || !ids["time_to_first_token_cdf"] {
		t.Errorf("charts %v", ids)
	}
}

func TestParseThreshold(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Threshold
		err  string
	}{
		{"time_to_first_token:10", Threshold{"time_to_first_token", "p50", 10}, ""},
		{"request_latency.p99:2.5", Threshold{"request_latency", "p99", 2.5}, ""},
		{"time_to_first_token", Threshold{}, "want METRIC:PCT"},
		{"ttft:10", Threshold{}, `metric "ttft"`},
		{"time_to_first_token.p90:10", Threshold{}, `statistic "p90"`},
		{"time_to_first_token:-1", Threshold{}, "percent"},
		{"time_to_first_token:x", Threshold{}, "percent"},
	} {
		got, err := ParseThreshold(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

// TestCompareRunFailures: a run with failed requests beyond the bound, or one that did not
// complete, is a failed_run regression (the baseline too) and a warning; a run of the
// baseline's plan that completed far fewer requests is a completed regression; a failed or
// saturated point of a sweep is never on its Pareto set.
func TestCompareRunFailures(t *testing.T) {
	base, cand := analyseFixture(t, "rate-a", 0), analyseFixture(t, "rate-a2", 0)
	kinds := func(c *ComparePage) []string {
		var k []string
		for _, r := range c.Regressions {
			k = append(k, r.Kind+" "+r.Run)
		}
		return k
	}
	// The fixtures failed 3-5% of their requests: beyond the default bound, within 0.1.
	c, err := Compare([]Run{base, cand}, CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := kinds(c); strings.Join(got, ",") != "failed_run rate-a,failed_run rate-a2" || !strings.Contains(c.Regressions[0].Reason, "(baseline) failed: ") ||
		!strings.Contains(c.Warnings[0], "run rate-a FAILED: 2 of 60 profile requests failed") {
		t.Errorf("default bound: regressions %v %q, warnings %q", got, c.Regressions[0].Reason, c.Warnings)
	}
	completed := cand.Summary.Counts.Valid
	cand.Summary.Counts.Valid = completed / 2
	c, err = Compare([]Run{base, cand}, CompareOptions{MaxErrorRate: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	if got := kinds(c); len(got) != 1 || got[0] != "completed rate-a2" || !strings.Contains(c.Regressions[0].Reason, "fewer than rate-a's") || c.Regressions[0].ChangePct < 45 {
		t.Errorf("half the completed requests: %v %+v", got, c.Regressions)
	}
	if c, _ = Compare([]Run{base, cand}, CompareOptions{MaxErrorRate: 0.1, MaxCompletedDropPct: 60}); len(c.Regressions) != 0 {
		t.Errorf("a drop within --max-completed-drop: %+v", c.Regressions)
	}
	cand.Summary.Counts.Valid = completed
	cand.Summary.RunStatus = "interrupted"
	c, _ = Compare([]Run{base, cand}, CompareOptions{MaxErrorRate: 0.1})
	if got := kinds(c); len(got) != 1 || got[0] != "failed_run rate-a2" || !strings.Contains(strings.Join(c.Warnings, "\n"), "the runs did not all complete (run.json status: rate-a complete, rate-a2 interrupted)") {
		t.Errorf("interrupted: %v, warnings %q", got, c.Warnings)
	}
	cand.Summary.RunStatus = "complete"

	// A sweep whose best point failed: it is drawn, flagged, and not on the Pareto set.
	runs := []Run{analyseFixture(t, "conc-1", 0), analyseFixture(t, "conc-2", 0), analyseFixture(t, "conc-4", 0)}
	pareto := func(runs []Run) []bool {
		c, err := Compare(runs, CompareOptions{MaxErrorRate: 0.1})
		if err != nil {
			t.Fatal(err)
		}
		var on []bool
		for _, p := range c.Sweep.Points {
			on = append(on, p.Pareto)
		}
		return on
	}
	before := pareto(runs)
	runs[2].Summary.Counts.GateErrors = runs[2].Summary.Counts.Profile
	after := pareto(runs)
	if !before[2] || after[2] || !(after[0] || after[1]) {
		t.Errorf("pareto before %v, after conc-4 failed %v: want conc-4 off it and another on it", before, after)
	}
	runs[2].Summary.Counts.GateErrors = 0
	runs[2].Summary.Verdict.Kept = false
	if after := pareto(runs); after[2] {
		t.Errorf("a saturated point on the Pareto set: %v", after)
	}
}

// withField returns r with its own copy of the records, every request's value of f set by
// set (NaN: the request has none).
func withField(r Run, f Field, set func(float64) float64) Run {
	recs := &Records{Requests: append([]Request(nil), r.Records.Requests...)}
	for i := range recs.Requests {
		recs.Requests[i].Values[f] = float32(set(recs.Requests[i].Value(f)))
	}
	r.Records = recs
	return r
}

// TestCompareThresholdNeverVacuous: a --fail-on-regression threshold that cannot be checked
// fails the comparison instead of passing it: a run (the candidate, or the baseline) whose
// successful requests have no value of the metric (one-token outputs have no ITL; a run that
// does not stream has no TTFT), and a baseline median of 0 does not hide a candidate's rise
// (+Inf %, not 0 %). The comparison JSON stays valid.
func TestCompareThresholdNeverVacuous(t *testing.T) {
	a, a2 := analyseFixture(t, "rate-a", 0), analyseFixture(t, "rate-a2", 0)
	none := func(float64) float64 { return math.NaN() }
	zero := func(float64) float64 { return 0 }
	itl10, err := ParseThreshold("inter_token_latency:10")
	if err != nil {
		t.Fatal(err)
	}
	ttft10, err := ParseThreshold("time_to_first_token.p99:10")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name       string
		runs       []Run
		fail       []Threshold
		kind, want string // the one regression's kind and a substring of its reason; "" for none
	}{
		{"both have values", []Run{a, a2}, []Threshold{itl10, ttft10}, "", ""},
		{"candidate has no ITL", []Run{a, withField(a2, FITL, none)}, []Threshold{itl10}, RegressionNotEvaluable,
			"inter_token_latency p50 of rate-a2 cannot be compared: its successful requests have no inter_token_latency values"},
		{"baseline has no ITL", []Run{withField(a, FITL, none), a2}, []Threshold{itl10}, RegressionNotEvaluable,
			"inter_token_latency p50 of rate-a2 cannot be compared: the baseline rate-a's successful requests have no inter_token_latency values"},
		{"candidate has no TTFT", []Run{a, withField(a2, FTTFT, none)}, []Threshold{ttft10}, RegressionNotEvaluable,
			"time_to_first_token p99 of rate-a2 cannot be compared"},
		{"baseline ITL 0, candidate's not", []Run{withField(a, FITL, zero), a2}, []Threshold{itl10}, RegressionMetric,
			"inter_token_latency p50 of rate-a2 is +Inf% worse than rate-a"},
		{"both ITL 0", []Run{withField(a, FITL, zero), withField(a2, FITL, zero)}, []Threshold{itl10}, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmp, err := Compare(c.runs, CompareOptions{FailOn: c.fail, MaxErrorRate: 0.1})
			if err != nil {
				t.Fatal(err)
			}
			var kinds, reasons []string
			for _, r := range cmp.Regressions {
				kinds, reasons = append(kinds, r.Kind), append(reasons, r.Reason)
			}
			switch {
			case c.want == "" && len(kinds) != 0:
				t.Errorf("regressions %q %q, want none", kinds, reasons)
			case c.want != "" && (len(kinds) != 1 || kinds[0] != c.kind || !strings.Contains(reasons[0], c.want)):
				t.Errorf("regressions %q %q, want one %s ~ %q", kinds, reasons, c.kind, c.want)
			}
			var j bytes.Buffer
			if err := WriteCompareJSON(&j, cmp); err != nil || !json.Valid(j.Bytes()) {
				t.Errorf("compare JSON: %v", err)
			}
		})
	}
}

// TestCompareWarningsWhatMustNotDiffer: runs that sent different bodies, or asked for
// different models, are warned about; a plan that cannot be read says its bodies could not
// be compared.
func TestCompareWarningsWhatMustNotDiffer(t *testing.T) {
	cases := []struct {
		name string
		edit func([]Run)
		runs []string
		want string
	}{
		{"different bodies", nil, []string{"conc-1", "rate-a"}, "the runs sent different request bodies (bodies hash conc-1 "},
		{"different models", func(r []Run) { r[1].Summary.Model = "other-model" }, []string{"conc-1", "conc-2"}, "the runs asked for different models (conc-1 "},
		{"plan unreadable", func(r []Run) { r[1].Summary.PlanPath = filepath.Join(t.TempDir(), "gone.llmplan") }, []string{"conc-1", "conc-2"},
			"whose request bodies could not be compared (conc-2: "},
		{"same bodies", nil, []string{"conc-1", "conc-2"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var runs []Run
			for _, n := range c.runs {
				runs = append(runs, analyseFixture(t, n, 0))
			}
			if c.edit != nil {
				c.edit(runs)
			}
			w := warnings(runRows(runs))
			found := c.want == "" && len(w) == 0
			for _, x := range w {
				found = found || c.want != "" && strings.Contains(x, c.want)
			}
			if !found {
				t.Errorf("warnings %q, want one with %q", w, c.want)
			}
		})
	}
}
