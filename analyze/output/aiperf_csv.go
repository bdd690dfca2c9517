package output

import (
	"encoding/csv"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/analyze"
)

// csvStatKeys are AIPerf's CSV columns after "Metric" (its STAT_KEYS).
var csvStatKeys = [...]string{"avg", "min", "max", "sum", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "std"}

// csvNumber formats like AIPerf's CSV exporter: two decimals.
func csvNumber(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// csvNumber4 keeps four decimals: ratios such as the KV-cache usage or a prefix-cache hit
// rate need more than two.
func csvNumber4(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }

// csvValue formats a single value: whole-number metrics (counts, token totals, timestamps)
// as integers, the way AIPerf's exporter writes its int values, the others with two decimals.
func csvValue(r *analyze.Result) string {
	if r.Int {
		return strconv.FormatInt(r.Exact, 10)
	}
	return csvNumber(r.Value)
}

// CSVName is the metric's display name with its unit, as AIPerf writes it (no unit for
// counts of requests).
func CSVName(header, unit string) string {
	switch strings.ToLower(unit) {
	case "", "count", "requests":
		return header
	}
	return header + " (" + unit + ")"
}

func newCSV(w io.Writer) *csv.Writer {
	cw := csv.NewWriter(w)
	cw.UseCRLF = true // Python's csv module ends rows with \r\n
	return cw
}

// WriteAIPerfCSV writes profile_export_aiperf.csv in AIPerf's layout: distributions
// (Metric,avg,min,max,sum,p1,…,p99,std), a blank row, single values (Metric,Value), and
// GPU telemetry after two blank rows. Rows are sorted by metric tag; numbers have two
// decimals, except whole-number single values (counts, token totals, timestamps). Server
// metrics, the session metrics of graph plans and the benchmark claim follow, each after two
// blank rows.
func WriteAIPerfCSV(w io.Writer, s *analyze.Summary) error {
	cw := newCSV(w)
	var dists, singles []*analyze.Result
	for i := range s.Results {
		if s.Results[i].Stats != nil {
			dists = append(dists, &s.Results[i])
		} else {
			singles = append(singles, &s.Results[i])
		}
	}
	byTag := func(a, b *analyze.Result) int { return strings.Compare(a.Tag, b.Tag) }
	slices.SortFunc(dists, byTag)
	slices.SortFunc(singles, byTag)
	if len(dists) > 0 {
		cw.Write(append([]string{"Metric"}, csvStatKeys[:]...))
		for _, r := range dists {
			row := []string{CSVName(r.Header, r.Unit)}
			for _, k := range csvStatKeys {
				row = append(row, csvNumber(r.Stats.Stat(k)))
			}
			cw.Write(row)
		}
		if len(singles) > 0 {
			cw.Write(nil)
		}
	}
	if len(singles) > 0 {
		cw.Write([]string{"Metric", "Value"})
		for _, r := range singles {
			cw.Write([]string{CSVName(r.Header, r.Unit), csvValue(r)})
		}
	}
	if len(s.GPUs) > 0 {
		cw.Write(nil)
		cw.Write(nil)
		cw.Write(append([]string{"Endpoint", "GPU_Index", "GPU_Name", "GPU_UUID", "Metric"}, append(csvStatKeys[:], "Hostname")...))
		for _, g := range s.GPUs {
			for _, m := range gpuMetricDefs {
				st := m.get(&g)
				if st == nil {
					continue
				}
				row := []string{s.GPUEndpoint(g.Run), strconv.Itoa(g.GPU), g.Name, g.UUID, m.display + " (" + m.unit + ")"}
				for _, k := range csvStatKeys {
					row = append(row, csvNumber(st.Stat(k)))
				}
				cw.Write(append(row, s.Host(g.Run)))
			}
		}
	}
	writeServerMetricsCSV(cw, s)     // server and GPU metrics, the TTFT comparison (servermetrics_export.go)
	writeSessionsCSV(cw, s.Sessions) // graph plans: session metrics, branch_stats, prefix reuse (sessions.go)
	if s.Claim != nil {
		cw.Write(nil)
		cw.Write(nil)
		for _, row := range ClaimCSVRows(s.Claim) { // the benchmark claim, after the metrics (benchclaim_export.go)
			cw.Write(row)
		}
	}
	writeSelectionCSV(cw, s) // --where and --group-by, the groups' metrics (groups_export.go)
	cw.Flush()
	return cw.Error()
}
