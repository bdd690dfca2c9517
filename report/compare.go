package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/analyze/judge"
	"github.com/llmbench/llmbench/analyze/output"
	"github.com/llmbench/llmbench/internal/numfmt"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/stats"
)

// CompareVersion is the version of the comparison JSON (docs/report.md).
const CompareVersion = 1

// Run is one analysed run of a comparison or sweep.
type Run struct {
	// Name labels the run (its directory's base name).
	Name    string
	Summary *analyze.Summary
	// Records are its per-request records; nil leaves the run out of the per-request
	// statistics (a sweep page needs only the summaries).
	Records *Records
	// Problems say what makes the run not a whole, successful measurement beyond its
	// client's schedule (judge.Health: a crash, failed requests above the bound), one
	// clause each. Compare fills them; a sweep page takes them from its caller. A run with
	// problems is shown, flagged, and is never on a sweep's Pareto set.
	Problems []string
}

// Threshold is one --fail-on-regression METRIC:PCT: a significant change of the metric's
// median (p99 with a ".p99" suffix) in the worse direction by at least Pct percent.
type Threshold struct {
	Metric string
	Stat   string // "p50" or "p99"
	Pct    float64
}

// ParseThreshold parses METRIC[.p50|.p99]:PCT, e.g. "time_to_first_token:10", METRIC one
// of the built-in metrics a comparison compares (ParseThresholdFor).
func ParseThreshold(s string) (Threshold, error) { return ParseThresholdFor(nil, s) }

// ParseThresholdFor parses METRIC[.p50|.p99]:PCT, METRIC one of the metrics a comparison
// over runs analysed with reg compares (nil: the built-ins).
func ParseThresholdFor(reg *analyze.Registry, s string) (Threshold, error) {
	name, pct, found := strings.Cut(s, ":")
	if !found {
		return Threshold{}, fmt.Errorf("report: regression %q: want METRIC:PCT, e.g. time_to_first_token:10", s)
	}
	t := Threshold{Metric: name, Stat: "p50"}
	if m, st, ok := strings.Cut(name, "."); ok {
		if st != "p50" && st != "p99" {
			return Threshold{}, fmt.Errorf("report: regression %q: statistic %q: want p50 or p99", s, st)
		}
		t.Metric, t.Stat = m, st
	}
	if tags := compareTags(reg); !slices.Contains(tags, t.Metric) {
		return Threshold{}, fmt.Errorf("report: regression %q: metric %q: want one of %s", s, t.Metric, strings.Join(tags, ", "))
	}
	v, err := strconv.ParseFloat(pct, 64)
	if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return Threshold{}, fmt.Errorf("report: regression %q: percent %q: want a number ≥ 0", s, pct)
	}
	t.Pct = v
	return t, nil
}

// CompareOptions set the significance test and the regression thresholds.
type CompareOptions struct {
	// Alpha is the Mann–Whitney significance level (default 0.05).
	Alpha float64
	// MinEffectPct is the smallest relative difference of medians called significant
	// (0: DefaultMinEffectPct): a real but negligible shift is not a finding.
	MinEffectPct float64
	// FailOn are the regressions that fail the comparison.
	FailOn []Threshold
	// MaxErrorRate is the largest fraction of failed profile requests a run may have and
	// still count (analyze's --max-error-rate; 0: any failure): a run beyond it, or one that
	// did not complete whole, is a regression of kind "failed_run" (judge.Health).
	MaxErrorRate float64
	// MaxCompletedDropPct is how many percent fewer completed requests than the baseline a
	// run of the same plan may have (0: DefaultMaxCompletedDropPct); more is a regression of
	// kind "completed".
	MaxCompletedDropPct float64
	// Title names the page ("" = the run names).
	Title string
}

