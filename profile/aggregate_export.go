package profile

import (
	"encoding/csv"
	"encoding/json"
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
)

// The repeats' artifacts (AIPerf's multi-run files): the confidence aggregate (JSON and CSV)
// and the collated (pooled) JSON in dir/aggregate, and the confidence table on stdout. The
// loop that runs the repeats and the statistics they report are repeat.go's; the sweep's
// and the search's files (sweep_export.go, search_export.go) share the encoders here.

// The aggregate files beside a point's repeats, and AIPerf's names and versions for them.
const (
	aggregateDir  = "aggregate"
	suffixAgg     = "_aiperf_aggregate"
	suffixPooled  = "_aiperf_collated.json"
	schemaAgg     = "1.0"   // AIPerf's aggregate-confidence SCHEMA_VERSION
	schemaPooled  = "1.0.0" // AIPerf's detailed (collated) aggregate schema_version
	aggConfidence = "confidence"
	aggDetailed   = "detailed"
)

// jnum is a number in the aggregate files: NaN and infinities are written as null, as
// AIPerf's orjson writes them.
type jnum float64

func (n jnum) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

// confidenceJSON is one metric of profile_export_aiperf_aggregate.json.
type confidenceJSON struct {
	Mean      jnum   `json:"mean"`
	Std       jnum   `json:"std"`
	Min       jnum   `json:"min"`
	Max       jnum   `json:"max"`
	CV        jnum   `json:"cv"`
	SE        jnum   `json:"se"`
	CILow     jnum   `json:"ci_low"`
	CIHigh    jnum   `json:"ci_high"`
	TCritical jnum   `json:"t_critical"`
	Unit      string `json:"unit"`
	// Count is how many runs the statistics were taken over (ours): the valid runs that
	// have a value of the metric.
	Count int `json:"count"`
}

func toJSON(m metricAgg) confidenceJSON {
	c := m.c
	return confidenceJSON{jnum(c.Mean), jnum(c.Std), jnum(c.Min), jnum(c.Max), jnum(c.CV), jnum(c.SE), jnum(c.CILow), jnum(c.CIHigh), jnum(c.TCritical), m.unit, c.N}
}

// failedRun is an entry of failed_runs.
type failedRun struct {
	Label string `json:"label"`
	Error string `json:"error"`
}

// writeAggregate writes the point's multi-run files into dir/aggregate: AIPerf's confidence
// aggregate (JSON and CSV) and the pooled analysis of every request of every run.
func (r *runner) writeAggregate(p *pointResult) error {
	out := filepath.Join(p.dir, aggregateDir)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("aggregate: %w", err)
	}
	prefix := r.opts.ExportPrefix
	labels, failed := p.runCounts()
	meta := map[string]any{
		"aggregation_type": aggConfidence, "num_profile_runs": len(p.runs), "num_successful_runs": len(labels),
		"failed_runs": failed, "confidence_level": r.o.Level, "run_labels": labels,
		"valid": p.valid, "invalid_reasons": nonNil(p.reasons),
	}
	if len(labels) == 1 {
		meta["single_run"] = true
	}
	if p.converged != "" {
		meta["converged"] = p.converged
	}
	metrics := map[string]confidenceJSON{}
	for k, m := range p.metrics {
		metrics[k] = toJSON(m)
	}
	doc := map[string]any{"schema_version": schemaAgg, "tool": "llmbench", "tool_version": version.String(), "metadata": meta, "metrics": metrics}
	if err := writeJSON(filepath.Join(out, prefix+suffixAgg+".json"), doc); err != nil {
		return err
	}
	err := export.WriteFileAtomic(filepath.Join(out, prefix+suffixAgg+".csv"), func(w io.Writer) error {
		cw := csv.NewWriter(w)
		cw.Write([]string{"metric", "mean", "std", "min", "max", "cv", "se", "ci_low", "ci_high", "t_critical", "unit"})
		for _, k := range sortedKeys(p.metrics) {
			m := p.metrics[k]
			c := m.c
			cw.Write([]string{k, f2(c.Mean), f2(c.Std), f2(c.Min), f2(c.Max), f4(c.CV), f4(c.SE), f2(c.CILow), f2(c.CIHigh), f4(c.TCritical), m.unit})
		}
		cw.Write(nil)
		cw.Write([]string{"Aggregation Type", aggConfidence})
		cw.Write([]string{"Total Runs", strconv.Itoa(len(p.runs))})
		cw.Write([]string{"Successful Runs", strconv.Itoa(len(labels))})
		cw.Write([]string{"Confidence Level", strconv.FormatFloat(r.o.Level, 'g', -1, 64)})
		cw.Write([]string{"Run Labels", strings.Join(labels, ", ")})
		cw.Flush()
		return cw.Error()
	})
	if err != nil {
		return fmt.Errorf("aggregate: %w", err)
	}
	pooled, note := r.pooled(p)
	pmeta := map[string]any{"aggregation_type": aggDetailed, "num_profile_runs": len(p.runs), "num_successful_runs": len(labels),
		"failed_runs": failed, "run_labels": labels}
	if note != "" {
		pmeta["note"] = note
	}
	if err := writeJSON(filepath.Join(out, prefix+suffixPooled), map[string]any{"schema_version": schemaPooled, "tool": "llmbench",
		"tool_version": version.String(), "metadata": pmeta, "metrics": pooled}); err != nil {
		return err
	}
	r.printConfidence(p)
	fmt.Fprintf(r.stdout, "Aggregate over %d of %d runs in %s: %s, %s, %s\n", len(labels), len(p.runs), out, prefix+suffixAgg+".json", prefix+suffixAgg+".csv", prefix+suffixPooled)
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func f2(v float64) string { return fmtNum(v, 2) }

