package serverside

import (
	"math"
	"testing"
)

func TestHistQuantile(t *testing.T) {
	b := map[float64]float64{0.01: 10, 0.1: 60, 1: 100, math.Inf(1): 100}
	for _, c := range []struct{ q, want float64 }{
		{0.05, 0.005},  // inside the first bucket, from 0
		{0.5, 0.082},   // 50th of 100: 40 of the 50 in (0.01, 0.1]
		{0.99, 0.9775}, // 99th: 39 of the 40 in (0.1, 1]
	} {
		if got := histQuantile(b, c.q); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("q %v: %v, want %v", c.q, got, c.want)
		}
	}
	if got := histQuantile(map[float64]float64{1: 1, math.Inf(1): 5}, 0.99); got != 1 {
		t.Errorf("a rank in +Inf gives %v, want the largest finite bound 1", got)
	}
	if got := histQuantile(map[float64]float64{1: 0}, 0.5); !math.IsNaN(got) {
		t.Errorf("no observations: %v", got)
	}
}

// Window statistics: gauges over the points inside, counters as a rate over the bracketing
// points with a reset counted from zero, histograms from the bucket increases.
func TestWindowMetrics(t *testing.T) {
	s := int64(1e9)
	gauge := &sourceSeries{name: "server.kv_cache_usage", unit: "ratio", kind: "gauge", source: "vllm:kv_cache_usage_perc", scale: 1,
		pts: []scrapePoint{{t: 0, v: 0.9}, {t: 1 * s, v: 0.1}, {t: 2 * s, v: 0.3}, {t: 3 * s, v: 0.5}, {t: 4 * s, v: 0.9}}}
	counter := &sourceSeries{name: "server.generation_tokens", unit: "tokens/s", kind: "counter", scale: 1,
		pts: []scrapePoint{{t: 0, v: 100}, {t: 1 * s, v: 200}, {t: 2 * s, v: 50}, {t: 3 * s, v: 150}}} // reset after 1 s
	hist := &sourceSeries{name: "server.server_ttft", unit: "ms", kind: "histogram", scale: 1000,
		pts: []scrapePoint{{t: 0, sum: 1, count: 10, buckets: []histBucket{{0.01, 5}, {0.1, 10}, {math.Inf(1), 10}}},
			{t: 3 * s, sum: 3, count: 30, buckets: []histBucket{{0.01, 5}, {0.1, 30}, {math.Inf(1), 30}}}}}
	origins := byOrigin([]*sourceSeries{gauge, counter, hist})
	ms := windowMetrics(origins, 1*s, 3*s)
	by := map[string]Metric{}
	for _, m := range ms {
		by[m.Name] = m
	}
	g := by["server.kv_cache_usage"]
	if math.Abs(g.Avg-0.3) > 1e-12 || g.Min != 0.1 || g.Max != 0.5 || g.Samples != 3 {
		t.Errorf("gauge %+v: want the 3 points in [1 s, 3 s]", g)
	}
	// Bracketed by the points at 1 s and 3 s: 50 counted from zero after the reset, then 100,
	// over 2 s.
	if c := by["server.generation_tokens"]; c.Rate != 75 {
		t.Errorf("counter rate %v, want 75", c.Rate)
	}
	// 20 new observations, all in (0.01, 0.1]: mean 100 ms, p50 at 0.055 s.
	h := by["server.server_ttft"]
	if math.Abs(h.Avg-100) > 1e-9 || math.Abs(h.P50-55) > 1e-9 || h.Samples != 20 {
		t.Errorf("histogram %+v", h)
	}
	if _, ok := h.Stat("max"); ok {
		t.Error("a histogram has a max")
	}
	ser := origins[1].series(0)
	if len(ser.V) != 3 || ser.V[0] != 100 || ser.V[1] != 50 || ser.V[2] != 100 {
		t.Errorf("counter series %+v: want the rate per interval, the reset counted from zero", ser)
	}
}