func (o *CompareOptions) defaults() {
	if o.Alpha <= 0 {
		o.Alpha = 0.05
	}
	if o.MinEffectPct <= 0 {
		o.MinEffectPct = DefaultMinEffectPct
	}
	if o.MaxCompletedDropPct <= 0 {
		o.MaxCompletedDropPct = DefaultMaxCompletedDropPct
	}
}

// DefaultMinEffectPct is CompareOptions.MinEffectPct's default.
const DefaultMinEffectPct = 1.0

// DefaultMaxCompletedDropPct is CompareOptions.MaxCompletedDropPct's default.
const DefaultMaxCompletedDropPct = 10.0

// The kinds of Regression.
const (
	RegressionMetric    = "metric"     // a --fail-on-regression threshold crossed
	RegressionFailedRun = "failed_run" // a run (the baseline too) with failures beyond the bound, or one that did not complete
	RegressionCompleted = "completed"  // a run of the baseline's plan completed far fewer requests
	// RegressionNotEvaluable: a --fail-on-regression threshold that cannot be checked on a
	// run: its successful requests (or the baseline's) have no value of the metric.
	RegressionNotEvaluable = "not_evaluable"
)

// ComparePage is the comparison: the compare JSON and the data of compare.html.
type ComparePage struct {
	Version      int     `json:"compare_version"`
	Kind         string  `json:"kind"`
	Title        string  `json:"title"`
	Baseline     string  `json:"baseline"`
	Alpha        float64 `json:"alpha"`
	MinEffectPct float64 `json:"min_effect_pct"`
	// Warnings come first on the page: saturated clients, then different plans.
	Warnings    []string        `json:"warnings"`
	Runs        []RunRow        `json:"runs"`
	Metrics     []MetricCompare `json:"metrics"`
	Regressions []Regression    `json:"regressions"`
	Sweep       *Sweep          `json:"sweep"`
	Charts      []Chart         `json:"charts"`
}

// RunRow is one run of a comparison.
type RunRow struct {
	Name     string `json:"name"`
	Dir      string `json:"dir"`
	PlanHash string `json:"plan_hash"`
	// BodiesHash is what the plan sends without when (bodiesHash): runs of one sweep have
	// different plan hashes by design and the same bodies hash; "" when the plan could not
	// be read (bodiesWhy says why).
	BodiesHash  string `json:"bodies_hash"`
	bodiesWhy   string
	Model       string  `json:"model"`
	Concurrency int     `json:"concurrency"`
	OfferedRate float64 `json:"offered_rate"`
	Requests    int64   `json:"requests"`
	Errors      int64   `json:"errors"`
	// Completed are the profile requests that succeeded; Status is run.json's status.
	Completed int64  `json:"completed"`
	Status    string `json:"status"`
	// Endpoint is the endpoint type and the URLs called (redacted).
	Endpoint string `json:"endpoint"`
	// Problems are what makes the run not a whole, successful measurement (Run.Problems);
	// empty when it is one.
	Problems              []string `json:"problems"`
	OutputTokenThroughput Number   `json:"output_token_throughput"`
	RequestThroughput     Number   `json:"request_throughput"`
	// Verdict is analyze's verdict line; Saturated is true when the client did not keep
	// its schedule (its numbers describe the client).
	Verdict   string `json:"verdict"`
	Saturated bool   `json:"saturated"`
}

// MetricCompare is one metric across the runs.
type MetricCompare struct {
	Tag            string     `json:"tag"`
	Unit           string     `json:"unit"`
	LargerIsBetter bool       `json:"larger_is_better"`
	Runs           []RunStats `json:"runs"`
	// Diffs compare every other run with the baseline (run 0).
	Diffs []Diff `json:"diffs"`
}

// RunStats are one run's percentiles of a metric (successful requests).
type RunStats struct {
	N   int    `json:"n"`
	P50 Number `json:"p50"`
	P90 Number `json:"p90"`
	P99 Number `json:"p99"`
}

