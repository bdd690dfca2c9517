package profile

import (
	"math"
	"path/filepath"
	"strings"

	"github.com/llmbench/llmbench/sweep"
)

// The search's artifact: search_history.json (AIPerf's fields, then ours), beside the sweep
// aggregate over its probes.

// searchHistory is the search's file name (AIPerf's), beside the aggregate directory.
const searchHistory = "search_history.json"

// probeRecord is one probe as search_history.json gives it: AIPerf's iteration fields, then ours.
type probeRecord struct {
	Index           int             `json:"iteration_idx"`
	Values          map[string]any  `json:"variation_values"`
	ObjectiveValues []jnum          `json:"objective_values"`
	Feasible        bool            `json:"feasible"`
	NonMonotonic    bool            `json:"non_monotonic_warning"`
	Outcome         string          `json:"outcome"` // pass, fail or abort
	Reason          string          `json:"reason,omitempty"`
	SLAResults      []slaResult     `json:"sla_results"`
	Valid           bool            `json:"valid"`
	InvalidReasons  []string        `json:"invalid_reasons"`
	Metrics         map[string]jnum `json:"metrics"`
	ArtifactDir     string          `json:"artifact_dir"`
}

// slaResult is one SLA on one probe: the mean over its runs, and whether every run met it.
type slaResult struct {
	SLA      string `json:"sla"`
	Observed jnum   `json:"observed"`
	OK       bool   `json:"ok"`
}

// historyJSON is search_history.json: AIPerf's fields, then ours.
type historyJSON struct {
	Config            historyConfig `json:"config"`
	Iterations        []probeRecord `json:"iterations"`
	BoundarySummary   *boundary     `json:"boundary_summary"`
	Recipe            string        `json:"recipe"`
	ConvergenceReason string        `json:"convergence_reason"`
	Boundary          *jnum         `json:"boundary"` // the answer; null when the search found none
}

type historyConfig struct {
	Planner       string              `json:"planner"`
	SearchSpace   []searchSpace       `json:"search_space"`
	SLAFilters    []slaFilter         `json:"sla_filters"`
	MaxIterations int                 `json:"max_iterations"`
	Precision     float64             `json:"precision"`
	Objectives    []map[string]string `json:"objectives"`
}

type searchSpace struct {
	Path string  `json:"path"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
	Kind string  `json:"kind"`
}

type slaFilter struct {
	MetricTag string  `json:"metric_tag"`
	Stat      string  `json:"stat"`
	Op        string  `json:"op"`
	Threshold float64 `json:"threshold"`
}

type boundary struct {
	Path          string     `json:"swept_dim_path"`
	FeasibleMax   *bracketAt `json:"feasible_max"`
	InfeasibleMin *bracketAt `json:"infeasible_min"`
}

type bracketAt struct {
	Value float64 `json:"value"`
	Index int     `json:"iteration_idx"`
}

// writeSearch writes dir/search_history.json.
func (r *runner) writeSearch(dir string, res sweep.SearchResult, records []probeRecord) error {
	o := r.o
	name := strings.ReplaceAll(o.Dimension, "-", "_")
	kind := "float"
	if o.Bounds.Integer {
		kind = "int"
	}
	planner := "monotonic"
	if o.Search == SearchMaxGoodput {
		planner = "peak"
	}
	h := historyJSON{Iterations: records, Recipe: o.Search, ConvergenceReason: res.Reason}
	if h.Iterations == nil {
		h.Iterations = []probeRecord{}
	}
	h.Config = historyConfig{Planner: planner, SearchSpace: []searchSpace{{name, o.Bounds.Min, o.Bounds.Max, kind}},
		SLAFilters: []slaFilter{}, MaxIterations: o.Bounds.MaxIterations, Precision: o.Bounds.Precision, Objectives: []map[string]string{}}
	for _, g := range o.SLAs {
		h.Config.SLAFilters = append(h.Config.SLAFilters, slaFilter{g.SLA.Metric, g.SLA.Stat, g.SLA.Op, g.SLA.Value})
	}
	h.Config.SLAFilters = append(h.Config.SLAFilters, slaFilter{"error_rate", "avg", "<=", r.opts.MaxErrorRate})
	if o.Search == SearchMaxGoodput {
		h.Config.Objectives = append(h.Config.Objectives, map[string]string{"metric": "goodput", "stat": "avg", "direction": "MAXIMIZE"})
	}
	at := func(v float64) *bracketAt {
		if math.IsNaN(v) {
			return nil
		}
		for _, p := range res.Probes {
			if p.Value == v {
				return &bracketAt{v, p.Index}
			}
		}
		return &bracketAt{Value: v, Index: -1}
	}
	if len(res.Probes) > 0 {
		h.BoundarySummary = &boundary{Path: name, FeasibleMax: at(res.FeasibleMax), InfeasibleMin: at(res.InfeasibleMin)}
	}
	if res.Found {
		b := jnum(res.Boundary)
		h.Boundary = &b
	}
	return writeJSON(filepath.Join(dir, searchHistory), h)
}
