package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/sweep"
)

// Sweep is a set of runs that are points of a concurrency or request-rate sweep, with the
// values the console and profile's sweep aggregate (profile_export_aiperf_sweep.json) have:
// each point's aggregate means, the Pareto set and the best configurations chosen on them by
// sweep.ParetoAxes and sweep.BestObjectives. A page draws these values; it computes none.
type Sweep struct {
	// Parameter is "concurrency" or "request_rate".
	Parameter string       `json:"parameter"`
	Points    []SweepPoint `json:"points"`
	// PerGPU says the Pareto chart's throughput is per GPU (every point had the same number
	// of GPUs in its telemetry, so dividing by it moves no point across the frontier).
	PerGPU bool `json:"per_gpu"`
	// ParetoObjectives are the Pareto set's axes, "<key>:maximize" or "<key>:minimize"
	// (metadata.pareto_objectives of the sweep JSON); empty when no pair could be compared.
	ParetoObjectives []string `json:"pareto_objectives"`
	// Best are the best configurations (best_configurations of the sweep JSON), by name.
	Best []SweepBest `json:"best_configurations"`
}

// SweepBest is one best configuration: the point (by name and parameter value) whose
// Metric (an aggregate key) is best, and its value.
type SweepBest struct {
	Name   string  `json:"name"`
	Point  string  `json:"point"`
	Value  float64 `json:"value"`
	Metric string  `json:"metric"`
	Result Number  `json:"result"`
	Unit   string  `json:"unit"`
}

// SweepPoint is one point of a sweep: the means over its valid runs of the aggregate keys
// (analyze.AggregateKeys; a point of one run has that run's values).
type SweepPoint struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	// OutputTPS is output_token_throughput_avg; OutputTPSPerGPU the same divided by the GPUs
	// the run's telemetry saw (null without telemetry).
	OutputTPS       Number `json:"output_token_throughput"`
	OutputTPSPerGPU Number `json:"output_token_throughput_per_gpu"`
	GPUs            int    `json:"gpus"`
	// TPSUserAvg is output_token_throughput_per_user_avg, the Pareto axis; TPSUser its median
	// (shown, not chosen on).
	TPSUserAvg Number `json:"output_token_throughput_per_user_avg"`
	TPSUser    Number `json:"output_token_throughput_per_user_p50"`
	TTFTP50    Number `json:"time_to_first_token_p50"`
	TTFTP99    Number `json:"time_to_first_token_p99"`
	// RequestThroughput and RequestLatencyP99 are the other Pareto pair's axes.
	RequestThroughput Number `json:"request_throughput"`
	RequestLatencyP99 Number `json:"request_latency_p99"`
	// Pareto marks the points no other point beats on both of ParetoObjectives; a saturated
	// or failed point is never on it, nor beats one that is.
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

// SweepInput is one point of a sweep as NewSweep takes it: its aggregate keys' values.
type SweepInput struct {
	Name  string
	Value float64
	// Values are the point's aggregate keys (<tag>_<stat>: the mean over its valid runs);
	// Units their units.
	Values map[string]float64
	Units  map[string]string
	GPUs   int
	// Valid: the point counts (sweep.Point.Valid); Saturated and Failed say why not.
	Valid, Saturated, Failed bool
}

// NewSweep is the sweep of points over parameter, in the given order, with its Pareto set
// and best configurations chosen among the valid points by sweep.ParetoFront and
// sweep.BestPoints on sweep.ParetoAxes and sweep.BestObjectives: the one computation
// profile's aggregate and compare's sweep share.
func NewSweep(parameter string, points []SweepInput) *Sweep {
	sw := &Sweep{Parameter: parameter, PerGPU: len(points) > 0, ParetoObjectives: []string{}, Best: []SweepBest{}}
	values, ok := make([]map[string]float64, len(points)), make([]bool, len(points))
	for i, in := range points {
		values[i], ok[i] = in.Values, in.Valid
		get := func(k string) Number {
			if v, has := in.Values[k]; has {
				return Number(v)
			}
			return Number(math.NaN())
		}
		p := SweepPoint{Name: in.Name, Value: in.Value, OutputTPS: get("output_token_throughput_avg"), OutputTPSPerGPU: Number(math.NaN()),
			GPUs: in.GPUs, TPSUserAvg: get("output_token_throughput_per_user_avg"), TPSUser: get("output_token_throughput_per_user_p50"),
			TTFTP50: get("time_to_first_token_p50"), TTFTP99: get("time_to_first_token_p99"), RequestThroughput: get("request_throughput_avg"),
			RequestLatencyP99: get("request_latency_p99"), Saturated: in.Saturated, Failed: in.Failed}
		if p.GPUs > 0 {
			p.OutputTPSPerGPU = p.OutputTPS / Number(p.GPUs)
		}
		if p.GPUs == 0 || p.GPUs != points[0].GPUs {
			sw.PerGPU = false
		}
		sw.Points = append(sw.Points, p)
	}
	front, axes := sweep.ParetoFront(values, ok, sweep.ParetoAxes)
	for _, i := range front {
		sw.Points[i].Pareto = true
	}
	for _, o := range axes {
		dir := "minimize"
		if o.Maximize {
			dir = "maximize"
		}
		sw.ParetoObjectives = append(sw.ParetoObjectives, o.Key+":"+dir)
	}
	best := sweep.BestPoints(values, ok, sweep.BestObjectives)
	names := make([]string, 0, len(best))
	for name := range best {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		b := best[name]
		sw.Best = append(sw.Best, SweepBest{Name: name, Point: points[b.Point].Name, Value: points[b.Point].Value,
			Metric: b.Objective.Key, Result: Number(b.Value), Unit: points[b.Point].Units[b.Objective.Key]})
	}
	return sw
}

