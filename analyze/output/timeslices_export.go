package output

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/internal/pyjson"
)

// Time-slice exports (--slice-duration): AIPerf's profile_export_aiperf_timeslices.json and
// .csv. A request belongs to the slice holding its send instant; slices are aligned to
// multiples of the duration since the Unix epoch, and rates in a slice are over the slice's
// width.

// WriteTimeslicesJSON writes {"timeslices": [{"timeslice_index": i, <tag>: {...}, …}],
// "input_config": {...}} like AIPerf, each slice also carrying its bounds and, under
// llmbench.extra_stats, the statistics AIPerf's metric blocks have no field for.
func WriteTimeslicesJSON(w io.Writer, s *analyze.Summary) error {
	list := make([]any, 0, len(s.Slices))
	for _, sl := range s.Slices {
		o := &pyjson.Object{}
		o.Add("timeslice_index", sl.Index)
		o.Add("start_time", isoTime(sl.StartUnixNs))
		o.Add("end_time", isoTime(sl.EndUnixNs))
		for i := range sl.Results {
			o.Add(sl.Results[i].Tag, metricBlock(&sl.Results[i]))
		}
		own := (&pyjson.Object{}).Add("extra_stats", extraStats(sl.Results))
		if len(sl.ServerMetrics) > 0 {
			own.Add("server_metrics", serverMetricsMap(sl.ServerMetrics))
		}
		o.Add("llmbench", own)
		list = append(list, o)
	}
	doc := (&pyjson.Object{}).Add("timeslices", list).Add("input_config", inputConfig(s))
	b, err := pyjson.MarshalIndent(doc)
	if err != nil {
		return fmt.Errorf("analyze: timeslices export: %w", err)
	}
	_, err = w.Write(b)
	return err
}

// WriteTimeslicesCSV writes AIPerf's tidy layout: Timeslice,Metric,Unit,Stat,Value, one row
// per statistic, metrics sorted by tag within each slice.
func WriteTimeslicesCSV(w io.Writer, s *analyze.Summary) error {
	cw := newCSV(w)
	cw.Write([]string{"Timeslice", "Metric", "Unit", "Stat", "Value"})
	for _, sl := range s.Slices {
		res := make([]*analyze.Result, len(sl.Results))
		for i := range sl.Results {
			res[i] = &sl.Results[i]
		}
		slices.SortFunc(res, func(a, b *analyze.Result) int { return strings.Compare(a.Tag, b.Tag) })
		idx := strconv.Itoa(sl.Index)
		for _, r := range res {
			if r.Stats == nil {
				cw.Write([]string{idx, r.Header, r.Unit, "avg", csvValue(r)})
				continue
			}
			for _, k := range csvStatKeys {
				cw.Write([]string{idx, r.Header, r.Unit, k, csvNumber(r.Stats.Stat(k))})
			}
		}
		writeSliceServerCSV(cw, idx, sl.ServerMetrics)
	}
	cw.Flush()
	return cw.Error()
}
