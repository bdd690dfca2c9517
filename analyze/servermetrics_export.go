package analyze

import (
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
)

// The server-metrics parts of the exports: llmbench.server_metrics in
// profile_export_aiperf.json (AIPerf's schema has no place for them at the top level), its
// rows in the CSV and in the time slices, and the console lines.

// serverMetricBlock is one metric's statistics as its kind has them.
func serverMetricBlock(m *ServerMetric) *ordered {
	o := &ordered{}
	o.add("unit", m.Unit).add("kind", m.Kind).add("source", m.Source)
	for _, st := range serverStats[m.Kind] {
		v, _ := m.stat(st)
		o.add(st, pyFloat(v))
	}
	if m.Kind == "histogram" {
		o.add("estimate", true)
	}
	o.add("samples", m.Samples)
	return o
}

// serverMetricsMap is the metrics by name, in Summary order.
func serverMetricsMap(ms []ServerMetric) *ordered {
	o := &ordered{}
	for i := range ms {
		o.add(ms[i].Name, serverMetricBlock(&ms[i]))
	}
	return o
}

// serverMetricsJSON is llmbench.server_metrics: the metrics over the profile window, the
// server-vs-client TTFT comparison, and every series; nil without server or GPU metrics.
func serverMetricsJSON(s *Summary) *ordered {
	if len(s.ServerMetrics) == 0 && len(s.ServerSeries) == 0 {
		return nil
	}
	o := &ordered{}
	o.add("metrics", serverMetricsMap(s.ServerMetrics))
	if c, ok := s.CompareTTFT(); ok {
		side := func(avg, p50, p99 float64) *ordered {
			return (&ordered{}).add("avg", pyFloat(avg)).add("p50", pyFloat(p50)).add("p99", pyFloat(p99))
		}
		t := &ordered{}
		t.add("unit", "ms").add("server_source", c.Source)
		t.add("server", side(c.ServerAvg, c.ServerP50, c.ServerP99))
		t.add("client", side(c.ClientAvg, c.ClientP50, c.ClientP99))
		t.add("difference", side(c.ClientAvg-c.ServerAvg, c.ClientP50-c.ServerP50, c.ClientP99-c.ServerP99))
		t.add("note", "client minus server: network, client and queueing outside the server's histogram; server values are histogram estimates")
		o.add("ttft_comparison", t)
	}
	series := make([]any, 0, len(s.ServerSeries))
	for _, x := range s.ServerSeries {
		t := make([]any, len(x.T))
		v := make([]any, len(x.V))
		for i := range x.T {
			t[i], v[i] = pyFloat(x.T[i]), pyFloat(x.V[i])
		}
		series = append(series, (&ordered{}).add("name", x.Name).add("unit", x.Unit).add("labels", x.Labels).add("kind", x.Kind).add("t", t).add("v", v))
	}
	o.add("series", series)
	return o
}

// writeServerMetricsCSV appends the server-metrics section to the CSV: two blank rows, then
// Server Metric,Unit,Kind,Source,avg,min,max,p50,p99,rate,samples (empty cells for the
// statistics a kind lacks), and the TTFT comparison rows.
func writeServerMetricsCSV(cw *csv.Writer, s *Summary) {
	if len(s.ServerMetrics) == 0 {
		return
	}
	cw.Write(nil)
	cw.Write(nil)
	cols := []string{"avg", "min", "max", "p50", "p99", "rate"}
	cw.Write(append(append([]string{"Server Metric", "Unit", "Kind", "Source"}, cols...), "samples"))
	for i := range s.ServerMetrics {
		m := &s.ServerMetrics[i]
		row := []string{m.Name, m.Unit, m.Kind, m.Source}
		for _, c := range cols {
			if v, ok := m.stat(c); ok {
				row = append(row, csvNumber4(v))
			} else {
				row = append(row, "")
			}
		}
		cw.Write(append(row, strconv.FormatInt(m.Samples, 10)))
	}
	if c, ok := s.CompareTTFT(); ok {
		cw.Write(nil)
		cw.Write([]string{"TTFT (ms)", "avg", "p50", "p99"})
		cw.Write([]string{"server (" + c.Source + ", estimate)", csvNumber(c.ServerAvg), csvNumber(c.ServerP50), csvNumber(c.ServerP99)})
		cw.Write([]string{"client", csvNumber(c.ClientAvg), csvNumber(c.ClientP50), csvNumber(c.ClientP99)})
		cw.Write([]string{"difference (client - server)", csvNumber(c.ClientAvg - c.ServerAvg), csvNumber(c.ClientP50 - c.ServerP50), csvNumber(c.ClientP99 - c.ServerP99)})
	}
}

// csvNumber4 keeps four decimals: ratios such as the KV-cache usage need more than two.
func csvNumber4(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }

// writeSliceServerCSV appends a slice's server metrics in the time-slice CSV's tidy layout
// (Timeslice,Metric,Unit,Stat,Value).
func writeSliceServerCSV(cw *csv.Writer, idx string, ms []ServerMetric) {
	for i := range ms {
		m := &ms[i]
		for _, st := range serverStats[m.Kind] {
			v, _ := m.stat(st)
			cw.Write([]string{idx, m.Name, m.Unit, st, csvNumber4(v)})
		}
	}
}

// serverMetricLines are the console lines: one per server or GPU metric, and the TTFT
// comparison.
func serverMetricLines(s *Summary) []string {
	var out []string
	for i := range s.ServerMetrics {
		m := &s.ServerMetrics[i]
		var parts []string
		for _, st := range serverStats[m.Kind] {
			v, _ := m.stat(st)
			parts = append(parts, st+" "+fmtNum(v))
		}
		est := ""
		if m.Kind == "histogram" {
			est = ", estimated from buckets"
		}
		label := "Server " + strings.TrimPrefix(m.Name, "server.")
		if f, ok := strings.CutPrefix(m.Name, "gpu."); ok {
			label = "GPU " + f
		}
		out = append(out, fmt.Sprintf("%s (%s, %s%s): %s", label, m.Unit, m.Source, est, strings.Join(parts, ", ")))
	}
	if c, ok := s.CompareTTFT(); ok {
		out = append(out, fmt.Sprintf("TTFT server vs client (ms): avg %s vs %s (%s), p50 %s vs %s (%s), p99 %s vs %s (%s): the difference is network, client and queueing outside the server's histogram",
			fmtNum(c.ServerAvg), fmtNum(c.ClientAvg), fmtSigned(c.ClientAvg-c.ServerAvg), fmtNum(c.ServerP50), fmtNum(c.ClientP50), fmtSigned(c.ClientP50-c.ServerP50),
			fmtNum(c.ServerP99), fmtNum(c.ClientP99), fmtSigned(c.ClientP99-c.ServerP99)))
	}
	return out
}
