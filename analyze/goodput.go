package analyze

import "strconv"

// SLO is one service-level objective of --goodput: a per-request metric and its threshold in
// the metric's display unit. A request meets it when its value is at most the threshold, or
// at least the threshold for metrics where larger is better (throughputs). Package
// analyze/judge parses the --goodput syntax into SLOs, each with its condition compiled
// (Met); analyze counts the requests meeting every one.
type SLO struct {
	Metric    MetricDef
	Threshold float64
	// Met is the objective's compiled condition over one request (analyze/judge: the
	// expression layer of package metricexpr): ok false when the request has no value. Nil
	// compares the metric's value with Threshold directly.
	Met func(r *RequestView) (met, ok bool)
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

// OneValue reports whether the metric has one value per request: a goodput objective, a
// comparison and a per-request evaluator's input can use it.
func (d MetricDef) OneValue() bool { return d.oneValue() }