// Diff is run Run against the baseline: differences are Run − baseline, in the metric's unit.
type Diff struct {
	Run           int       `json:"run"`
	MedianDiff    Number    `json:"median_diff"`
	MedianDiffPct Number    `json:"median_diff_pct"`
	MedianCI      [2]Number `json:"median_ci"`
	P99Diff       Number    `json:"p99_diff"`
	P99DiffPct    Number    `json:"p99_diff_pct"`
	P99CI         [2]Number `json:"p99_ci"`
	U             Number    `json:"mann_whitney_u"`
	PValue        Number    `json:"p_value"`
	// Significant: p < alpha, the median CI excludes 0 and |median_diff_pct| ≥ min_effect_pct.
	Significant bool `json:"significant"`
	// P99Significant: the p99 CI excludes 0 and |p99_diff_pct| ≥ min_effect_pct.
	P99Significant bool `json:"p99_significant"`
	// Worse says the change (of the median) is in the metric's worse direction.
	Worse bool `json:"worse"`
	// Regression: a --fail-on-regression threshold this difference crosses.
	Regression bool `json:"regression"`
	// Finding says in words what the difference of medians means: "no significant change:
	// +0.01 %, below the 1 % minimum effect", "significant regression: +12.3 % (p = 0.002)"
	// (Finding); the console and the page print it as it is.
	Finding string `json:"finding"`
}

// Regression is what fails the comparison: a threshold a run crossed or that cannot be
// checked on it, a run that failed, or a run that completed far fewer requests than the
// baseline.
type Regression struct {
	// Kind is RegressionMetric, RegressionNotEvaluable, RegressionFailedRun or
	// RegressionCompleted.
	Kind string `json:"kind"`
	// Metric and Stat name what changed ("" for a failed run; completed_requests, count
	// for kind completed).
	Metric string `json:"metric"`
	Stat   string `json:"stat"`
	Run    string `json:"run"`
	// ChangePct is how much worse, in percent (fewer completed requests for kind
	// completed; null when infinite, a rise from a baseline of 0, or not evaluable);
	// Threshold the bound crossed, in percent (--max-error-rate × 100 for a run whose
	// requests failed).
	ChangePct Number  `json:"change_pct"`
	Threshold float64 `json:"threshold_pct"`
	// Reason says it in one line.
	Reason string `json:"reason"`
}

// CompareTags are the built-in per-request metrics a comparison compares, by tag.
func CompareTags() []string { return compareTags(nil) }

// compareTags are the metrics compared over runs analysed with reg (Registry.Compared).
func compareTags(reg *analyze.Registry) []string {
	var out []string
	for _, d := range reg.Compared() {
		out = append(out, d.Tag)
	}
	return out
}

// Compare compares runs[1:] with runs[0], the baseline. Every run needs its Records.
func Compare(runs []Run, o CompareOptions) (*ComparePage, error) {
	o.defaults()
	if len(runs) < 2 {
		return nil, fmt.Errorf("report: compare: %d run given, want at least 2", len(runs))
	}
	for _, r := range runs {
		if r.Summary == nil || r.Records == nil {
			return nil, fmt.Errorf("report: compare: run %s has no summary or records", r.Name)
		}
	}
	runs = slices.Clone(runs)
	for i := range runs {
		runs[i].Problems = problems(runs[i].Summary, o.MaxErrorRate)
	}
	c := &ComparePage{Version: CompareVersion, Kind: "compare", Baseline: runs[0].Name, Alpha: o.Alpha,
		MinEffectPct: o.MinEffectPct, Warnings: []string{}, Regressions: []Regression{}, Charts: []Chart{}}
	c.Title = o.Title
	if c.Title == "" {
		names := make([]string, len(runs))
		for i, r := range runs {
			names[i] = r.Name
		}
		c.Title = "llmbench comparison: " + strings.Join(names, " vs ")
	}
	c.Runs = runRows(runs)
	c.Warnings = warnings(c.Runs)
	c.Regressions = runRegressions(c.Runs, o)
	// The metrics compared are those of the baseline's registry: the built-ins, then the
	// user metrics it was analysed with.
	for _, d := range runs[0].Summary.Registry.Compared() {
		m, ok := compareMetric(runs, d, o)
		if !ok {
			continue
		}
		c.Metrics = append(c.Metrics, m)
		labels, lists := make([]string, len(runs)), make([][]float64, len(runs))
		for i, r := range runs {
			labels[i], lists[i] = r.Name, r.Records.valuesOf(d.Tag, isOK)
		}
		if ch, ok := quantileChart(d.Tag+"_cdf", "Distributions", d.Header+" by percentile",
			fmt.Sprintf("%s of every run by percentile, overlaid: a curve above the baseline's (%s) is slower at that percentile.", d.Header, runs[0].Name),
			d.Unit, labels, lists); ok {
			c.Charts = append(c.Charts, ch)
		}
	}
	for _, t := range o.FailOn {
		c.Regressions = append(c.Regressions, thresholdRegressions(c.Metrics, runs, t)...)
	}
	if c.Metrics == nil {
		c.Metrics = []MetricCompare{}
	}
	if sw := DetectSweep(runs); sw != nil {
		c.Sweep = sw
		c.Charts = append(c.Charts, sweepCharts(sw)...)
	}
	return c, nil
}