func f4(v float64) string { return fmtNum(v, 4) }

// fmtNum formats a CSV number as AIPerf does: fixed decimals, inf, empty for NaN.
func fmtNum(v float64, decimals int) string {
	switch {
	case math.IsNaN(v):
		return ""
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return strconv.FormatFloat(v, 'f', decimals, 64)
}

// writeJSON writes v indented, atomically.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := export.WriteFileAtomic(path, func(w io.Writer) error { _, err := w.Write(append(b, '\n')); return err }); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// pooledMetric is one metric of the collated file: the statistics of every request of every
// run together, and each run's mean and count (AIPerf's detailed aggregation).
type pooledMetric struct {
	Combined pooledStats `json:"combined"`
	PerRun   []perRun    `json:"per_run"`
	Unit     string      `json:"unit"`
}

type pooledStats struct {
	Mean  jnum `json:"mean"`
	Std   jnum `json:"std"` // sample standard deviation (n−1), as AIPerf's
	P50   jnum `json:"p50"`
	P90   jnum `json:"p90"`
	P95   jnum `json:"p95"`
	P99   jnum `json:"p99"`
	Count int  `json:"count"`
}

type perRun struct {
	Label string `json:"label"`
	Mean  jnum   `json:"mean"`
	Count int    `json:"count"`
}

// headline are the aggregate keys printed after repeated runs, when present.
var headline = []string{"time_to_first_token_avg", "time_to_first_token_p99", "inter_token_latency_avg", "request_latency_avg",
	"request_latency_p99", "output_token_throughput_avg", "output_token_throughput_per_user_avg", "request_throughput_avg", "goodput_avg"}

// printConfidence prints the headline metrics' confidence intervals.
func (r *runner) printConfidence(p *pointResult) {
	labels, _ := p.runCounts()
	over := fmt.Sprintf("%d runs", len(labels))
	if len(labels) != len(p.runs) {
		over = fmt.Sprintf("%d of %d runs, the valid ones", len(labels), len(p.runs))
	}
	fmt.Fprintf(r.stdout, "\nConfidence over %s (%s%% Student-t intervals; runs: how many each metric was taken over):\n", over, strconv.FormatFloat(r.o.Level*100, 'g', -1, 64))
	tw := tabwriter.NewWriter(r.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "Metric\truns\tmean\tstd\tcv\tci_low\tci_high\t")
	for _, k := range headline {
		m, ok := p.metrics[k]
		if !ok {
			continue
		}
		c := m.c
		fmt.Fprintf(tw, "%s (%s)\t%d\t%s\t%s\t%s\t%s\t%s\t\n", k, m.unit, c.N, f2(c.Mean), f2(c.Std), f4(c.CV), f2(c.CILow), f2(c.CIHigh))
	}
	tw.Flush()
	if len(labels) == 0 {
		fmt.Fprintln(r.stdout, "(no valid run: nothing to aggregate)")
	}
}
