package analyze

import (
	"strconv"
	"strings"
	"testing"
)

// objectives are the SLOs of spec, "tag:threshold ..." (the --goodput syntax without its
// checks, which analyze/judge parses), on reg's metrics (nil: the built-ins).
func objectives(reg *Registry, spec string) []SLO {
	var out []SLO
	for _, f := range strings.Fields(spec) {
		tag, val, _ := strings.Cut(f, ":")
		d, ok := reg.Lookup(tag)
		v, err := strconv.ParseFloat(val, 64)
		if !ok || err != nil {
			panic("objective " + f)
		}
		out = append(out, SLO{Metric: d, Threshold: v})
	}
	return out
}

// testRegistry is analyzetest.Registry: the built-ins plus one user metric, "first_gap_ms"
// (set by output_hookup_test.go: an in-package test cannot import analyzetest).
var testRegistry func(t testing.TB) *Registry

// SetTestRegistry sets testRegistry (from the external test package).
func SetTestRegistry(f func(t testing.TB) *Registry) { testRegistry = f }

// A goodput objective on a multimodal metric is judged on the request's value: every
// request of this run takes about 50 ms for its 2 images (about 25 ms an image), so all are
// good under 1000 ms an image. Before the registry, the multimodal values were set after
// goodness was judged, and no request was ever good.
func TestGoodputOnMultimodalMetric(t *testing.T) {
	sc := scenario{n: 12, workers: 1, ttft: 20 * ms, itl: 5 * ms, tokens: 6, concurrency: 3, streaming: true, images: 2}
	slos := objectives(nil, "image_latency:1000 num_images:2")
	s, _ := analyseDir(t, Options{Goodput: slos}, sc.build(t, t.TempDir()))
	good, _ := s.Result("good_request_count")
	if good == nil || good.Value != 12 {
		t.Fatalf("good requests %+v; want all 12", good)
	}
}

// A goodput objective on an alias (genai_perf_time_to_first_token reports
// time_to_first_output_token's values) is judged on the values it reports; before the
// registry, its id was past the per-request values and the analysis panicked.
func TestGoodputOnAlias(t *testing.T) {
	sc := scenario{n: 12, workers: 1, ttft: 20 * ms, itl: 5 * ms, tokens: 6, concurrency: 3, streaming: true}
	slos := objectives(nil, "genai_perf_time_to_first_token:20.3")
	ref := objectives(nil, "time_to_first_output_token:20.3")
	dir := sc.build(t, t.TempDir())
	s, _ := analyseDir(t, Options{Goodput: slos}, dir)
	r, _ := analyseDir(t, Options{Goodput: ref}, dir)
	good, _ := s.Result("good_request_count")
	want, _ := r.Result("good_request_count")
	if good == nil || want == nil || good.Value != want.Value || want.Value == 0 || want.Value == 12 {
		t.Fatalf("good requests %+v; want %+v (some, not all)", good, want)
	}
}

// Goodput counts the requests meeting every SLO over the benchmark duration.
func TestGoodputCounts(t *testing.T) {
	sc := scenario{n: 30, workers: 1, ttft: 20 * ms, itl: 5 * ms, tokens: 6, concurrency: 3, streaming: true}
	// TTFT jitter is (i*31%7)*0.1 ms: 20.0 … 20.6 ms. Requests with TTFT ≤ 20.3 ms are good.
	slos := objectives(nil, "time_to_first_token:20.3")
	s, _ := analyseDir(t, Options{Goodput: slos}, sc.build(t, t.TempDir()))
	want := 0
	for i := 0; i < 30; i++ {
		if i*31%7 <= 3 {
			want++
		}
	}
	good, _ := s.Result("good_request_count")
	gp, _ := s.Result("goodput")
	dur, _ := s.Result("benchmark_duration")
	if int(good.Value) != want || gp.Value != float64(want)/dur.Value {
		t.Fatalf("good %v goodput %v (duration %v); want %d", good.Value, gp.Value, dur.Value, want)
	}
}

// TestSLODirections: a request meets an objective at most its threshold, or at least it where
// larger is better (throughputs).
func TestSLODirections(t *testing.T) {
	slos := objectives(nil, "time_to_first_token:400 output_token_throughput_per_user:50")
	if !slos[0].met(399) || slos[0].met(401) || !slos[1].met(51) || slos[1].met(49) {
		t.Fatal("SLO directions wrong")
	}
}
