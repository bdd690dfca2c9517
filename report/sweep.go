package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/llmbench/llmbench/sweep"
)

// Sweep is a set of runs that are points of a concurrency or request-rate sweep.
type Sweep struct {
	// Parameter is "concurrency" or "request_rate".
	Parameter string       `json:"parameter"`
	Points    []SweepPoint `json:"points"`
	// PerGPU says the Pareto's throughput is per GPU (every point had GPU telemetry).
	PerGPU bool `json:"per_gpu"`
}

// SweepPoint is one run of a sweep.
type SweepPoint struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	// OutputTPS is output_token_throughput; OutputTPSPerGPU the same divided by the GPUs
	// the run's telemetry saw (null without telemetry).
	OutputTPS       Number `json:"output_token_throughput"`
	OutputTPSPerGPU Number `json:"output_token_throughput_per_gpu"`
	GPUs            int    `json:"gpus"`
	// TPSUser is the median output_token_throughput_per_user.
	TPSUser Number `json:"output_token_throughput_per_user_p50"`
	TTFTP50 Number `json:"time_to_first_token_p50"`
	TTFTP99 Number `json:"time_to_first_token_p99"`
	// Pareto marks the points no other point beats on both throughput and per-user speed;
	// a saturated or failed point is never on it, nor beats one that is.
	Pareto    bool `json:"pareto"`
	Saturated bool `json:"saturated"`
	// Failed says the run has problems (Run.Problems: a crash, failed requests beyond the
	// bound): its numbers describe failures.
	Failed bool `json:"failed"`
}

// DetectSweep returns the sweep the runs form, nil when they do not: at least two runs of
// one model and endpoint whose concurrencies (else offered rates) are all different.
func DetectSweep(runs []Run) *Sweep {
	if len(runs) < 2 {
		return nil
	}
	for _, r := range runs[1:] {
		if r.Summary.Model != runs[0].Summary.Model || r.Summary.Endpoint != runs[0].Summary.Endpoint {
			return nil
		}
	}
	distinct := func(get func(Run) float64) bool {
		seen := map[float64]bool{}
		for _, r := range runs {
			v := get(r)
			if v <= 0 || seen[v] {
				return false
			}
			seen[v] = true
		}
		return true
	}
	switch {
	case distinct(func(r Run) float64 { return float64(r.Summary.Concurrency) }):
		return BuildSweep(runs, "concurrency")
	case distinct(func(r Run) float64 { return r.Summary.OfferedRate }):
		return BuildSweep(runs, "request_rate")
	}
	return nil
}

// BuildSweep makes the sweep of runs over parameter ("concurrency" or "request_rate"),
// points in the parameter's order. Runs need only their summaries.
func BuildSweep(runs []Run, parameter string) *Sweep {
	sw := &Sweep{Parameter: parameter, PerGPU: true}
	for _, r := range runs {
		s := r.Summary
		p := SweepPoint{Name: r.Name, Value: s.OfferedRate, OutputTPS: Number(value(s, "output_token_throughput")),
			OutputTPSPerGPU: Number(math.NaN()), GPUs: len(s.GPUs), TPSUser: Number(math.NaN()),
			TTFTP50: Number(math.NaN()), TTFTP99: Number(math.NaN()), Saturated: s.Verdict.Known && !s.Verdict.Kept, Failed: len(r.Problems) > 0}
		if parameter == "concurrency" {
			p.Value = float64(s.Concurrency)
		}
		if res, ok := s.Result("time_to_first_token"); ok && res.Stats != nil {
			p.TTFTP50, p.TTFTP99 = Number(res.Stats.P[4]), Number(res.Stats.P[8])
		}
		if res, ok := s.Result("output_token_throughput_per_user"); ok && res.Stats != nil {
			p.TPSUser = Number(res.Stats.P[4])
		}
		if p.GPUs > 0 {
			p.OutputTPSPerGPU = p.OutputTPS / Number(p.GPUs)
		} else {
			sw.PerGPU = false
		}
		sw.Points = append(sw.Points, p)
	}
	slices.SortStableFunc(sw.Points, func(a, b SweepPoint) int { return cmpFloat(a.Value, b.Value) })
	vecs, ok := make([][]float64, len(sw.Points)), make([]bool, len(sw.Points))
	for i, p := range sw.Points {
		vecs[i] = []float64{float64(p.OutputTPS), float64(p.TPSUser)}
		ok[i] = !p.Failed && !p.Saturated && finite(p.OutputTPS) && finite(p.TPSUser)
	}
	for _, i := range sweep.Pareto(vecs, []bool{true, true}, ok) {
		sw.Points[i].Pareto = true
	}
	return sw
}

