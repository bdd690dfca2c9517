package mockllm

import (
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/llmbench/llmbench/servermetrics"
)

// scrapeVLLM reads the server's /metrics with the scraper's parser: the vLLM names by sample
// name (labels dropped; the mock's vLLM series have none but a histogram's le).
func scrapeVLLM(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	s, err := servermetrics.Parse(b, resp.Header.Get("Content-Type"))
	if err != nil {
		t.Fatalf("/metrics does not parse as Prometheus text: %v", err)
	}
	out := map[string]float64{}
	for _, x := range s {
		if le, ok := x.Labels["le"]; ok {
			out[x.Name+"{le="+le+"}"] = x.V
			continue
		}
		out[x.Name] = x.V
	}
	return out
}

// The simulated KV cache holds the running requests' prompt tokens (and their output as it
// is sent) over KVCacheTokens; a queued request holds none. The TTFT and e2e histograms count
// every request, from its arrival.
func TestVLLMMetrics(t *testing.T) {
	o := testOptions()
	o.MaxBatch = 1
	o.KVCacheTokens = 1000
	o.TTFT = 300 * time.Millisecond
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + serveOn(t, s)
	prompt := "one two three four five six seven eight nine ten"
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := map[string]any{"messages": []map[string]any{{"role": "user", "content": prompt}}, "max_tokens": 2, "stream": true}
			resp := post(t, url+"/v1/chat/completions", body)
			_, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
		}()
	}
	var during map[string]float64
	for deadline := time.Now().Add(30 * time.Second); during == nil && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if st := s.Stats(); st.Running == 1 && st.Waiting == 1 {
			during = scrapeVLLM(t, url)
		}
	}
	if during == nil {
		t.Fatal("never saw one running and one waiting")
	}
	prompt1 := float64(fakeTok.Count(prompt))
	if during["vllm:num_requests_running"] != 1 || during["vllm:num_requests_waiting"] != 1 {
		t.Errorf("running %v waiting %v", during["vllm:num_requests_running"], during["vllm:num_requests_waiting"])
	}
	// The template around the prompt adds tokens of its own: at least the prompt's, one
	// request's worth (the queued one holds nothing).
	if kv := during["vllm:kv_cache_usage_perc"]; kv < prompt1/1000 || kv > 3*prompt1/1000 {
		t.Errorf("kv_cache_usage_perc %v while one request of ≥ %v prompt tokens runs", kv, prompt1)
	}
	wg.Wait()
	after := scrapeVLLM(t, url)
	if after["vllm:kv_cache_usage_perc"] != 0 || after["vllm:num_preemptions_total"] != 0 {
		t.Errorf("after: kv %v preemptions %v", after["vllm:kv_cache_usage_perc"], after["vllm:num_preemptions_total"])
	}
	if after["vllm:time_to_first_token_seconds_count"] != 2 || after["vllm:e2e_request_latency_seconds_count"] != 2 {
		t.Errorf("histogram counts ttft %v e2e %v, want 2", after["vllm:time_to_first_token_seconds_count"], after["vllm:e2e_request_latency_seconds_count"])
	}
	// Both waited at least TTFT (0.3 s); the queued one also the first's whole request.
	if n := after["vllm:time_to_first_token_seconds_bucket{le=0.25}"]; n != 0 {
		t.Errorf("%v TTFTs under 0.25 s with a 300 ms TTFT", n)
	}
	if after["vllm:time_to_first_token_seconds_sum"] < 0.8 {
		t.Errorf("TTFT sum %v s, want about 0.3 + 0.6 (the queued one waited for the first)", after["vllm:time_to_first_token_seconds_sum"])
	}
}