// BuildSweep makes the sweep of runs over parameter ("concurrency" or "request_rate"),
// points in the parameter's order, each run a point of one run (NewSweep). Runs need only
// their summaries; a run with problems or a saturated client is not valid.
func BuildSweep(runs []Run, parameter string) *Sweep {
	runs = slices.Clone(runs)
	param := func(r Run) float64 {
		if parameter == "concurrency" {
			return float64(r.Summary.Concurrency)
		}
		return r.Summary.OfferedRate
	}
	slices.SortStableFunc(runs, func(a, b Run) int { return cmpFloat(param(a), param(b)) })
	in := make([]SweepInput, len(runs))
	for i, r := range runs {
		s := r.Summary
		vals, units := map[string]float64{}, map[string]string{}
		for k, kv := range analyze.AggregateKeys(s) {
			vals[k], units[k] = kv.V, kv.Unit
		}
		saturated, failed := s.Verdict.Known && !s.Verdict.Kept, len(r.Problems) > 0
		in[i] = SweepInput{Name: r.Name, Value: param(r), Values: vals, Units: units, GPUs: len(s.GPUs),
			Valid: !saturated && !failed, Saturated: saturated, Failed: failed}
	}
	return NewSweep(parameter, in)
}

func finite(n Number) bool { return !math.IsNaN(float64(n)) && !math.IsInf(float64(n), 0) }

// sweepCharts are TTFT against throughput and the Pareto set on its axes (sw.ParetoObjectives:
// mean per-user speed against total speed, else request latency p99 against requests/s),
// the frontier joining the points sw marks Pareto-optimal.
func sweepCharts(sw *Sweep) []Chart {
	pts := slices.Clone(sw.Points)
	slices.SortStableFunc(pts, func(a, b SweepPoint) int { return cmpFloat(float64(a.OutputTPS), float64(b.OutputTPS)) })
	var x, p50, p99 column
	for _, p := range pts {
		if finite(p.OutputTPS) {
			x, p50, p99 = append(x, float64(p.OutputTPS)), append(p50, float64(p.TTFTP50)), append(p99, float64(p.TTFTP99))
		}
	}
	param := strings.ReplaceAll(sw.Parameter, "_", " ")
	var out []Chart
	if len(x) > 0 {
		out = append(out, Chart{ID: "sweep_ttft_throughput", Section: "Sweep", Title: "Time to first token against throughput",
			Caption: fmt.Sprintf("One point per point of the %s sweep: where the curve turns up, more load buys latency instead of throughput (the knee).", param),
			X:       Axis{Label: "output tokens/s"}, Y: Axis{Label: "ms"},
			Series: []Series{{Label: "TTFT p50", Style: "linepoints"}, {Label: "TTFT p99", Style: "linepoints"}}, Data: []column{x, p50, p99}})
	}
	if len(sw.ParetoObjectives) != 2 {
		return out
	}
	tokens := strings.HasPrefix(sw.ParetoObjectives[0], "output_token_throughput_avg:")
	var px, py, fy column
	for _, p := range pts {
		a, b := p.OutputTPS, p.TPSUserAvg
		if sw.PerGPU {
			a = p.OutputTPSPerGPU
		}
		if !tokens {
			a, b = p.RequestThroughput, p.RequestLatencyP99
		}
		if !finite(a) || !finite(b) {
			continue
		}
		f := math.NaN()
		if p.Pareto {
			f = float64(b)
		}
		px, py, fy = append(px, float64(a)), append(py, float64(b)), append(fy, f)
	}
	if len(px) == 0 {
		return out
	}
	title, xl, yl := "Per-user speed against throughput", "output tokens/s", "tokens/s/user"
	caption := "Interactivity (mean output tokens/s per user) against total output tokens/s"
	if sw.PerGPU {
		title, xl = title+" per GPU", "output tokens/s per GPU"
		caption += " per GPU"
	}
	if !tokens {
		title, xl, yl = "Request latency p99 against requests/s", "requests/s", "ms"
		caption = "Request latency p99 against requests/s (the run has no token throughput)"
	}
	caption += "; the line joins the Pareto-optimal points (the sweep JSON's pareto_optimal), which no other valid point beats on both."
	return append(out, Chart{ID: "sweep_pareto", Section: "Sweep", Title: title, Caption: caption,
		X: Axis{Label: xl}, Y: Axis{Label: yl},
		Series: []Series{{Label: "points", Style: "points"}, {Label: "Pareto frontier", Style: "line"}}, Data: sortedByX(px, py, fy)})
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
// of sw, the sweep as its aggregate computed it (profile's), drawn with runs, one run
// standing for each point in the runs table; a nil sw is the sweep runs form (DetectSweep).
// Runs need only their summaries: this is the page a sweep driver writes beside its
// aggregate.
func WriteSweep(w io.Writer, title string, runs []Run, sw *Sweep) error {
	if sw == nil {
		sw = DetectSweep(runs)
	}
	if sw == nil || len(runs) == 0 {
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
