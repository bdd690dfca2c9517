package analyze

import "testing"

// A goodput objective on a multimodal metric is judged on the request's value: every
// request of this run takes about 50 ms for its 2 images (about 25 ms an image), so all are
// good under 1000 ms an image. Before the registry, the multimodal values were set after
// goodness was judged, and no request was ever good.
func TestGoodputOnMultimodalMetric(t *testing.T) {
	sc := scenario{n: 12, workers: 1, ttft: 20 * ms, itl: 5 * ms, tokens: 6, concurrency: 3, streaming: true, images: 2}
	slos, err := ParseGoodput("image_latency:1000 num_images:2")
	if err != nil {
		t.Fatal(err)
	}
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
	slos, err := ParseGoodput("genai_perf_time_to_first_token:20.3")
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := ParseGoodput("time_to_first_output_token:20.3")
	dir := sc.build(t, t.TempDir())
	s, _ := analyseDir(t, Options{Goodput: slos}, dir)
	r, _ := analyseDir(t, Options{Goodput: ref}, dir)
	good, _ := s.Result("good_request_count")
	want, _ := r.Result("good_request_count")
	if good == nil || want == nil || good.Value != want.Value || want.Value == 0 || want.Value == 12 {
		t.Fatalf("good requests %+v; want %+v (some, not all)", good, want)
	}
}
