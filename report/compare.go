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
}

// Threshold is one --fail-on-regression METRIC:PCT: a significant change of the metric's
// median (p99 with a ".p99" suffix) in the worse direction by at least Pct percent.
type Threshold struct {
	Metric string
	Stat   string // "p50" or "p99"
	Pct    float64
}

// ParseThreshold parses METRIC[.p50|.p99]:PCT, e.g. "time_to_first_token:10".
func ParseThreshold(s string) (Threshold, error) {
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
	if !slices.Contains(compareTags(), t.Metric) {
		return Threshold{}, fmt.Errorf("report: regression %q: metric %q: want one of %s", s, t.Metric, strings.Join(compareTags(), ", "))
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
}

// DefaultMinEffectPct is CompareOptions.MinEffectPct's default.
const DefaultMinEffectPct = 1.0

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
	Name                  string  `json:"name"`
	Dir                   string  `json:"dir"`
	PlanHash              string  `json:"plan_hash"`
	Model                 string  `json:"model"`
	Concurrency           int     `json:"concurrency"`
	OfferedRate           float64 `json:"offered_rate"`
	Requests              int64   `json:"requests"`
	Errors                int64   `json:"errors"`
	OutputTokenThroughput Number  `json:"output_token_throughput"`
	RequestThroughput     Number  `json:"request_throughput"`
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
}

// Regression is a threshold a run crossed.
type Regression struct {
	Metric    string  `json:"metric"`
	Stat      string  `json:"stat"`
	Run       string  `json:"run"`
	ChangePct float64 `json:"change_pct"`
	Threshold float64 `json:"threshold_pct"`
}

// compareMetrics are the per-request metrics compared, by field.
var compareMetrics = []Field{FTTFT, FTTFO, FITL, FLatency, FTPSUser}

func compareTags() []string {
	out := make([]string, len(compareMetrics))
	for i, f := range compareMetrics {
		out[i] = f.Tag()
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
	for _, f := range compareMetrics {
		m, ok := compareMetric(runs, f, o)
		if !ok {
			continue
		}
		c.Metrics = append(c.Metrics, m)
		labels, lists := make([]string, len(runs)), make([][]float64, len(runs))
		for i, r := range runs {
			labels[i], lists[i] = r.Name, r.Records.values(f, isOK)
		}
		d, _ := analyze.LookupMetric(f.Tag())
		if ch, ok := quantileChart(f.Tag()+"_cdf", "Distributions", d.Header+" by percentile",
			fmt.Sprintf("%s of every run by percentile, overlaid: a curve above the baseline's (%s) is slower at that percentile.", d.Header, runs[0].Name),
			d.Unit, labels, lists); ok {
			c.Charts = append(c.Charts, ch)
		}
	}
	for _, t := range o.FailOn {
		for _, m := range c.Metrics {
			if m.Tag != t.Metric {
				continue
			}
			for i := range m.Diffs {
				d := &m.Diffs[i]
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
					c.Regressions = append(c.Regressions, Regression{Metric: m.Tag, Stat: t.Stat, Run: runs[d.Run].Name, ChangePct: change, Threshold: t.Pct})
				}
			}
		}
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

func runRows(runs []Run) []RunRow {
	rows := make([]RunRow, len(runs))
	for i, r := range runs {
		s := r.Summary
		rows[i] = RunRow{Name: r.Name, Dir: strings.Join(s.RunDirs, ","), PlanHash: s.PlanHash, Model: s.Model,
			Concurrency: s.Concurrency, OfferedRate: s.OfferedRate, Requests: s.Counts.Profile, Errors: s.Counts.Errors,
			OutputTokenThroughput: Number(value(s, "output_token_throughput")), RequestThroughput: Number(value(s, "request_throughput")),
			Verdict: analyze.VerdictLine(s), Saturated: s.Verdict.Known && !s.Verdict.Kept}
	}
	return rows
}

// value is a single-value result of s, NaN when absent.
func value(s *analyze.Summary, tag string) float64 {
	if r, ok := s.Result(tag); ok {
		return r.Value
	}
	return math.NaN()
}

// warnings say first which clients were saturated, then whether the plans differ.
func warnings(rows []RunRow) []string {
	out := []string{}
	for _, r := range rows {
		if r.Saturated {
			out = append(out, fmt.Sprintf("run %s: the client was saturated (schedule NOT kept): its numbers describe the client, not the server, so differences against it are not the server's", r.Name))
		}
	}
	hashes := map[string]bool{}
	var list []string
	for _, r := range rows {
		if !hashes[r.PlanHash] {
			hashes[r.PlanHash] = true
			list = append(list, r.Name+" "+short(r.PlanHash))
		}
	}
	if len(hashes) > 1 {
		out = append(out, "the runs used different plans ("+strings.Join(list, ", ")+"): they did not send the same requests")
	}
	return out
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func compareMetric(runs []Run, f Field, o CompareOptions) (MetricCompare, bool) {
	d, _ := analyze.LookupMetric(f.Tag())
	m := MetricCompare{Tag: f.Tag(), Unit: d.Unit, LargerIsBetter: d.LargerIsBetter, Diffs: []Diff{}}
	base := sortedCopy(runs[0].Records.values(f, isOK))
	if len(base) == 0 {
		return m, false
	}
	// Time to first output token is compared only when reasoning makes it differ from TTFT.
	if f == FTTFO {
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
			v = sortedCopy(r.Records.values(f, isOK))
		}
		p50, p90, p99 := math.NaN(), math.NaN(), math.NaN()
		if len(v) > 0 {
			p50, p90, p99 = analyze.PercentileSorted(v, 50), analyze.PercentileSorted(v, 90), analyze.PercentileSorted(v, 99)
		}
		m.Runs = append(m.Runs, RunStats{N: len(v), P50: Number(p50), P90: Number(p90), P99: Number(p99)})
		if i == 0 || len(v) == 0 {
			continue
		}
		b50, b99 := float64(m.Runs[0].P50), float64(m.Runs[0].P99)
		md, pd := p50-b50, p99-b99
		mlo, mhi := bootstrapCI(base, v, 50)
		plo, phi := bootstrapCI(base, v, 99)
		u, pv := MannWhitney(v, base)
		mpct, ppct := relPct(md, b50), relPct(pd, b99)
		excludes0 := func(lo, hi float64) bool { return lo > 0 || hi < 0 }
		m.Diffs = append(m.Diffs, Diff{Run: i, MedianDiff: Number(md), MedianDiffPct: Number(mpct),
			MedianCI: [2]Number{Number(mlo), Number(mhi)}, P99Diff: Number(pd), P99DiffPct: Number(ppct),
			P99CI: [2]Number{Number(plo), Number(phi)}, U: Number(u), PValue: Number(pv),
			Significant:    pv < o.Alpha && excludes0(mlo, mhi) && math.Abs(mpct) >= o.MinEffectPct,
			P99Significant: excludes0(plo, phi) && math.Abs(ppct) >= o.MinEffectPct,
			Worse:          md != 0 && (md > 0) != d.LargerIsBetter})
	}
	return m, true
}

// relPct is d as a percentage of base, 0 when base is 0.
func relPct(d, base float64) float64 {
	if base == 0 || math.IsNaN(base) {
		return 0
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