// Window statistics over values that are not finite or near the float64 limit never fail
// and never become a wrong finite number: a gauge whose every point is NaN has NaN
// statistics, +Inf points make the statistics they reach +Inf, a counter's rate and a
// histogram's mean stay finite when their increases only look like overflowing, and a rate
// from a counter stuck at +Inf is NaN.
func TestWindowMetricsNonFinite(t *testing.T) {
	s := int64(1e9)
	inf, nan := math.Inf(1), math.NaN()
	pts := func(vs ...float64) []scrapePoint {
		var out []scrapePoint
		for i, v := range vs {
			out = append(out, scrapePoint{t: int64(i) * s, v: v})
		}
		return out
	}
	series := []*sourceSeries{
		{name: "server.requests_waiting", kind: "gauge", scale: 1, origin: "a", pts: pts(nan, nan, nan)},
		{name: "server.requests_running", kind: "gauge", scale: 1, origin: "a", pts: pts(1, inf, 3)},
		{name: "server.kv_cache_usage", kind: "gauge", scale: 1, origin: "a", pts: pts(1.7e308, -1.7e308, 1.7e308)},
		// 1.7e308 tokens in 2 s, from -1.7e308: the increase overflows, the rate does not.
		{name: "server.generation_tokens", kind: "counter", scale: 1, origin: "a", pts: pts(-0.85e308, 0, 0.85e308)},
		{name: "server.prompt_tokens", kind: "counter", scale: 1, origin: "a", pts: pts(inf, inf, inf)},
		{name: "server.server_ttft", kind: "histogram", scale: 1000, origin: "a", pts: []scrapePoint{
			{t: 0, sum: -1.7e308, count: 0, buckets: []histBucket{{1e308, 0}, {inf, 0}}},
			{t: 2 * s, sum: 1.7e308, count: 4e300, buckets: []histBucket{{1e308, 4e300}, {inf, 4e300}}}}},
	}
	by := map[string]Metric{}
	for _, m := range windowMetrics(byOrigin(series), 0, 2*s) {
		by[m.Name] = m
	}
	if w := by["server.requests_waiting"]; !w.Present || !math.IsNaN(w.Avg) || !math.IsNaN(w.Max) {
		t.Errorf("all-NaN gauge %+v, want NaN statistics", w)
	}
	if r := by["server.requests_running"]; r.Min != 1 || !math.IsInf(r.Max, 1) || !math.IsInf(r.Avg, 1) || r.Samples != 3 {
		t.Errorf("gauge with +Inf %+v", r)
	}
	if k := by["server.kv_cache_usage"]; math.Abs(k.Avg-1.7e308/3)/k.Avg > 1e-12 || k.Max != 1.7e308 || math.IsNaN(k.P50) {
		t.Errorf("gauge near the limit %+v", k)
	}
	if g := by["server.generation_tokens"]; math.Abs(g.Rate-0.85e308)/g.Rate > 1e-12 {
		t.Errorf("counter rate %v, want 0.85e308/s", g.Rate)
	}
	if p := by["server.prompt_tokens"]; !math.IsNaN(p.Rate) {
		t.Errorf("counter stuck at +Inf: rate %v, want NaN", p.Rate)
	}
	if h := by["server.server_ttft"]; math.IsNaN(h.Avg) || math.IsInf(h.Avg, 0) || math.Abs(h.Avg-3.4e308/4e300*1000)/h.Avg > 1e-12 {
		t.Errorf("histogram mean %v, want Δsum/Δcount = 3.4e308/4e300 s in ms", h.Avg)
	}
	if got := histQuantile(map[float64]float64{-1e308: 0, 1e308: 10, inf: 10}, 0.5); got != 0 {
		t.Errorf("quantile between bounds spanning float64: %v, want 0", got)
	}
	if got := histQuantile(map[float64]float64{1: inf, inf: inf}, 0.5); !math.IsNaN(got) {
		t.Errorf("quantile of infinitely many observations: %v, want NaN", got)
	}
}
