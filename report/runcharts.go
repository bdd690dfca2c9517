package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/internal/numfmt"
)

// Page sections, in page order.
const (
	secDispatch = "Dispatch"
	secLag      = "Schedule lag"
	secLatency  = "Latency"
	secLoad     = "Load"
	secLengths  = "Lengths"
	secGPU      = "GPU and server"
	secSlices   = "Time slices"
)

// ServerRow is one server metric over the profile window (Summary.ServerMetrics); a
// statistic its kind does not have is null (analyze.ServerMetric.Has).
type ServerRow struct {
	Name    string `json:"name"`
	Unit    string `json:"unit"`
	Kind    string `json:"kind"`
	Source  string `json:"source"`
	Present bool   `json:"present"`
	Avg     Number `json:"avg"`
	Min     Number `json:"min"`
	Max     Number `json:"max"`
	P50     Number `json:"p50"`
	P99     Number `json:"p99"`
	Rate    Number `json:"rate"`
}

func serverRows(s *analyze.Summary) ([]ServerRow, string) {
	rows := []ServerRow{}
	for _, m := range s.ServerMetrics {
		// A statistic the metric's kind does not have (a counter's avg, a gauge's rate, a
		// histogram's min and max) is null, never 0.
		v := func(stat string, x float64) Number {
			if !m.Has(stat) {
				return Number(math.NaN())
			}
			return Number(x)
		}
		rows = append(rows, ServerRow{Name: m.Name, Unit: m.Unit, Kind: m.Kind, Source: m.Source, Present: m.Present,
			Avg: v("avg", m.Avg), Min: v("min", m.Min), Max: v("max", m.Max), P50: v("p50", m.P50), P99: v("p99", m.P99), Rate: v("rate", m.Rate)})
	}
	if len(rows) == 0 {
		return rows, "not available: the run holds no server metrics (none were scraped)"
	}
	return rows, ""
}

// timeline is the requests' times in seconds since the benchmark start, each sorted.
type timeline struct {
	intended, sent, done, failed []float64
}

// sec converts a wall-clock instant to seconds since the benchmark start, NaN when absent.
func sec(s *analyze.Summary, ns int64) float64 {
	if ns < 0 {
		return math.NaN()
	}
	return float64(ns-s.StartUnixNs) / 1e9
}

func runCharts(s *analyze.Summary, r *Records) []Chart {
	var out []Chart
	if r != nil && len(r.Requests) > 0 {
		out = append(out, dispatchChart(s, r))
		out = append(out, lagCharts(s, r)...)
		out = append(out, latencyCharts(s, r)...)
		out = append(out, serverTraceCharts(s, r)...)
		out = append(out, loadCharts(s, r)...)
		out = append(out, lengthCharts(r)...)
	}
	out = append(out, telemetryCharts(s)...)
	if c, ok := sliceChart(s); ok {
		out = append(out, c)
	}
	return out
}

func rate(s *analyze.Summary, tag string) string {
	if r, ok := s.Result(tag); ok {
		return numfmt.Format(r.Value) + " req/s"
	}
	return numfmt.Absent
}

func duration(s *analyze.Summary) float64 {
	return math.Max(float64(s.EndUnixNs-s.StartUnixNs)/1e9, 1e-3)
}

