package output

import (
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/internal/pyjson"
)

// The server-metrics parts of the exports: llmbench.server_metrics in
// profile_export_aiperf.json (AIPerf's schema has no place for them at the top level), its
// rows in the CSV and in the time slices, and the console lines.

// serverMetricBlock is one metric's statistics as its kind has them.
func serverMetricBlock(m *analyze.ServerMetric) *pyjson.Object {
	o := &pyjson.Object{}
	o.Add("unit", m.Unit).Add("kind", m.Kind).Add("source", m.Source)
	for _, st := range m.StatNames() {
		v, _ := m.Stat(st)
		o.Add(st, pyjson.Float(v))
	}
	if m.Kind == "histogram" {
		o.Add("estimate", true)
	}
	o.Add("samples", m.Samples)
	return o
}

// serverMetricsMap is the metrics by name, in Summary order.
func serverMetricsMap(ms []analyze.ServerMetric) *pyjson.Object {
	o := &pyjson.Object{}
	for i := range ms {
		o.Add(ms[i].Name, serverMetricBlock(&ms[i]))
	}
	return o
}

// serverMetricsJSON is llmbench.server_metrics: the metrics over the profile window, the
// server-vs-client TTFT comparison, and every series; nil without server or GPU metrics.
func serverMetricsJSON(s *analyze.Summary) *pyjson.Object {
	if len(s.ServerMetrics) == 0 && len(s.ServerSeries) == 0 {
		return nil
	}
	o := &pyjson.Object{}
	o.Add("metrics", serverMetricsMap(s.ServerMetrics))
	if c, ok := s.CompareTTFT(); ok {
		side := func(avg, p50, p99 float64) *pyjson.Object {
			return (&pyjson.Object{}).Add("avg", pyjson.Float(avg)).Add("p50", pyjson.Float(p50)).Add("p99", pyjson.Float(p99))
		}
		t := &pyjson.Object{}
		t.Add("unit", "ms").Add("server_source", c.Source)
		t.Add("server", side(c.ServerAvg, c.ServerP50, c.ServerP99))
		t.Add("client", side(c.ClientAvg, c.ClientP50, c.ClientP99))
		t.Add("difference", side(c.ClientAvg-c.ServerAvg, c.ClientP50-c.ServerP50, c.ClientP99-c.ServerP99))
		t.Add("note", "client minus server: network, client and queueing outside the server's histogram; server values are histogram estimates")
		o.Add("ttft_comparison", t)
	}
	series := make([]any, 0, len(s.ServerSeries))
	for _, x := range s.ServerSeries {
		t := make([]any, len(x.T))
		v := make([]any, len(x.V))
		for i := range x.T {
			t[i], v[i] = pyjson.Float(x.T[i]), pyjson.Float(x.V[i])
		}
		series = append(series, (&pyjson.Object{}).Add("name", x.Name).Add("unit", x.Unit).Add("labels", x.Labels).Add("kind", x.Kind).Add("t", t).Add("v", v))
	}
	o.Add("series", series)
	return o
}

// writeServerMetricsCSV appends the server-metrics section to the CSV: two blank rows, then
// Server Metric,Unit,Kind,Source,avg,min,max,p50,p99,rate,samples (empty cells for the
// statistics a kind lacks), and the TTFT comparison rows.
func writeServerMetricsCSV(cw *csv.Writer, s *analyze.Summary) {
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
			if v, ok := m.Stat(c); ok {
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

// writeSliceServerCSV appends a slice's server metrics in the time-slice CSV's tidy layout
// (Timeslice,Metric,Unit,Stat,Value).
func writeSliceServerCSV(cw *csv.Writer, idx string, ms []analyze.ServerMetric) {
	for i := range ms {
		m := &ms[i]
		for _, st := range m.StatNames() {
			v, _ := m.Stat(st)
			cw.Write([]string{idx, m.Name, m.Unit, st, csvNumber4(v)})
		}
	}
}

// serverMetricLines are the console lines: one per server or GPU metric, and the TTFT
// comparison.
func serverMetricLines(s *analyze.Summary) []string {
	var out []string
	for i := range s.ServerMetrics {
		m := &s.ServerMetrics[i]
		var parts []string
		for _, st := range m.StatNames() {
			v, _ := m.Stat(st)
			parts = append(parts, st+" "+analyze.FormatNumber(v))
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
			analyze.FormatNumber(c.ServerAvg), analyze.FormatNumber(c.ClientAvg), fmtSigned(c.ClientAvg-c.ServerAvg), analyze.FormatNumber(c.ServerP50), analyze.FormatNumber(c.ClientP50), fmtSigned(c.ClientP50-c.ServerP50),
			analyze.FormatNumber(c.ServerP99), analyze.FormatNumber(c.ClientP99), fmtSigned(c.ClientP99-c.ServerP99)))
	}
	return out
}
