package profile

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/llmbench/llmbench/export"
	"github.com/llmbench/llmbench/internal/version"
	"github.com/llmbench/llmbench/report"
	"github.com/llmbench/llmbench/sweep"
)

// The sweep's artifacts: the sweep aggregate (profile_export_aiperf_sweep.json and .csv) in
// dir/aggregate, the sweep table on stdout and the sweep page of the HTML report. What is
// best and what is Pareto-optimal is decided in sweep.go (analyse).

// suffixSweep ends the sweep aggregate's file names (AIPerf's profile_export_aiperf_sweep);
// sweepHTML is the sweep page beside them.
const (
	suffixSweep = "_aiperf_sweep"
	sweepHTML   = "sweep.html"
)

// sweepJSON is profile_export_aiperf_sweep.json: AIPerf's sections in its order.
type sweepJSON struct {
	AggregationType   string                `json:"aggregation_type"`
	NumProfileRuns    int                   `json:"num_profile_runs"`
	NumSuccessfulRuns int                   `json:"num_successful_runs"`
	FailedRuns        []failedRun           `json:"failed_runs"`
	Metadata          sweepMeta             `json:"metadata"`
	PerCombination    []combination         `json:"per_combination_metrics"`
	Best              map[string]bestConfig `json:"best_configurations"`
	Pareto            []map[string]any      `json:"pareto_optimal"`
}

type sweepMeta struct {
	SweepParameters  []sweepParam `json:"sweep_parameters"`
	NumCombinations  int          `json:"num_combinations"`
	RunsPerPoint     int          `json:"num_profile_runs_per_point"`
	ConfidenceLevel  float64      `json:"confidence_level"`
	ParetoObjectives []string     `json:"pareto_objectives"`
	Tool             string       `json:"tool"`
	ToolVersion      string       `json:"tool_version"`
}

type sweepParam struct {
	Name   string `json:"name"`
	Values []any  `json:"values"`
}

type combination struct {
	Parameters     map[string]any            `json:"parameters"`
	Metrics        map[string]confidenceJSON `json:"metrics"`
	Valid          bool                      `json:"valid"`
	InvalidReasons []string                  `json:"invalid_reasons"`
	Pareto         bool                      `json:"pareto_optimal"`
	ArtifactDir    string                    `json:"artifact_dir"`
}

// sweepParams lists each swept parameter's values in the order first seen.
func sweepParams(points []*pointResult) []sweepParam {
	var out []sweepParam
	idx := map[string]int{}
	seen := map[string]bool{}
	for _, p := range points {
		for name, v := range params(p.point) {
			key := name + "=" + fmt.Sprint(v)
			i, ok := idx[name]
			if !ok {
				i = len(out)
				idx[name] = i
				out = append(out, sweepParam{Name: name})
			}
			if !seen[key] {
				seen[key] = true
				out[i].Values = append(out[i].Values, v)
			}
		}
	}
	// keep the flags' order: concurrency before request_rate
	if len(out) == 2 && out[0].Name == "request_rate" {
		out[0], out[1] = out[1], out[0]
	}
	return out
}

// writeSweep writes dir/aggregate/profile_export_aiperf_sweep.{json,csv} and prints the
// sweep table.
func (r *runner) writeSweep(dir string, points []*pointResult) error {
	out := filepath.Join(dir, aggregateDir)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("sweep aggregate: %w", err)
	}
	a := analyse(points)
	doc := sweepJSON{AggregationType: "sweep", FailedRuns: []failedRun{}, Best: a.best, Pareto: []map[string]any{}}
	doc.Metadata = sweepMeta{SweepParameters: sweepParams(points), NumCombinations: len(points), RunsPerPoint: r.o.Runs,
		ConfidenceLevel: r.o.Level, ParetoObjectives: []string{}, Tool: "llmbench", ToolVersion: version.String()}
	for _, o := range a.axes {
		doc.Metadata.ParetoObjectives = append(doc.Metadata.ParetoObjectives, objectiveName(o))
	}
	onPareto := map[int]bool{}
	for _, i := range a.pareto {
		onPareto[i] = true
		doc.Pareto = append(doc.Pareto, params(points[i].point))
	}
	for i, p := range points {
		ok, failed := p.runCounts()
		doc.NumProfileRuns += len(p.runs)
		doc.NumSuccessfulRuns += len(ok)
		rel, _ := filepath.Rel(dir, p.dir)
		for _, f := range failed {
			doc.FailedRuns = append(doc.FailedRuns, failedRun{rel + "/" + f.Label, f.Error})
		}
		c := combination{Parameters: params(p.point), Metrics: map[string]confidenceJSON{}, Valid: p.valid,
			InvalidReasons: nonNil(p.reasons), Pareto: onPareto[i], ArtifactDir: rel}
		for k, m := range p.metrics {
			c.Metrics[k] = toJSON(m)
		}
		doc.PerCombination = append(doc.PerCombination, c)
	}
	prefix := r.opts.ExportPrefix
	if err := writeJSON(filepath.Join(out, prefix+suffixSweep+".json"), doc); err != nil {
		return err
	}
	if err := export.WriteFileAtomic(filepath.Join(out, prefix+suffixSweep+".csv"), func(w io.Writer) error {
		return writeSweepCSV(w, doc, points)
	}); err != nil {
		return fmt.Errorf("sweep aggregate: %w", err)
	}
	r.printSweep(points, onPareto)
	fmt.Fprintf(r.stdout, "Sweep aggregate in %s: %s, %s\n", out, prefix+suffixSweep+".json", prefix+suffixSweep+".csv")
	r.sweepPage(dir, points, a)
	return nil
}

