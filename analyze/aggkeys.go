package analyze

import "slices"

// AggregateStats are the statistics of a distribution that AggregateKeys flattens (AIPerf's
// STAT_KEYS for aggregates): avg, min, max, p1 … p99 and std.
var AggregateStats = append([]string{"avg", "min", "max"}, append(PercentileNames[:9:9], "std")...)

// KeyValue is one aggregate key's value and its metric's unit.
type KeyValue struct {
	V    float64
	Unit string
}

// AggregateKeys flattens a run's results into AIPerf's aggregate keys, <tag>_<stat> → value:
// each distribution's AggregateStats, a single value as <tag>_avg. profile aggregates runs
// by these keys, and a sweep's best points and Pareto set are chosen on them
// (sweep.BestObjectives, sweep.ParetoAxes), wherever the sweep is shown.
func AggregateKeys(s *Summary) map[string]KeyValue {
	out := map[string]KeyValue{}
	for i := range s.Results {
		r := &s.Results[i]
		if r.Stats == nil {
			out[r.Tag+"_avg"] = KeyValue{r.Value, r.Unit}
			continue
		}
		st := r.Stats
		for _, k := range AggregateStats {
			var v float64
			switch k {
			case "avg":
				v = st.Avg
			case "min":
				v = st.Min
			case "max":
				v = st.Max
			case "std":
				v = st.Std
			default:
				v = st.P[slices.Index(PercentileNames[:], k)]
			}
			out[r.Tag+"_"+k] = KeyValue{v, r.Unit}
		}
	}
	return out
}
