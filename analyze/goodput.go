package analyze

import (
	"fmt"
	"math"
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

// ParseGoodput parses AIPerf's --goodput syntax: space-separated "metric_tag:value" pairs in
// display units, e.g. "time_to_first_token:400 inter_token_latency:20". Commas also separate
// pairs. Each tag must be a per-request metric, each threshold a positive finite number.
func ParseGoodput(spec string) ([]SLO, error) {
	fields := strings.FieldsFunc(spec, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' })
	if len(fields) == 0 {
		return nil, fmt.Errorf("--goodput %q: no objectives; want e.g. \"time_to_first_token:400 inter_token_latency:20\"", spec)
	}
	var out []SLO
	for _, f := range fields {
		tag, val, ok := strings.Cut(f, ":")
		if !ok {
			// AIPerf also accepts tag=value.
			tag, val, ok = strings.Cut(f, "=")
		}
		if !ok || tag == "" || val == "" {
			return nil, fmt.Errorf("--goodput: %q is not metric_tag:value", f)
		}
		def, found := LookupMetric(tag)
		if !found {
			return nil, fmt.Errorf("--goodput: unknown metric %q (%sper-request metrics: %s)", tag, didYouMean(tag, recordTags()), strings.Join(recordTags(), ", "))
		}
		if def.Kind != Record || def.ID == MInterChunkLatency || def.ID == MEventsPerRead || def.ID == MWorkerCPUUtilization || def.Alias == MInterChunkLatency {
			return nil, fmt.Errorf("--goodput: %q has no single value per request; use a per-request metric such as time_to_first_token", tag)
		}
		v, err := strconv.ParseFloat(val, 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
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

// recordTags lists the per-request metric tags usable in --goodput.
func recordTags() []string {
	var tags []string
	for i := range catalog {
		d := &catalog[i]
		if d.Kind == Record && d.ID != MInterChunkLatency && d.ID != MEventsPerRead && d.ID != MWorkerCPUUtilization && d.Alias != MInterChunkLatency {
			tags = append(tags, d.Tag)
		}
	}
	return tags
}