// thresholdRegressions checks the threshold t on every run but the baseline: a significant
// change in the worse direction by at least t.Pct is a regression (its Diff is marked); a run
// the threshold cannot be checked on, because its successful requests or the baseline's have
// no value of the metric, is one too (RegressionNotEvaluable): a release gate that cannot be
// checked never passes. Runs that failed (a run with problems, or a failed baseline) are left
// out: their failure is a regression of its own.
func thresholdRegressions(metrics []MetricCompare, runs []Run, t Threshold) []Regression {
	var out []Regression
	find := func(tag string) *MetricCompare {
		for i := range metrics {
			if metrics[i].Tag == tag {
				return &metrics[i]
			}
		}
		return nil
	}
	m := find(t.Metric)
	if m == nil && t.Metric == FTTFO.Tag() {
		m = find(FTTFT.Tag()) // compared only where reasoning makes it differ from TTFT
	}
	base := runs[0].Name
	for i := 1; i < len(runs); i++ {
		if len(runs[0].Problems) > 0 || len(runs[i].Problems) > 0 {
			continue
		}
		name := runs[i].Name
		var d *Diff
		if m != nil {
			for k := range m.Diffs {
				if m.Diffs[k].Run == i {
					d = &m.Diffs[k]
				}
			}
		}
		if d == nil {
			why := "its successful requests have no " + t.Metric + " values"
			if m == nil {
				why = "the baseline " + base + "'s successful requests have no " + t.Metric + " values"
			}
			out = append(out, Regression{Kind: RegressionNotEvaluable, Metric: t.Metric, Stat: t.Stat, Run: name, ChangePct: Number(math.NaN()),
				Threshold: t.Pct, Reason: fmt.Sprintf("%s %s of %s cannot be compared: %s (threshold %g%%)", t.Metric, t.Stat, name, why, t.Pct)})
			continue
		}
		change, sig := float64(d.MedianDiffPct), d.Significant
		if t.Stat == "p99" {
			change, sig = float64(d.P99DiffPct), d.P99Significant
		}
		worse := change > 0
		if m.LargerIsBetter {
			worse, change = change < 0, -change
		}
		if sig && worse && change >= t.Pct {
			d.Regression = true
			if t.Stat == "p50" {
				d.Finding = Finding(*d, 0, 0, &t)
			}
			out = append(out, Regression{Kind: RegressionMetric, Metric: m.Tag, Stat: t.Stat, Run: name,
				ChangePct: Number(change), Threshold: t.Pct, Reason: fmt.Sprintf("%s %s of %s is %.2f%% worse than %s (threshold %g%%)",
					t.Metric, t.Stat, name, change, base, t.Pct)})
		}
	}
	return out
}