func dispatchChart(s *analyze.Summary, r *Records) Chart {
	var t timeline
	for i := range r.Requests {
		q := &r.Requests[i]
		if v := sec(s, q.IntendedNs); !math.IsNaN(v) {
			t.intended = append(t.intended, v)
		}
		if v := sec(s, q.SendNs); !math.IsNaN(v) {
			t.sent = append(t.sent, v)
		}
		if v := sec(s, q.EndNs); !math.IsNaN(v) {
			if q.OK {
				t.done = append(t.done, v)
			} else {
				t.failed = append(t.failed, v)
			}
		}
	}
	for _, v := range [][]float64{t.intended, t.sent, t.done, t.failed} {
		slices.Sort(v)
	}
	lo := 0.0
	if len(t.intended) > 0 {
		lo = math.Min(0, t.intended[0])
	}
	x := grid(lo, duration(s), timeGrid)
	c := Chart{ID: "dispatch", Section: secDispatch, Title: "Requests planned, sent and completed", Time: true,
		Caption: fmt.Sprintf("Cumulative requests over time. A sent curve that falls behind the planned one is the client missing its schedule; completed behind sent is the server's queue. Offered (the plan's instants) %s, nominal %s, dispatched %s, completed %s.",
			rate(s, "offered_request_rate"), rate(s, "nominal_request_rate"), rate(s, "dispatched_request_rate"), rate(s, "completed_request_rate")),
		X: Axis{Label: "time since start (s)"}, Y: Axis{Label: "requests"}, Data: []column{x}}
	add := func(label, color string, v []float64) {
		if len(v) == 0 {
			return
		}
		y := make(column, len(x))
		for i, at := range x {
			y[i] = float64(countAtOrBefore(v, at))
		}
		c.Series = append(c.Series, Series{Label: label, Style: "step", Color: color})
		c.Data = append(c.Data, y)
	}
	add("planned", "#888888", t.intended)
	add("sent", "#1f77b4", t.sent)
	add("completed", "#2ca02c", t.done)
	add("failed", "#d62728", t.failed)
	return c
}

