package report

import (
	"bytes"
	"math"
	"testing"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/analyze/servertime"
)

// withServerSpans returns run's records with server-span metrics joined: request i waited
// in the queue (i%10)/10 of its TTFT less 2 ms outside the server, the rest of the server's
// TTFT is prefill; the summary gets a requests_waiting gauge.
func withServerSpans(t *testing.T, run Run) Run {
	t.Helper()
	recs := *run.Records
	n := len(recs.Requests)
	cols := map[string][]float32{}
	for _, tag := range []string{servertime.TagQueue, servertime.TagPrefill, servertime.TagDecode, servertime.TagTTFT, servertime.TagOutside} {
		cols[tag] = make([]float32, n)
	}
	for i := range recs.Requests {
		q := &recs.Requests[i]
		ttft, lat := q.Value(FTTFT), q.Value(FLatency)
		if !q.OK || math.IsNaN(ttft) {
			for _, c := range cols {
				c[i] = float32(math.NaN())
			}
			continue
		}
		server := math.Max(0, ttft-2)
		queue := server * float64(i%10) / 10
		cols[servertime.TagQueue][i] = float32(queue)
		cols[servertime.TagPrefill][i] = float32(server - queue)
		cols[servertime.TagTTFT][i] = float32(server)
		cols[servertime.TagOutside][i] = float32(ttft - server)
		cols[servertime.TagDecode][i] = float32(math.Max(0, lat-ttft-0.5))
	}
	recs.user = cols
	s := *run.Summary
	s.ServerSeries = append(s.ServerSeries, analyze.ServerMetricSeries{Name: "requests_waiting", Unit: "requests", Kind: "gauge",
		T: []float64{0, 1, 2, 3}, V: []float64{0, 4, 9, 2}})
	return Run{Name: run.Name, Summary: &s, Records: &recs}
}

func chartByID(charts []Chart, id string) (Chart, bool) {
	for _, c := range charts {
		if c.ID == id {
			return c, true
		}
	}
	return Chart{}, false
}

// TestServerTraceCharts: the TTFT split's bars add up to the TTFT of the requests at each
// percentile, queue time is drawn against requests waiting, the waterfall holds the slowest
// requests; a run without server spans has none of these charts.
func TestServerTraceCharts(t *testing.T) {
	base := analyseFixture(t, "rate-a", 0)
	if _, ok := chartByID(BuildRun(RunInput{Summary: base.Summary, Records: base.Records}).Charts, "ttft_split"); ok {
		t.Fatal("a run without server spans has a TTFT split")
	}
	run := withServerSpans(t, base)
	charts := BuildRun(RunInput{Summary: run.Summary, Records: run.Records}).Charts
	split, ok := chartByID(charts, "ttft_split")
	if !ok || len(split.Series) != 4 || split.Section != secServer {
		t.Fatalf("TTFT split: %+v", split)
	}
	ttfts := sortedCopy(run.Records.values(FTTFT, isOK))
	for j, p := range []float64{50, 90, 99} {
		top := split.Data[1][j+1] // the cumulative sum of every part: the band's mean TTFT
		lo, hi := ttfts[int(math.Floor((p-1)/100*float64(len(ttfts))))], ttfts[min(len(ttfts)-1, int(math.Ceil((p+1)/100*float64(len(ttfts)))))]
		if !(top >= lo-1e-3 && top <= hi+1e-3) {
			t.Fatalf("p%g: the bar's top %v is not a TTFT of the band [%v, %v]", p, top, lo, hi)
		}
		for k := 1; k < 4; k++ { // each running sum at most the one above it
			if split.Data[k+1][j+1] > split.Data[k][j+1]+1e-9 {
				t.Fatalf("p%g: parts are not stacked: %v", p, split.Data)
			}
		}
	}
	tl, ok := chartByID(charts, "server_queue_time")
	if !ok || tl.Y2 == nil || len(tl.Series) != 2 || !tl.Series[1].Y2 {
		t.Fatalf("queue timeline: %+v", tl)
	}
	wf, ok := chartByID(charts, "server_waterfall")
	if !ok || len(wf.Data[0]) != maxWaterfall || len(wf.Series) != 6 {
		t.Fatalf("waterfall: %+v", wf)
	}
	lats := sortedCopy(run.Records.values(FLatency, isOK))
	if slowest := wf.Data[1][0]; math.Abs(slowest-lats[len(lats)-1]) > 0.01 {
		t.Fatalf("the first waterfall bar is %v ms, the slowest request's latency %v", slowest, lats[len(lats)-1])
	}
}

// TestBrowserServerTraces opens a run page with server spans: every chart draws, the
// stacked bars and the second axis included.
func TestBrowserServerTraces(t *testing.T) {
	bctx := browser(t)
	run := withServerSpans(t, analyseFixture(t, "rate-a", 0))
	path := writeHTML(t, "report.html", func(w *bytes.Buffer) error {
		return WriteRun(w, RunInput{Summary: run.Summary, Records: run.Records})
	})
	res := openPage(t, bctx, path)
	seen := map[string]bool{}
	for _, c := range res.charts {
		seen[c.ID] = true
	}
	for _, id := range []string{"ttft_split", "server_queue_time", "server_waterfall"} {
		if !seen["chart-"+id] {
			t.Errorf("chart %s not drawn (charts %v)", id, seen)
		}
	}
	screenshot(t, res, "report-server-traces.png")
}
