package analyze

import (
	"fmt"
	"slices"
	"strings"

	"github.com/llmbench/llmbench/servermetrics"
)

// Server and GPU metrics on the benchmark's clock (docs/metrics.md "Server metrics"): the
// server's families mapped to stable names, read from each run's server_metrics.jsonl, and
// the GPU fields of the telemetry log (NVML or DCGM). Gauges get statistics over the
// profile window's points, counters a rate over it, histograms quantile estimates from
// their bucket increases over it; the same per time slice. What the shards of a distributed
// run read from one server or GPU counts once. This file holds the results and the gates on
// them (their names are parsed with the other metrics' in expr.go); servermetrics_sources.go
// reads the series, servermetrics_window.go computes the statistics.

// ServerMetricSeries is one server (or GPU) metric as scraped during the run: one point per
// scrape (per GPU sample), one series per origin (endpoint or GPU) however many shards
// scraped it.
type ServerMetricSeries struct {
	// Name is the gate name without its statistic ("server.kv_cache_usage",
	// "gpu.utilization"); Unit its display unit; Labels the series' origin ("endpoint=URL",
	// "gpu=0 uuid=GPU-..."); Kind "gauge" (V is the value), "counter" (V is the rate since
	// the previous point) or "histogram_mean" (V is the mean of the observations since the
	// previous point; intervals without any are left out).
	Name, Unit, Labels, Kind string
	// T is seconds since the benchmark start (Summary.StartUnixNs); V the values, in Unit.
	T []float64
	V []float64
}

// ServerMetric is one server or GPU metric over the profile window (or a time slice).
type ServerMetric struct {
	// Name is the gate name without its statistic ("server.kv_cache_usage"); Unit its display
	// unit; Kind "gauge", "counter", "histogram" (Avg, P50, P99 are estimates from the
	// buckets, Min and Max unknown) or "ratio" (Avg only, a ratio of two counters'
	// increases); Source what it came from ("vllm:kv_cache_usage_perc", "nvml", "dcgm").
	Name, Unit, Kind, Source string
	// Avg, Min, Max, P50, P99 are a gauge's statistics over the points in the window,
	// pooled over endpoints and GPUs; Rate is a counter's increase per second over it,
	// summed over endpoints (each counted once, however many shards scraped it). A value
	// that is not finite is reported as such (see Stats; null in JSON).
	Avg, Min, Max, P50, P99, Rate float64
	// Samples is the number of points (a histogram's observations) the values rest on.
	Samples int64
	// Present is true for every metric in Summary.ServerMetrics; a zero ServerMetric from a
	// lookup that found nothing has it false.
	Present bool
}

// ServerMetric returns the named metric ("server.kv_cache_usage", "gpu.utilization").
func (s *Summary) ServerMetric(name string) ServerMetric {
	for _, m := range s.ServerMetrics {
		if m.Name == name {
			return m
		}
	}
	return ServerMetric{}
}

// Statistics each kind of server metric has, for gates.
var serverStats = map[string][]string{
	"gauge":     {"avg", "min", "max", "p50", "p99"},
	"histogram": {"avg", "p50", "p99"},
	"counter":   {"rate"},
	"ratio":     {"avg"},
}

// StatNames are the statistics the metric's kind has (avg, min, max, p50, p99, rate).
func (m ServerMetric) StatNames() []string { return serverStats[m.Kind] }

// Has reports whether the metric's kind has the statistic stat (avg, min, max, p50, p99,
// rate): a reporter shows the others as absent, never as 0.
func (m ServerMetric) Has(stat string) bool { return slices.Contains(serverStats[m.Kind], stat) }

// Stat returns the named statistic, false when the metric's kind has none by that name.
func (m ServerMetric) Stat(name string) (float64, bool) {
	if !slices.Contains(serverStats[m.Kind], name) {
		return 0, false
	}
	switch name {
	case "avg":
		return m.Avg, true
	case "min":
		return m.Min, true
	case "max":
		return m.Max, true
	case "p50":
		return m.P50, true
	case "p99":
		return m.P99, true
	}
	return m.Rate, true
}

// TTFTComparison is the server's TTFT histogram next to the client's TTFT over the same
// window: the difference is the network, the client, and queueing outside the server's
// histogram.
type TTFTComparison struct {
	// Server and Client in ms: avg, p50, p99 (the server's are bucket estimates).
	ServerAvg, ServerP50, ServerP99 float64
	ClientAvg, ClientP50, ClientP99 float64
	Source                          string
}

// CompareTTFT returns the comparison, false when the run lacks either side.
func (s *Summary) CompareTTFT() (TTFTComparison, bool) {
	sm := s.ServerMetric("server.server_ttft")
	r := s.ResultOf(MTimeToFirstToken)
	if !sm.Present || r == nil || r.Stats == nil {
		return TTFTComparison{}, false
	}
	return TTFTComparison{ServerAvg: sm.Avg, ServerP50: sm.P50, ServerP99: sm.P99,
		ClientAvg: r.Stats.Avg, ClientP50: r.Stats.P[4], ClientP99: r.Stats.P[8], Source: sm.Source}, true
}

// evalServerGate checks a gate on a server or GPU metric; one whose metric the run lacks is
// not evaluable (and fails), saying why.
func evalServerGate(s *Summary, g Gate) GateResult {
	r := GateResult{Gate: g}
	m := s.ServerMetric(g.Metric.Tag)
	if !m.Present {
		r.Missing = true
		switch {
		case strings.HasPrefix(g.Metric.Tag, "gpu."):
			r.Why = fmt.Sprintf("the run has no %s values (no GPU telemetry: NVML found no GPU here, and no --gpu-telemetry DCGM exporter answered)", g.Metric.Tag)
		case !hasServerSeries(s):
			r.Why = fmt.Sprintf("the run has no %s values (no server metrics were scraped: see %s and --server-metrics-url)", g.Metric.Tag, servermetrics.FileName)
		default:
			r.Why = fmt.Sprintf("the run has no %s values (the scraped endpoints expose none of its families)", g.Metric.Tag)
		}
		return r
	}
	v, ok := m.Stat(g.Stat)
	if !ok {
		r.Missing = true
		r.Why = fmt.Sprintf("%s is a %s here (%s); its statistics are %s", m.Name, m.Kind, m.Source, strings.Join(serverStats[m.Kind], ", "))
		return r
	}
	r.Actual = v
	r.OK = g.holds(v)
	return r
}

// hasServerSeries reports whether any server.* series was scraped.
func hasServerSeries(s *Summary) bool {
	for _, x := range s.ServerSeries {
		if strings.HasPrefix(x.Name, "server.") {
			return true
		}
	}
	return false
}