func runRows(runs []Run) []RunRow {
	rows := make([]RunRow, len(runs))
	for i, r := range runs {
		s := r.Summary
		rows[i] = RunRow{Name: r.Name, Dir: strings.Join(s.RunDirs, ","), PlanHash: s.PlanHash, Model: s.Model,
			Concurrency: s.Concurrency, OfferedRate: s.OfferedRate, Requests: s.Counts.Profile, Errors: s.Counts.Errors,
			Completed: s.Counts.Valid, Status: s.RunStatus, Endpoint: strings.TrimSpace(s.Endpoint + " " + strings.Join(s.URLs, ",")),
			Problems:              append([]string{}, r.Problems...),
			OutputTokenThroughput: Number(value(s, "output_token_throughput")), RequestThroughput: Number(value(s, "request_throughput")),
			Verdict: output.VerdictLine(s), Saturated: s.Verdict.Known && !s.Verdict.Kept}
		if h, err := bodiesHash(s.PlanPath); err != nil {
			rows[i].bodiesWhy = err.Error()
		} else {
			rows[i].BodiesHash = h
		}
	}
	return rows
}

// problems are what judge.Health finds wrong with s at the error bound, the client's
// schedule left out (a saturated client is its own warning).
func problems(s *analyze.Summary, maxErrorRate float64) []string {
	var out []string
	for _, p := range judge.Health(s, maxErrorRate) {
		if p.Kind != judge.ProblemSchedule {
			out = append(out, p.Text)
		}
	}
	return out
}

// runRegressions are the comparison's failures that need no statistics: every run (the
// baseline first) with problems, then every other run of the baseline's plan that
// completed more than o.MaxCompletedDropPct percent fewer requests than the baseline.
func runRegressions(rows []RunRow, o CompareOptions) []Regression {
	out := []Regression{}
	for i, r := range rows {
		if len(r.Problems) == 0 {
			continue
		}
		role, after := "candidate", ""
		if i == 0 {
			role, after = "baseline", ": every difference against it describes failures"
		}
		out = append(out, Regression{Kind: RegressionFailedRun, Run: r.Name, Threshold: o.MaxErrorRate * 100,
			Reason: fmt.Sprintf("run %s (%s) failed: %s%s", r.Name, role, strings.Join(r.Problems, "; "), after)})
	}
	base := rows[0]
	for _, r := range rows[1:] {
		if len(r.Problems) > 0 || r.PlanHash != base.PlanHash || base.Completed <= 0 {
			continue
		}
		drop := float64(base.Completed-r.Completed) / float64(base.Completed) * 100
		if drop > o.MaxCompletedDropPct {
			out = append(out, Regression{Kind: RegressionCompleted, Metric: "completed_requests", Stat: "count", Run: r.Name, ChangePct: Number(drop),
				Threshold: o.MaxCompletedDropPct, Reason: fmt.Sprintf("run %s completed %d of %d profile requests, %.2f%% fewer than %s's %d of the same plan (threshold %g%%)",
					r.Name, r.Completed, r.Requests, drop, base.Name, base.Completed, o.MaxCompletedDropPct)})
		}
	}
	return out
}

// value is a single-value result of s, NaN when absent.
func value(s *analyze.Summary, tag string) float64 {
	if r, ok := s.Result(tag); ok {
		return r.Value
	}
	return math.NaN()
}

