package report

import (
	"fmt"
	"math"
	"slices"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/analyze/servertime"
)

// secServer is the section of the charts that answer "why is TTFT high?" from the server's
// own spans joined to the requests (analyze/servertime).
const secServer = "Why is TTFT high? (server traces)"

// maxWaterfall is how many of the slowest requests the waterfall shows.
const maxWaterfall = 12

// Colours of the phases, the same in every chart.
const (
	colQueue   = "#d62728"
	colPrefill = "#ff7f0e"
	colOther   = "#bcbd22"
	colOutside = "#1f77b4"
	colDecode  = "#2ca02c"
	colDeliver = "#9467bd"
)

// phases are one request's TTFT and latency split by the server's span, in ms.
type phases struct {
	ttft, latency                  float64
	queue, prefill, other, outside float64
	decode, deliver                float64
	sendNs                         int64
}

// joinedPhases are the requests with a server span and a TTFT: queue + prefill + other
// server time (the server's TTFT beyond queue and prefill, 0 when they exceed it) + outside
// = TTFT; decode and the delivery after it (latency − TTFT − decode, at least 0).
func joinedPhases(r *Records) []phases {
	if r == nil || r.user == nil {
		return nil
	}
	col := func(tag string) []float32 { return r.user[tag] }
	queue, prefill, serverTTFT, outside, decode := col(servertime.TagQueue), col(servertime.TagPrefill), col(servertime.TagTTFT),
		col(servertime.TagOutside), col(servertime.TagDecode)
	if queue == nil || serverTTFT == nil || outside == nil {
		return nil
	}
	at := func(c []float32, i int) (float64, bool) {
		if c == nil {
			return 0, false
		}
		v := float64(c[i])
		return v, !math.IsNaN(v) && !math.IsInf(v, 0)
	}
	var out []phases
	for i := range r.Requests {
		q := &r.Requests[i]
		ttft := q.Value(FTTFT)
		qu, ok1 := at(queue, i)
		st, ok2 := at(serverTTFT, i)
		os, ok3 := at(outside, i)
		if !q.OK || math.IsNaN(ttft) || !ok1 || !ok2 || !ok3 {
			continue
		}
		p := phases{ttft: ttft, queue: qu, outside: os, sendNs: q.SendNs}
		p.prefill, _ = at(prefill, i)
		p.other = math.Max(0, st-qu-p.prefill)
		p.decode, _ = at(decode, i)
		if lat := q.Value(FLatency); !math.IsNaN(lat) {
			p.latency = lat
			p.deliver = math.Max(0, lat-ttft-p.decode)
		}
		out = append(out, p)
	}
	return out
}

// serverTraceCharts are the section's charts, none when no request was joined to a span.
func serverTraceCharts(s *analyze.Summary, r *Records) []Chart {
	ph := joinedPhases(r)
	if len(ph) == 0 {
		return nil
	}
	out := []Chart{ttftBands(ph)}
	out = append(out, queueTimeline(s, ph))
	return append(out, waterfall(ph))
}

// stacked adds the stacked series of parts (bottom first) to c, each column the running
// sum up to it, drawn top first so that each part shows as its own band.
func stacked(c *Chart, labels, colors []string, parts [][]float64) {
	sum := make([][]float64, len(parts))
	for k := range parts {
		sum[k] = make([]float64, len(parts[k]))
		for i, v := range parts[k] {
			sum[k][i] = v
			if k > 0 {
				sum[k][i] += sum[k-1][i]
			}
		}
	}
	for k := len(parts) - 1; k >= 0; k-- {
		c.Series = append(c.Series, Series{Label: labels[k] + " (cumulative)", Style: "stack", Color: colors[k]})
		c.Data = append(c.Data, sum[k])
	}
}

