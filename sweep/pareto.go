package sweep

import "math"

// Pareto returns, in input order, the indices of the points no other point dominates. A
// point is a vector of objective values, maximize[k] saying whether objective k is better
// larger; a dominates b when it is at least as good on every objective and better on one
// (AIPerf's rule). Only points with ok[i] take part (nil ok: all), and a point with a NaN
// objective is left out: it cannot be compared.
func Pareto(points [][]float64, maximize []bool, ok []bool) []int {
	usable := func(i int) bool {
		if ok != nil && !ok[i] {
			return false
		}
		for _, v := range points[i] {
			if math.IsNaN(v) {
				return false
			}
		}
		return true
	}
	var out []int
	for i := range points {
		if !usable(i) {
			continue
		}
		dominated := false
		for j := range points {
			if j != i && usable(j) && dominates(points[j], points[i], maximize) {
				dominated = true
				break
			}
		}
		if !dominated {
			out = append(out, i)
		}
	}
	return out
}

// dominates reports whether a is at least as good as b everywhere and better somewhere.
func dominates(a, b []float64, maximize []bool) bool {
	better := false
	for k := range a {
		x, y := a[k], b[k]
		if !maximize[k] {
			x, y = -x, -y
		}
		if x < y {
			return false
		}
		if x > y {
			better = true
		}
	}
	return better
}

// Best returns the index of the best of values (the largest when maximize, else the
// smallest) among those with ok[i] (nil ok: all), NaN left out; the first wins a tie. It
// returns -1 when no value takes part.
func Best(values []float64, maximize bool, ok []bool) int {
	best := -1
	for i, v := range values {
		if (ok != nil && !ok[i]) || math.IsNaN(v) {
			continue
		}
		if best < 0 || (maximize && v > values[best]) || (!maximize && v < values[best]) {
			best = i
		}
	}
	return best
}

// BestObjectives are a sweep's best configurations, by the aggregate keys of its points
// (<tag>_<stat>, the mean over a point's valid runs): AIPerf's best_throughput and
// best_latency_p99 (TTFT p99, else request latency p99), and the two token throughputs.
// profile's sweep aggregate and every page that shows a sweep choose by these.
var BestObjectives = []Objective{
	{Name: "best_throughput", Key: "request_throughput_avg", Maximize: true},
	{Name: "best_latency_p99", Key: "time_to_first_token_p99"},
	{Name: "best_latency_p99", Key: "request_latency_p99"},
	{Name: "best_output_token_throughput", Key: "output_token_throughput_avg", Maximize: true},
	{Name: "best_output_token_throughput_per_user", Key: "output_token_throughput_per_user_avg", Maximize: true},
}

// ParetoAxes are the axes of a sweep's Pareto set, the first pair some valid point has
// (ParetoFront): output tokens/s against the mean output tokens/s per user, else
// requests/s against request latency p99. profile's sweep aggregate and every page that
// shows a sweep use these, so the console, the JSON and the pages name one set.
var ParetoAxes = [][2]Objective{
	{{Key: "output_token_throughput_avg", Maximize: true}, {Key: "output_token_throughput_per_user_avg", Maximize: true}},
	{{Key: "request_throughput_avg", Maximize: true}, {Key: "request_latency_p99"}},
}

// Objective is one metric a best point or a Pareto axis is chosen on.
type Objective struct {
	// Name is the choice's name (best_throughput); "" for a Pareto axis.
	Name string
	// Key is the metric's aggregate key, <tag>_<stat> (request_throughput_avg).
	Key      string
	Maximize bool
}

// column is key's value at every point, NaN where a point has none, and whether some
// point with ok[i] has one.
func column(values []map[string]float64, ok []bool, key string) ([]float64, bool) {
	col := make([]float64, len(values))
	some := false
	for i, m := range values {
		v, has := m[key]
		if !has {
			v = math.NaN()
		}
		col[i] = v
		some = some || (has && !math.IsNaN(v) && (ok == nil || ok[i]))
	}
	return col, some
}

// BestPoints chooses the best point per objective name among the points with ok[i]
// (values[i] holds point i's metrics by key): for each name, the first of its objectives
// that some such point has a value of (best_latency_p99: TTFT p99, else request latency p99),
// best by Best. A point without a value of the key takes no part; a name no point can
// answer is left out. An invalid point (ok false) never wins, whatever its numbers.
func BestPoints(values []map[string]float64, ok []bool, objectives []Objective) map[string]Choice {
	out := map[string]Choice{}
	for _, o := range objectives {
		if _, done := out[o.Name]; done {
			continue
		}
		col, some := column(values, ok, o.Key)
		if !some {
			continue
		}
		if b := Best(col, o.Maximize, ok); b >= 0 {
			out[o.Name] = Choice{Point: b, Objective: o, Value: col[b]}
		}
	}
	return out
}

// Choice is the best point of one objective.
type Choice struct {
	Point     int
	Objective Objective
	Value     float64
}

// ParetoFront returns the Pareto set (Pareto) of the points with ok[i] on the first pair of
// axes some such point has values of both of, and that pair; nil and nil when no pair has.
func ParetoFront(values []map[string]float64, ok []bool, axes [][2]Objective) ([]int, []Objective) {
	for _, pair := range axes {
		x, okX := column(values, ok, pair[0].Key)
		y, okY := column(values, ok, pair[1].Key)
		if !okX || !okY {
			continue
		}
		vecs := make([][]float64, len(values))
		for i := range values {
			vecs[i] = []float64{x[i], y[i]}
		}
		return Pareto(vecs, []bool{pair[0].Maximize, pair[1].Maximize}, ok), pair[:]
	}
	return nil, nil
}
