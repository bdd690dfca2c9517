package analyze

import (
	"fmt"
	"math"
	"strings"

	"github.com/llmbench/llmbench/analyze/rundir"
	"github.com/llmbench/llmbench/analyze/serverside"
)

// Server and GPU metrics on the benchmark's clock (docs/metrics.md "Server metrics"): the
// server's families mapped to stable names, read from each run's server_metrics.jsonl, and
// the GPU fields of the telemetry log (NVML or DCGM). Gauges get statistics over the
// profile window's points, counters a rate over it, histograms quantile estimates from
// their bucket increases over it; the same per time slice. What the shards of a distributed
// run read from one server or GPU counts once. Package analyze/serverside reads and
// computes them; this file holds the Summary's lookups (the gates on them are
// analyze/judge's, their names in namespace.go).

// ServerMetricSeries is one server (or GPU) metric as scraped during the run
// (serverside.Series).
type ServerMetricSeries = serverside.Series

// ServerMetric is one server or GPU metric over the profile window or a time slice
// (serverside.Metric).
type ServerMetric = serverside.Metric

// serverMetrics fills s.ServerSeries, s.ServerMetrics and each slice's ServerMetrics.
func (a *analysis) serverMetrics(s *Summary, parts []*logAnalysis) {
	o, notes := serverside.Read(a.in.runs, gpuLogs(a.in.jobs, parts))
	s.Notes = append(s.Notes, notes...)
	if o.Empty() {
		return
	}
	s.ServerSeries = o.Series(s.StartUnixNs)
	s.ServerMetrics = o.Window(s.StartUnixNs, s.EndUnixNs)
	for i := range s.Slices {
		sl := &s.Slices[i]
		sl.ServerMetrics = o.Window(sl.StartUnixNs, sl.EndUnixNs)
	}
	s.Notes = append(s.Notes, nonFiniteNotes(s.ServerMetrics)...)
}

// gpuLogs are the GPU samples of the logs read (parts, by job).
func gpuLogs(jobs []rundir.Log, parts []*logAnalysis) []serverside.GPULog {
	var out []serverside.GPULog
	for i, p := range parts {
		if p != nil && len(p.gpu) > 0 {
			out = append(out, serverside.GPULog{Log: jobs[i], Samples: p.gpu})
		}
	}
	return out
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

// HasServerSeries reports whether any server.* series was scraped.
func (s *Summary) HasServerSeries() bool {
	for _, x := range s.ServerSeries {
		if strings.HasPrefix(x.Name, "server.") {
			return true
		}
	}
	return false
}

// nonFiniteNotes say which statistics are not finite (null in the JSON exports;
// docs/metrics.md "Values that are not finite").
func nonFiniteNotes(ms []ServerMetric) []string {
	var out []string
	for i := range ms {
		m := &ms[i]
		var bad []string
		for _, st := range ServerStats(m.Kind) {
			if v, _ := m.Stat(st); math.IsNaN(v) {
				bad = append(bad, st+" NaN")
			} else if math.IsInf(v, 0) {
				bad = append(bad, st+" "+FormatNumber(v))
			}
		}
		if len(bad) > 0 {
			out = append(out, fmt.Sprintf("server metrics: %s is not finite (%s): the server reported infinite values, or values whose statistics are beyond float64; JSON exports write them as null",
				m.Name, strings.Join(bad, ", ")))
		}
	}
	return out
}