// writeSweepCSV writes AIPerf's four sections: the points (parameters, then mean, std, min,
// max and cv of every metric; our valid column after the parameters), the best
// configurations, the Pareto set and the metadata.
func writeSweepCSV(w io.Writer, doc sweepJSON, points []*pointResult) error {
	cw := csv.NewWriter(w)
	var names []string
	for _, sp := range doc.Metadata.SweepParameters {
		names = append(names, sp.Name)
	}
	keySet := map[string]bool{}
	for _, p := range points {
		for k := range p.metrics {
			keySet[k] = true
		}
	}
	keys := sortedKeys(keySet)
	header := append(append([]string{}, names...), "valid")
	for _, k := range keys {
		header = append(header, k+"_mean", k+"_std", k+"_min", k+"_max", k+"_cv")
	}
	cw.Write(header)
	pv := func(m map[string]any, n string) string {
		if v, ok := m[n]; ok {
			return fmt.Sprint(v)
		}
		return ""
	}
	for _, c := range doc.PerCombination {
		row := []string{}
		for _, n := range names {
			row = append(row, pv(c.Parameters, n))
		}
		row = append(row, strconv.FormatBool(c.Valid))
		for _, k := range keys {
			m, ok := c.Metrics[k]
			if !ok {
				row = append(row, "", "", "", "", "")
				continue
			}
			row = append(row, f2(float64(m.Mean)), f2(float64(m.Std)), f2(float64(m.Min)), f2(float64(m.Max)), f4(float64(m.CV)))
		}
		cw.Write(row)
	}
	cw.Write(nil)
	cw.Write([]string{"Best Configurations"})
	if len(doc.Best) > 0 {
		cw.Write(append(append([]string{"Configuration"}, names...), "Metric", "Unit"))
		for _, name := range sortedKeys(doc.Best) {
			b := doc.Best[name]
			row := []string{titleCase(name)}
			for _, n := range names {
				row = append(row, pv(b.Parameters, n))
			}
			cw.Write(append(row, f2(float64(b.Metric)), b.Unit))
		}
	}
	cw.Write(nil)
	cw.Write([]string{"Pareto Optimal Points"})
	if len(doc.Pareto) == 0 {
		cw.Write([]string{"None"})
	} else {
		cw.Write(names)
		for _, p := range doc.Pareto {
			row := []string{}
			for _, n := range names {
				row = append(row, pv(p, n))
			}
			cw.Write(row)
		}
	}
	cw.Write(nil)
	cw.Write([]string{"Metadata"})
	cw.Write([]string{"Field", "Value"})
	cw.Write([]string{"Aggregation Type", doc.AggregationType})
	cw.Write([]string{"Sweep Parameters", strings.Join(names, ", ")})
	cw.Write([]string{"Number of Combinations", strconv.Itoa(doc.Metadata.NumCombinations)})
	cw.Write([]string{"Number of Profile Runs", strconv.Itoa(doc.NumProfileRuns)})
	cw.Write([]string{"Number of Successful Runs", strconv.Itoa(doc.NumSuccessfulRuns)})
	cw.Flush()
	return cw.Error()
}

