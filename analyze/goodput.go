package analyze

import (
	"fmt"
	"strconv"
	"strings"
)

// SLO is one service-level objective of --goodput: a per-request metric and its threshold in
// the metric's display unit. A request meets it when its value is at most the threshold, or
// at least the threshold for metrics where larger is better (throughputs).
type SLO struct {
	Metric    MetricDef
	Threshold float64
}

// String returns the SLO in --goodput syntax.
func (s SLO) String() string {
	return s.Metric.Tag + ":" + strconv.FormatFloat(s.Threshold, 'g', -1, 64)
}

// met reports whether value (display units) meets the SLO.
func (s SLO) met(value float64) bool {
	if s.Metric.LargerIsBetter {
		return value >= s.Threshold
	}
	return value <= s.Threshold
}

// ParseGoodput parses --goodput against the built-in metrics (Registry.ParseGoodput).
func ParseGoodput(spec string) ([]SLO, error) { return builtins.ParseGoodput(spec) }

// ParseGoodput parses AIPerf's --goodput syntax: space-separated "metric_tag:value" pairs in
// display units, e.g. "time_to_first_token:400 inter_token_latency:20" (expr.go). Commas also
// separate pairs, and AIPerf's tag=value is accepted. Each tag must be a metric of the
// registry with one value per request, each threshold a positive finite number.
func (r *Registry) ParseGoodput(spec string) ([]SLO, error) {
	fields := splitList(spec)
	if len(fields) == 0 {
		return nil, fmt.Errorf("--goodput %q: no objectives; want e.g. \"time_to_first_token:400 inter_token_latency:20\"", spec)
	}
	var out []SLO
	for _, f := range fields {
		tag, val, ok := cutPair(f)
		if !ok {
			return nil, fmt.Errorf("--goodput: %q is not metric_tag:value", f)
		}
		t, found := r.resolve(tag, scopeMetrics)
		if !found {
			tags := r.names(scopePerRequest)
			return nil, fmt.Errorf("--goodput: unknown metric %q (%sper-request metrics: %s)", tag, didYouMean(tag, tags), strings.Join(tags, ", "))
		}
		def := t.def
		if !def.oneValue() {
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
		out = append(out, SLO{Metric: def, Threshold: v})
	}
	return out, nil
}
