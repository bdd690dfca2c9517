package judge

import (
	"fmt"
	"strings"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/metricexpr"
)

// ParseGoodput parses --goodput against the built-in metrics (ParseGoodputOf).
func ParseGoodput(spec string) ([]analyze.SLO, error) { return ParseGoodputOf(nil, spec) }

// ParseGoodputOf parses AIPerf's --goodput syntax: space-separated "metric_tag:value" pairs
// in display units, e.g. "time_to_first_token:400 inter_token_latency:20" (sugar.go). Commas
// also separate pairs, and AIPerf's tag=value is accepted. Each tag must be a metric of reg
// (nil: the built-ins) with one value per request, each threshold a positive finite number.
// Each objective is compiled as a condition on one request (objectiveSource), which is what
// the analysis runs (analyze.SLO.Met).
func ParseGoodputOf(reg *analyze.Registry, spec string) ([]analyze.SLO, error) {
	fields := splitList(spec)
	if len(fields) == 0 {
		return nil, fmt.Errorf("--goodput %q: no objectives; want e.g. \"time_to_first_token:400 inter_token_latency:20\"", spec)
	}
	var out []analyze.SLO
	for _, f := range fields {
		tag, val, ok := cutPair(f)
		if !ok {
			return nil, fmt.Errorf("--goodput: %q is not metric_tag:value", f)
		}
		t, found := resolve(reg, tag, scopeMetrics)
		if !found {
			tags := names(reg, scopePerRequest)
			return nil, fmt.Errorf("--goodput: unknown metric %q (%sper-request metrics: %s)", tag, didYouMean(tag, tags), strings.Join(tags, ", "))
		}
		def := t.def
		if !def.OneValue() {
			return nil, fmt.Errorf("--goodput: %q has no single value per request; use a per-request metric such as time_to_first_token", tag)
		}
		v, ok := parseFinite(val)
		if !ok || !(v > 0) {
			// A bound of 0 or less, NaN or infinity makes every request good or none.
			return nil, fmt.Errorf("--goodput: %q: threshold %q is not a positive finite number (%s)", f, val, def.Unit)
		}
		for _, s := range out {
			if s.Metric.ID == def.ID {
				return nil, fmt.Errorf("--goodput: %q is given twice", tag)
			}
		}
		met, err := metricexpr.Condition(reg, fmt.Sprintf("--goodput %q", f), objectiveSource(def, v))
		if err != nil {
			return nil, err
		}
		out = append(out, analyze.SLO{Metric: def, Threshold: v, Met: met})
	}
	return out, nil
}

// objectiveSource is the objective on def at threshold as a condition of metricexpr's
// per-request environment: at most the threshold, at least it where larger is better.
func objectiveSource(def analyze.MetricDef, threshold float64) string {
	op := " <= "
	if def.LargerIsBetter {
		op = " >= "
	}
	return def.Tag + op + literal(threshold)
}