// titleCase is Python's "best_latency_p99".replace("_", " ").title(): "Best Latency P99".
func titleCase(s string) string {
	words := strings.Split(s, "_")
	for i, w := range words {
		if w != "" {
			words[i] = strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return strings.Join(words, " ")
}

// sweepColumns are the sweep table's metric columns.
var sweepColumns = []struct{ head, key string }{
	{"TTFT p50 ms", "time_to_first_token_p50"}, {"TTFT p99 ms", "time_to_first_token_p99"},
	{"ITL p50 ms", "inter_token_latency_p50"}, {"E2E p99 ms", "request_latency_p99"},
	{"req/s", "request_throughput_avg"}, {"out tok/s", "output_token_throughput_avg"},
	{"tok/s/user", "output_token_throughput_per_user_avg"},
}

// printSweep prints one line per point: its parameters, validity and headline means.
func (r *runner) printSweep(points []*pointResult, onPareto map[int]bool) {
	fmt.Fprintf(r.stdout, "\nSweep: %d points (means over each point's valid runs; runs: valid/made; * Pareto-optimal; invalid points are never best)\n", len(points))
	tw := tabwriter.NewWriter(r.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "point\tvalid\truns\t")
	for _, c := range sweepColumns {
		fmt.Fprintf(tw, "%s\t", c.head)
	}
	fmt.Fprintln(tw, "pareto\t")
	for i, p := range points {
		ok, _ := p.runCounts()
		fmt.Fprintf(tw, "%s\t%v\t%d/%d\t", Describe(p.point), p.valid, len(ok), len(p.runs))
		for _, c := range sweepColumns {
			v := p.value(c.key)
			if math.IsNaN(v) {
				fmt.Fprint(tw, "-\t")
			} else {
				fmt.Fprintf(tw, "%s\t", f2(v))
			}
		}
		mark := ""
		if onPareto[i] {
			mark = "*"
		}
		fmt.Fprintf(tw, "%s\t\n", mark)
	}
	tw.Flush()
	for _, p := range points {
		if line := p.verdict.Line(len(p.runs)); line != "" {
			fmt.Fprintf(r.stdout, "invalid %s: %s\n", Describe(p.point), line)
		}
	}
}

// sweepPage writes dir/aggregate/sweep.html, the sweep page of the HTML report (package
// report: TTFT against throughput, the Pareto set on its axes, the best configurations): it
// draws the aggregate's own values, each point's means over its valid runs, the Pareto set
// and the best configurations of a (what the JSON and the console say), and one run per
// point in its runs table: the first valid run, else the first analysed one with what is
// wrong with it. A grid of two swept flags has no one axis and gets no page; a page that
// cannot be written is said on stderr and does not fail the sweep, whose JSON and CSV hold
// everything.
func (r *runner) sweepPage(dir string, points []*pointResult, a sweepAnalysis) {
	var runs []report.Run
	parameter := ""
	for _, p := range points {
		if len(p.point) != 1 {
			return
		}
		parameter = p.point[0].Name
		if run, ok := pageRun(p); ok {
			runs = append(runs, run)
		}
	}
	if len(runs) < 2 {
		return
	}
	path := filepath.Join(dir, aggregateDir, sweepHTML)
	sw := pageSweep(parameter, points, a)
	err := export.WriteFileAtomic(path, func(w io.Writer) error { return report.WriteSweep(w, "", runs, sw) })
	if err != nil {
		r.say(fmt.Errorf("sweep page %s: %w", path, err))
		return
	}
	fmt.Fprintf(r.stdout, "Sweep page: %s\n", path)
}

// pageSweep is the sweep of the page: the points' aggregate means (report.NewSweep), the
// Pareto set and the best configurations of a, the aggregate's, so the page and the JSON
// cannot differ.
func pageSweep(parameter string, points []*pointResult, a sweepAnalysis) *report.Sweep {
	in := make([]report.SweepInput, len(points))
	for i, p := range points {
		vals, units := map[string]float64{}, map[string]string{}
		for k, m := range p.metrics {
			vals[k], units[k] = m.c.Mean, m.unit
		}
		saturated, gpus := false, 0
		for _, run := range p.runs {
			saturated = saturated || run.check.Has(sweep.Schedule)
			if run.s != nil && gpus == 0 {
				gpus = len(run.s.GPUs)
			}
		}
		in[i] = report.SweepInput{Name: filepath.Base(p.dir), Value: p.point[0].Value, Values: vals, Units: units, GPUs: gpus,
			Valid: p.valid, Saturated: saturated, Failed: !p.valid && !saturated}
	}
	sw := report.NewSweep(parameter, in)
	onPareto := map[int]bool{}
	for _, i := range a.pareto {
		onPareto[i] = true
	}
	for i := range sw.Points {
		sw.Points[i].Pareto = onPareto[i]
	}
	sw.ParetoObjectives = sw.ParetoObjectives[:0]
	for _, o := range a.axes {
		sw.ParetoObjectives = append(sw.ParetoObjectives, objectiveName(o))
	}
	sw.Best = sw.Best[:0]
	for _, name := range sortedKeys(a.best) {
		b := a.best[name]
		sw.Best = append(sw.Best, report.SweepBest{Name: name, Point: in[b.point].Name, Value: in[b.point].Value, Metric: b.key,
			Result: report.Number(b.Metric), Unit: b.Unit})
	}
	return sw
}

// objectiveName is a Pareto axis as the JSON's metadata names it: "<key>:maximize".
func objectiveName(o sweep.Objective) string {
	if o.Maximize {
		return o.Key + ":maximize"
	}
	return o.Key + ":minimize"
}

// pageRun is the run that stands for point p on the sweep page: its first valid run, else
// its first analysed run, carrying its problems other than the schedule (the page flags a
// saturated client itself).
func pageRun(p *pointResult) (report.Run, bool) {
	var fallback *runResult
	for i := range p.runs {
		run := &p.runs[i]
		if run.valid() {
			return report.Run{Name: filepath.Base(p.dir), Summary: run.s}, true
		}
		if fallback == nil && run.s != nil {
			fallback = run
		}
	}
	if fallback == nil {
		return report.Run{}, false
	}
	out := report.Run{Name: filepath.Base(p.dir), Summary: fallback.s}
	for _, pr := range fallback.check.Problems {
		if pr.Kind != sweep.Schedule {
			out.Problems = append(out.Problems, pr.Text)
		}
	}
	return out, true
}