func finite(n Number) bool { return !math.IsNaN(float64(n)) && !math.IsInf(float64(n), 0) }

// sweepCharts are TTFT against throughput and the Pareto of per-user against total speed.
func sweepCharts(sw *Sweep) []Chart {
	pts := slices.Clone(sw.Points)
	slices.SortStableFunc(pts, func(a, b SweepPoint) int { return cmpFloat(float64(a.OutputTPS), float64(b.OutputTPS)) })
	var x, p50, p99, px, py, fy column
	for _, p := range pts {
		if !finite(p.OutputTPS) {
			continue
		}
		x, p50, p99 = append(x, float64(p.OutputTPS)), append(p50, float64(p.TTFTP50)), append(p99, float64(p.TTFTP99))
		tp := p.OutputTPS
		if sw.PerGPU {
			tp = p.OutputTPSPerGPU
		}
		px, py = append(px, float64(tp)), append(py, float64(p.TPSUser))
		f := math.NaN()
		if p.Pareto {
			f = float64(p.TPSUser)
		}
		fy = append(fy, f)
	}
	if len(x) == 0 {
		return nil
	}
	param := strings.ReplaceAll(sw.Parameter, "_", " ")
	perGPU, tpLabel := "", "output tokens/s"
	if sw.PerGPU {
		perGPU, tpLabel = " per GPU", "output tokens/s per GPU"
	}
	return []Chart{
		{ID: "sweep_ttft_throughput", Section: "Sweep", Title: "Time to first token against throughput",
			Caption: fmt.Sprintf("One point per run of the %s sweep: where the curve turns up, more load buys latency instead of throughput (the knee).", param),
			X:       Axis{Label: "output tokens/s"}, Y: Axis{Label: "ms"},
			Series: []Series{{Label: "TTFT p50", Style: "linepoints"}, {Label: "TTFT p99", Style: "linepoints"}}, Data: []column{x, p50, p99}},
		{ID: "sweep_pareto", Section: "Sweep", Title: "Per-user speed against throughput" + perGPU,
			Caption: "Interactivity (median output tokens/s per user) against total output tokens/s" + perGPU + "; the line joins the Pareto-optimal runs, which no other run beats on both.",
			X:       Axis{Label: tpLabel}, Y: Axis{Label: "tokens/s/user"},
			Series: []Series{{Label: "runs", Style: "points"}, {Label: "Pareto frontier", Style: "line"}}, Data: sortedByX(px, py, fy)},
	}
}

// sortedByX sorts the columns by x (uPlot wants x ascending).
func sortedByX(x column, ys ...column) []column {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmpFloat(x[a], x[b]) })
	out := []column{make(column, len(x))}
	for range ys {
		out = append(out, make(column, len(x)))
	}
	for i, j := range idx {
		out[0][i] = x[j]
		for k, y := range ys {
			out[k+1][i] = y[j]
		}
	}
	return out
}

// SweepPage is the sweep page's data: the runs and the sweep charts.
type SweepPage = ComparePage

// WriteSweep writes the sweep page (compare.html's layout, without per-request statistics)
// of runs over parameter ("concurrency" or "request_rate"; "" detects it). Runs need only
// their summaries: this is the page a sweep driver writes beside its aggregate.
func WriteSweep(w io.Writer, title string, runs []Run, parameter string) error {
	var sw *Sweep
	if parameter == "" {
		sw = DetectSweep(runs)
	} else if len(runs) > 0 {
		sw = BuildSweep(runs, parameter)
	}
	if sw == nil {
		return fmt.Errorf("report: sweep page: the %d runs are not points of one concurrency or request-rate sweep", len(runs))
	}
	if title == "" {
		title = "llmbench sweep over " + strings.ReplaceAll(sw.Parameter, "_", " ")
	}
	rows := runRows(runs)
	p := &ComparePage{Version: CompareVersion, Kind: "compare", Title: title, Baseline: rows[0].Name, Alpha: 0.05,
		MinEffectPct: DefaultMinEffectPct, Warnings: warnings(rows), Runs: rows, Metrics: []MetricCompare{},
		Regressions: []Regression{}, Sweep: sw, Charts: sweepCharts(sw)}
	return writePage(w, title, p)
}