// warnings say first which runs failed, then which clients were saturated, then whether
// the plans, the endpoints or the runs' completion differ.
func warnings(rows []RunRow) []string {
	out := []string{}
	for _, r := range rows {
		if len(r.Problems) > 0 {
			out = append(out, fmt.Sprintf("run %s FAILED: %s: its numbers describe failures, not the server's performance", r.Name, strings.Join(r.Problems, "; ")))
		}
	}
	for _, r := range rows {
		if r.Saturated {
			out = append(out, fmt.Sprintf("run %s: the client was saturated (schedule NOT kept): its numbers describe the client, not the server, so differences against it are not the server's", r.Name))
		}
	}
	// Plans differ by design in what a sweep sweeps (the concurrency, the request rate and
	// the schedule drawn from it): that is no warning. What they send must not differ: the
	// bodies (and their paths), the endpoint and the model.
	if differing(rows, func(r RunRow) string { return r.PlanHash }) != "" {
		var unread []string
		for _, r := range rows {
			if r.BodiesHash == "" {
				unread = append(unread, r.Name+": "+r.bodiesWhy)
			}
		}
		switch {
		case len(unread) > 0:
			out = append(out, "the runs used different plans ("+differing(rows, func(r RunRow) string { return short(r.PlanHash) })+
				") whose request bodies could not be compared ("+strings.Join(unread, "; ")+"): they may not have sent the same requests, and their completed requests are not compared")
		default:
			if d := differing(rows, func(r RunRow) string { return short(r.BodiesHash) }); d != "" {
				out = append(out, "the runs sent different request bodies (bodies hash "+d+"): they did not send the same requests, so their differences are not the server's alone, and their completed requests are not compared")
			}
		}
	}
	if d := differing(rows, func(r RunRow) string { return r.Model }); d != "" {
		out = append(out, "the runs asked for different models ("+d+"): they did not measure the same model")
	}
	if d := differing(rows, func(r RunRow) string { return r.Endpoint }); d != "" {
		out = append(out, "the runs called different endpoints ("+d+"): they did not measure the same API or server")
	}
	complete := true
	for _, r := range rows {
		complete = complete && r.Status == rawlog.StatusComplete
	}
	if d := differing(rows, func(r RunRow) string { return r.Status }); d != "" || !complete {
		if d == "" {
			d = "every run " + rows[0].Status
		}
		out = append(out, "the runs did not all complete (run.json status: "+d+")")
	}
	return out
}