// ttftBands splits the TTFT of the requests at p50, p90 and p99 of TTFT (the mean of the
// requests ranked within a percentile point of each) into queue, prefill, other server time
// and outside the server.
func ttftBands(ph []phases) Chart {
	slices.SortFunc(ph, func(a, b phases) int { return cmpFloat(a.ttft, b.ttft) })
	n := len(ph)
	pcts := []float64{50, 90, 99}
	// x: the quantile axis (−log10(1−q)), padded so the outer bars are whole.
	x := column{0, math.Log10(2), 1, 2, 2.4}
	parts := make([][]float64, 4)
	for k := range parts {
		parts[k] = []float64{math.NaN(), 0, 0, 0, math.NaN()}
	}
	caption := "Each bar is the TTFT of the requests at that percentile of TTFT (the mean of those ranked within one percentile point of it), split by the server's own span: queue (waiting for a batch slot), prefill, other server time (the server's TTFT beyond both), outside the server (network, HTTP, client: our TTFT minus the server's). The tallest band is where the time went."
	for j, p := range pcts {
		lo := int(math.Floor((p - 1) / 100 * float64(n)))
		hi := int(math.Ceil((p + 1) / 100 * float64(n)))
		lo, hi = max(0, min(lo, n-1)), max(1, min(hi, n))
		if hi <= lo {
			hi = lo + 1
		}
		sel := ph[lo:hi]
		var q, pf, o, out float64
		for _, r := range sel {
			q, pf, o, out = q+r.queue, pf+r.prefill, o+r.other, out+r.outside
		}
		m := float64(len(sel))
		for k, v := range []float64{q / m, pf / m, o / m, out / m} {
			parts[k][j+1] = v
		}
		caption += fmt.Sprintf(" p%g: %d requests.", p, len(sel))
	}
	c := Chart{ID: "ttft_split", Section: secServer, Title: "TTFT split at p50, p90, p99", Caption: caption,
		X: Axis{Label: "percentile of TTFT", Kind: "quantile"}, Y: Axis{Label: "ms"}, Data: []column{x}}
	stacked(&c, []string{"queue", "prefill", "other server", "outside server"}, []string{colQueue, colPrefill, colOther, colOutside}, parts)
	return c
}

// queueTimeline is each request's server queue time over its send time, against the
// server's requests_waiting gauge (vllm:num_requests_waiting) when the run scraped it.
func queueTimeline(s *analyze.Summary, ph []phases) Chart {
	slices.SortFunc(ph, func(a, b phases) int { return cmp64(a.sendNs, b.sendNs) })
	var xs, ys []float64
	for _, p := range ph {
		if x := sec(s, p.sendNs); !math.IsNaN(x) {
			xs, ys = append(xs, x), append(ys, p.queue)
		}
	}
	a, b := LTTB(xs, ys, maxScatter)
	cx, cy := []column{a}, []column{b}
	series := []Series{{Label: "server queue time (ms)", Style: "points", Color: colQueue}}
	c := Chart{ID: "server_queue_time", Section: secServer, Title: "Server queue time against requests waiting", Time: true,
		X: Axis{Label: "time since start (s)"}, Y: Axis{Label: "ms"}}
	caption := "Each request's time in the server's queue (its span) at the instant it was sent."
	waiting := false
	for _, m := range s.ServerSeries {
		if (m.Name == "requests_waiting" || m.Name == "server.requests_waiting") && len(m.T) > 0 {
			wa, wb := LTTB(m.T, m.V, maxLine)
			cx, cy = append(cx, wa), append(cy, wb)
			label := "requests waiting"
			if m.Labels != "" {
				label += " " + m.Labels
			}
			series = append(series, Series{Label: label, Style: "line", Color: "#555555", Y2: true})
			waiting = true
		}
	}
	if waiting {
		c.Y2 = &Axis{Label: "requests waiting"}
		caption += " The line is the server's requests waiting (vllm:num_requests_waiting, right axis) as scraped: a queue time that rises with it is a server short of batch slots."
	} else {
		caption += " The run scraped no requests-waiting gauge from the server (replay --server-metrics-url), so none is drawn against it."
	}
	c.Caption, c.Series, c.Data = caption, series, align(cx, cy)
	return c
}

func cmp64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// waterfall is the phases of the slowest requests (by request latency), one stacked bar
// each in the order they happen: queue, prefill, other server time, outside the server
// (to the first token), server decode, delivery (the rest of our latency).
func waterfall(ph []phases) Chart {
	slices.SortFunc(ph, func(a, b phases) int { return cmpFloat(b.latency, a.latency) })
	n := min(len(ph), maxWaterfall)
	x := make(column, n)
	parts := make([][]float64, 6)
	for k := range parts {
		parts[k] = make([]float64, n)
	}
	for i, p := range ph[:n] {
		x[i] = float64(i + 1)
		for k, v := range []float64{p.queue, p.prefill, p.other, p.outside, p.decode, p.deliver} {
			parts[k][i] = v
		}
	}
	c := Chart{ID: "server_waterfall", Section: secServer, Title: fmt.Sprintf("The %d slowest requests, phase by phase", n),
		Caption: "The requests with the highest request latency, slowest first; each bar stacks the request's phases in the order they happen: queue, prefill, other server time, outside the server up to the first token, the server's decode, and the delivery after it (our latency beyond TTFT and the server's decode).",
		X:       Axis{Label: "slowest requests (rank)"}, Y: Axis{Label: "ms"}, Data: []column{x}}
	stacked(&c, []string{"queue", "prefill", "other server", "outside server", "server decode", "delivery"},
		[]string{colQueue, colPrefill, colOther, colOutside, colDecode, colDeliver}, parts)
	return c
}