// scatter is a per-request value over send time, LTTB-downsampled.
func scatter(s *analyze.Summary, r *Records, f Field, keep func(*Request) bool, value func(*Request) float64) (column, column) {
	type pt struct{ x, y float64 }
	var pts []pt
	for i := range r.Requests {
		q := &r.Requests[i]
		if keep != nil && !keep(q) {
			continue
		}
		y := q.Value(f)
		if value != nil {
			y = value(q)
		}
		x := sec(s, q.SendNs)
		if !math.IsNaN(x) && !math.IsNaN(y) {
			pts = append(pts, pt{x, y})
		}
	}
	slices.SortFunc(pts, func(a, b pt) int { return cmpFloat(a.x, b.x) })
	xs, ys := make([]float64, len(pts)), make([]float64, len(pts))
	for i, p := range pts {
		xs[i], ys[i] = p.x, p.y
	}
	a, b := LTTB(xs, ys, maxScatter)
	return a, b
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func isOK(q *Request) bool     { return q.OK }
func isFailed(q *Request) bool { return !q.OK }

// quantileChart is the percentile curve of each named value list, p50/p90/p99 marked.
func quantileChart(id, section, title, caption, unit string, labels []string, values [][]float64) (Chart, bool) {
	n := 0
	for _, v := range values {
		n = max(n, len(v))
	}
	if n == 0 {
		return Chart{}, false
	}
	g := quantileGrid(n)
	c := Chart{ID: id, Section: section, Title: title, Caption: caption, X: Axis{Label: "percentile", Kind: "quantile"},
		Y: Axis{Label: unit}, Data: []column{g}, Marks: percentileMarks(g)}
	for i, v := range values {
		if len(v) == 0 {
			continue
		}
		c.Series = append(c.Series, Series{Label: labels[i], Style: "line"})
		c.Data = append(c.Data, quantiles(sortedCopy(v), g))
	}
	return c, true
}

func lagCharts(s *analyze.Summary, r *Records) []Chart {
	lag := r.values(FScheduleLag, nil)
	if len(lag) == 0 {
		return nil
	}
	var out []Chart
	if c, ok := quantileChart("lag_cdf", secLag, "Schedule lag by percentile",
		"How late each request was sent against its planned instant (send − intended), by percentile: a flat curve near 0 ms means the schedule was kept; the verdict's bound applies to the p99 of the dispatch lag.",
		"ms", []string{"schedule lag"}, [][]float64{lag}); ok {
		out = append(out, c)
	}
	x, y := scatter(s, r, FScheduleLag, nil, nil)
	out = append(out, Chart{ID: "lag_time", Section: secLag, Title: "Schedule lag over time", Time: true,
		Caption: "Each dot is a request at its send time: lag that grows over the run means the client fell further behind.",
		X:       Axis{Label: "time since start (s)"}, Y: Axis{Label: "ms"},
		Series: []Series{{Label: "schedule lag", Style: "points"}}, Data: []column{x, y}})
	return out
}

// latencyMetrics are the per-request latencies charted over time and by percentile.
var latencyMetrics = []struct {
	f        Field
	title    string
	corrects Field // the coordinated-omission-corrected variant, or -1
}{
	{FTTFT, "Time to first token", FCorrectedTTFT},
	{FTTFO, "Time to first output token", -1},
	{FITL, "Inter-token latency", -1},
	{FLatency, "Request latency", -1},
}

func latencyCharts(s *analyze.Summary, r *Records) []Chart {
	var out []Chart
	for _, m := range latencyMetrics {
		vals := r.values(m.f, isOK)
		if len(vals) == 0 {
			continue
		}
		// Time to first output token differs from TTFT only with reasoning.
		if m.f == FTTFO && slices.Equal(vals, r.values(FTTFT, isOK)) {
			continue
		}
		tag := m.f.Tag()
		labels, lists := []string{tag}, [][]float64{vals}
		caption := fmt.Sprintf("%s of each successful request by percentile (HdrHistogram style: the tail is stretched to the right); the marks are p50, p90 and p99.", m.title)
		if m.corrects >= 0 {
			if corr := r.values(m.corrects, isOK); len(corr) > 0 && !slices.Equal(corr, vals) {
				labels, lists = append(labels, m.corrects.Tag()), append(lists, corr)
				caption += " The corrected curve counts from each request's planned instant (coordinated omission): where it rises above the plain one, requests waited to be sent."
			}
		}
		if c, ok := quantileChart(tag+"_cdf", secLatency, m.title+" by percentile", caption, "ms", labels, lists); ok {
			out = append(out, c)
		}
		x, y := scatter(s, r, m.f, isOK, nil)
		c := Chart{ID: tag + "_time", Section: secLatency, Title: m.title + " over time", Time: true,
			Caption: fmt.Sprintf("%s of each request at its send time: a band that rises or widens shows when the server slowed down.", m.title),
			X:       Axis{Label: "time since start (s)"}, Y: Axis{Label: "ms"}}
		xs, ys, labs := []column{x}, []column{y}, []Series{{Label: tag, Style: "points"}}
		if m.f == FLatency {
			fx, fy := scatter(s, r, FLatency, isFailed, func(q *Request) float64 {
				if q.SendNs < 0 || q.EndNs < 0 {
					return math.NaN()
				}
				return float64(q.EndNs-q.SendNs) / 1e6
			})
			if len(fx) > 0 {
				xs, ys = append(xs, fx), append(ys, fy)
				labs = append(labs, Series{Label: "failed (time to failure)", Style: "points", Color: "#d62728"})
				c.Caption += " Red dots are failed requests, at the time they took to fail."
			}
		}
		c.Series, c.Data = labs, align(xs, ys)
		out = append(out, c)
	}
	return out
}

func loadCharts(s *analyze.Summary, r *Records) []Chart {
	var sends, ends []float64
	var tokT, tokN []float64
	for i := range r.Requests {
		q := &r.Requests[i]
		a, b := sec(s, q.SendNs), sec(s, q.EndNs)
		if math.IsNaN(a) {
			continue
		}
		sends = append(sends, a)
		if !math.IsNaN(b) {
			ends = append(ends, b)
			if osl := q.Value(FOSL); q.OK && !math.IsNaN(osl) {
				tokT, tokN = append(tokT, b), append(tokN, osl)
			}
		}
	}
	if len(sends) == 0 {
		return nil
	}
	slices.Sort(sends)
	slices.Sort(ends)
	d := duration(s)
	x := grid(0, d, timeGrid)
	inflight := make(column, len(x))
	for i, t := range x {
		inflight[i] = float64(countAtOrBefore(sends, t) - countAtOrBefore(ends, t))
	}
	out := []Chart{{ID: "inflight", Section: secLoad, Title: "Requests in flight", Time: true,
		Caption: "Requests sent and not yet finished: the concurrency the server actually saw.",
		X:       Axis{Label: "time since start (s)"}, Y: Axis{Label: "requests"},
		Series: []Series{{Label: "in flight", Style: "step"}}, Data: []column{x, inflight}}}
	if len(tokT) > 0 {
		out = append(out, tokensChart(d, tokT, tokN))
	}
	return out
}

// rateBinWidth is the width in seconds of the bins a rate over a run of d seconds is drawn
// in: one second up to two minutes (2 to 120 bins), then the step of a clock (1, 2, 3, 5,
// 10, 15, 20, 30 s, 1, 2, 5, 10, 15, 20, 30 min, 1 h, …) that gives 60 to 120 bins; a run
// shorter than two seconds gets 20 bins. Never a sub-second comb of a multi-second run.
func rateBinWidth(d float64) float64 {
	switch {
	case !(d > 0):
		return 1
	case d < 2:
		return d / 20
	case d <= 120:
		return 1
	}
	for _, w := range []float64{2, 3, 5, 10, 15, 20, 30, 60, 120, 300, 600, 900, 1200, 1800} {
		if d/w <= 120 {
			return w
		}
	}
	return 3600 * math.Ceil(d/120/3600)
}

// tokensChart is the output tokens per second over a run of d seconds, from the output
// tokens tokN of the requests that completed at tokT: in bins of rateBinWidth(d), each
// divided by the time it covers (the last bin may be short), and, one click away, the raw
// series: each request's output tokens at its completion.
func tokensChart(d float64, tokT, tokN []float64) Chart {
	w := rateBinWidth(d)
	n := max(1, int(math.Ceil(d/w-1e-9)))
	bx, by := make(column, n), make(column, n)
	for i, t := range tokT {
		by[min(n-1, max(0, int(t/w)))] += tokN[i]
	}
	for i := range by {
		lo := float64(i) * w
		span := math.Min(w, d-lo)
		if span <= 0 {
			span = w
		}
		bx[i] = lo + span/2
		by[i] /= span
	}
	type pt struct{ t, n float64 }
	pts := make([]pt, len(tokT))
	for i := range tokT {
		pts[i] = pt{tokT[i], tokN[i]}
	}
	slices.SortFunc(pts, func(a, b pt) int { return cmpFloat(a.t, b.t) })
	rx, ry := make([]float64, len(pts)), make([]float64, len(pts))
	for i, p := range pts {
		rx[i], ry[i] = p.t, p.n
	}
	raw := "each request's output tokens at its completion"
	if len(rx) > maxScatter {
		raw += fmt.Sprintf(" (%s of %s requests drawn, LTTB)", numfmt.Format(maxScatter), numfmt.Format(float64(len(rx))))
	}
	ax, ay := LTTB(rx, ry, maxScatter)
	return Chart{ID: "tokens_per_sec", Section: secLoad, Title: "Output tokens per second", Time: true,
		Caption: fmt.Sprintf("Output tokens of the requests that completed in each %s s bin, divided by the bin's length: the server's delivered throughput over time. The button shows the raw series: %s.", numfmt.Format(w), raw),
		X:       Axis{Label: "time since start (s)"}, Y: Axis{Label: "tokens/s"},
		Series: []Series{{Label: "output tokens/s", Style: "line"}}, Data: []column{bx, by},
		Raw: &RawView{Button: "raw series: tokens per request", Y: Axis{Label: "tokens"},
			Series: []Series{{Label: "output tokens of a request, at its completion", Style: "points"}}, Data: []column{ax, ay}}}
}

func lengthCharts(r *Records) []Chart {
	var out []Chart
	if isl := r.values(FISL, nil); len(isl) > 0 {
		out = append(out, Chart{ID: "isl_hist", Section: secLengths, Title: "Input sequence length",
			Caption: "How many requests had each input length (tokens): the workload's ISL distribution as sent.",
			X:       Axis{Label: "tokens"}, Y: Axis{Label: "requests"},
			Series: []Series{{Label: "ISL", Style: "bars"}}, Data: histogram(isl)})
	}
	osl := r.values(FOSL, isOK)
	if len(osl) == 0 {
		return out
	}
	var requested []float64
	for i := range r.Requests {
		q := &r.Requests[i]
		if p, o := q.Value(FOSLMismatchPct), q.Value(FOSL); q.OK && !math.IsNaN(p) && !math.IsNaN(o) && p > -100 {
			requested = append(requested, math.Round(o/(1+p/100)))
		}
	}
	c := Chart{ID: "osl_hist", Section: secLengths, Title: "Output sequence length",
		Caption: "How many requests received each output length (tokens).",
		X:       Axis{Label: "tokens"}, Y: Axis{Label: "requests"}, Series: []Series{{Label: "received OSL", Style: "bars"}}}
	if len(requested) > 0 {
		c.Caption += " The requested curve is the plan's max_tokens: a gap between them means the server stopped early or ran long."
		c.Series = append(c.Series, Series{Label: "requested OSL", Style: "step", Color: "#888888"})
		c.Data = histogram(osl, requested)
	} else {
		c.Caption += " The requested lengths are not known (the plan set no max_tokens)."
		c.Data = histogram(osl)
	}
	return append(out, c)
}

// telemetryCharts draw Summary.ServerSeries (S1: the server's metrics and the GPUs', NVML or
// DCGM, under stable names), one chart per name, the GPU ones first, on the run's time axis.
func telemetryCharts(s *analyze.Summary) []Chart {
	var names []string
	by := map[string][]analyze.ServerMetricSeries{}
	for _, m := range s.ServerSeries {
		if len(m.T) == 0 {
			continue
		}
		if _, seen := by[m.Name]; !seen {
			names = append(names, m.Name)
		}
		by[m.Name] = append(by[m.Name], m)
	}
	isGPU := func(n string) bool { return strings.HasPrefix(n, "gpu.") }
	slices.SortStableFunc(names, func(a, b string) int {
		switch {
		case isGPU(a) == isGPU(b):
			return 0
		case isGPU(a):
			return -1
		}
		return 1
	})
	var out []Chart
	for _, name := range names {
		var xs, ys []column
		var series []Series
		for _, m := range by[name] {
			a, b := LTTB(m.T, m.V, maxLine)
			xs, ys = append(xs, a), append(ys, b)
			label := name
			if m.Labels != "" {
				label = m.Labels
			}
			series = append(series, Series{Label: label, Style: "line"})
		}
		first := by[name][0]
		title, caption := "Server: "+strings.TrimPrefix(name, "server."), fmt.Sprintf("%s as scraped from the server during the run (%s), on the run's time axis: read a latency spike against it.", name, first.Kind)
		if isGPU(name) {
			title = "GPU " + strings.ReplaceAll(strings.TrimPrefix(name, "gpu."), "_", " ")
			caption = fmt.Sprintf("%s per GPU (NVML or DCGM samples) on the run's time axis: read a latency spike against it.", title)
		}
		out = append(out, Chart{ID: "telemetry_" + strings.NewReplacer(".", "_", ":", "_").Replace(name), Section: secGPU,
			Title: title, Caption: caption, Time: true,
			X: Axis{Label: "time since start (s)"}, Y: Axis{Label: first.Unit}, Series: series, Data: align(xs, ys)})
	}
	return out
}

func sliceChart(s *analyze.Summary) (Chart, bool) {
	if len(s.Slices) == 0 {
		return Chart{}, false
	}
	x := make(column, len(s.Slices))
	p50, p99 := make(column, len(s.Slices)), make(column, len(s.Slices))
	for i, sl := range s.Slices {
		x[i] = float64(sl.StartUnixNs-s.StartUnixNs) / 1e9
		p50[i], p99[i] = sliceValue(sl, "time_to_first_token", "p50"), sliceValue(sl, "time_to_first_token", "p99")
	}
	return Chart{ID: "slices", Section: secSlices, Title: "Time to first token per time slice", Time: true,
		Caption: "TTFT p50 and p99 of the requests sent in each slice (--slice-duration), at the slice's start.",
		X:       Axis{Label: "time since start (s)"}, Y: Axis{Label: "ms"},
		Series: []Series{{Label: "p50", Style: "bars"}, {Label: "p99", Style: "bars"}}, Data: []column{x, p50, p99}}, true
}