// differing lists every run's key as "name key" when the runs' keys are not all the same,
// else "".
func differing(rows []RunRow, key func(RunRow) string) string {
	same := true
	for _, r := range rows[1:] {
		same = same && key(r) == key(rows[0])
	}
	if same {
		return ""
	}
	list := make([]string, len(rows))
	for i, r := range rows {
		k := key(r)
		if k == "" {
			k = "unknown"
		}
		list[i] = r.Name + " " + k
	}
	return strings.Join(list, ", ")
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func compareMetric(runs []Run, d analyze.MetricDef, o CompareOptions) (MetricCompare, bool) {
	m := MetricCompare{Tag: d.Tag, Unit: d.Unit, LargerIsBetter: d.LargerIsBetter, Diffs: []Diff{}}
	base := sortedCopy(runs[0].Records.valuesOf(d.Tag, isOK))
	if len(base) == 0 {
		return m, false
	}
	// Time to first output token is compared only when reasoning makes it differ from TTFT.
	if d.Tag == FTTFO.Tag() {
		differs := false
		for _, r := range runs {
			if !slices.Equal(r.Records.values(FTTFO, isOK), r.Records.values(FTTFT, isOK)) {
				differs = true
			}
		}
		if !differs {
			return m, false
		}
	}
	for i, r := range runs {
		v := base
		if i > 0 {
			v = sortedCopy(r.Records.valuesOf(d.Tag, isOK))
		}
		p50, p90, p99 := math.NaN(), math.NaN(), math.NaN()
		if len(v) > 0 {
			p50, p90, p99 = stats.PercentileSorted(v, 50), stats.PercentileSorted(v, 90), stats.PercentileSorted(v, 99)
		}
		m.Runs = append(m.Runs, RunStats{N: len(v), P50: Number(p50), P90: Number(p90), P99: Number(p99)})
		if i == 0 || len(v) == 0 {
			continue
		}
		b50, b99 := float64(m.Runs[0].P50), float64(m.Runs[0].P99)
		md, pd := p50-b50, p99-b99
		mlo, mhi := stats.BootstrapCI(base, v, 50)
		plo, phi := stats.BootstrapCI(base, v, 99)
		u, pv := stats.MannWhitney(v, base)
		mpct, ppct := relPct(md, b50), relPct(pd, b99)
		excludes0 := func(lo, hi float64) bool { return lo > 0 || hi < 0 }
		m.Diffs = append(m.Diffs, Diff{Run: i, MedianDiff: Number(md), MedianDiffPct: Number(mpct),
			MedianCI: [2]Number{Number(mlo), Number(mhi)}, P99Diff: Number(pd), P99DiffPct: Number(ppct),
			P99CI: [2]Number{Number(plo), Number(phi)}, U: Number(u), PValue: Number(pv),
			Significant:    pv < o.Alpha && excludes0(mlo, mhi) && math.Abs(mpct) >= o.MinEffectPct,
			P99Significant: excludes0(plo, phi) && math.Abs(ppct) >= o.MinEffectPct,
			Worse:          md != 0 && (md > 0) != d.LargerIsBetter})
		m.Diffs[len(m.Diffs)-1].Finding = Finding(m.Diffs[len(m.Diffs)-1], o.Alpha, o.MinEffectPct, nil)
	}
	return m, true
}

// Finding says in words what a difference of medians is, from the same figures as its
// significant flag: which test it fails when it is not significant, and, when it is,
// whether the change is an improvement or a regression (the metric's worse direction) with
// its p-value; crossed is the --fail-on-regression threshold it crosses, nil when none.
// Numbers are numfmt's.
func Finding(d Diff, alpha, minEffectPct float64, crossed *Threshold) string {
	pct, p := float64(d.MedianDiffPct), float64(d.PValue)
	change := numfmt.Percent(pct)
	lo, hi := float64(d.MedianCI[0]), float64(d.MedianCI[1])
	switch {
	case d.Significant && crossed != nil:
		return fmt.Sprintf("significant regression: %s (p %s), beyond the --fail-on-regression threshold of %s %%", change, numfmt.P(p), numfmt.Format(crossed.Pct))
	case d.Significant && d.Worse:
		return fmt.Sprintf("significant regression: %s (p %s)", change, numfmt.P(p))
	case d.Significant:
		return fmt.Sprintf("significant improvement: %s (p %s)", change, numfmt.P(p))
	case pct == 0 && float64(d.MedianDiff) == 0:
		return "no change: the medians are equal"
	case math.Abs(pct) < minEffectPct:
		return fmt.Sprintf("no significant change: %s, below the %s %% minimum effect", change, numfmt.Format(minEffectPct))
	case !(p < alpha):
		return fmt.Sprintf("no significant change: %s (p %s, not below %s)", change, numfmt.P(p), numfmt.Format(alpha))
	}
	return fmt.Sprintf("no significant change: %s (p %s, but the 95 %% interval of the median difference [%s, %s] includes 0)",
		change, numfmt.P(p), numfmt.Format(lo), numfmt.Format(hi))
}

// relPct is d as a percentage of base: 0 when d is 0 (or base is NaN), ±Inf when only base
// is 0 (a rise from 0 is larger than any threshold, never none).
func relPct(d, base float64) float64 {
	switch {
	case d == 0 || math.IsNaN(base):
		return 0
	case base == 0:
		return math.Inf(int(math.Copysign(1, d)))
	}
	return d / math.Abs(base) * 100
}

// WriteCompare writes compare.html for c.
func WriteCompare(w io.Writer, c *ComparePage) error { return writePage(w, c.Title, c) }

// WriteCompareJSON writes the comparison JSON (docs/report.md "Compare JSON").
func WriteCompareJSON(w io.Writer, c *ComparePage) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c); err != nil {
		return fmt.Errorf("report: compare json: %w", err)
	}
	return nil
}
