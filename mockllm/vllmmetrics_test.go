package mockllm

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// With VLLMMetrics /metrics is a vLLM-sized page that expfmt parses: vLLM's families with
// their labels, a _created sample beside every counter and histogram, values that follow
// the requests served.
func TestVLLMMetricsPage(t *testing.T) {
	o := testOptions()
	o.VLLMMetrics = true
	base := startServer(t, o)
	for range 3 {
		resp := post(t, base+"/v1/chat/completions", `{"model":"m1","messages":[{"role":"user","content":"hi"}],"max_tokens":4,"ignore_eos":true,"stream":true}`)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(page))
	if err != nil {
		t.Fatalf("expfmt: %v", err)
	}
	lines := bytes.Count(page, []byte("\n")) - 2*len(fams)
	t.Logf("%d families, %d sample lines, %d bytes", len(fams), lines, len(page))
	if len(fams) < 45 || lines < 600 || len(page) < 60<<10 {
		t.Errorf("%d families, %d sample lines, %d bytes: want a page the size of vLLM's (>= 45, 600, 60 kB)", len(fams), lines, len(page))
	}
	for name, want := range map[string]float64{"vllm:generation_tokens_total": 12, "vllm:request_success_total": 3, "vllm:e2e_request_latency_seconds": 3,
		"vllm:time_to_first_token_seconds": 3, "vllm:num_requests_running": 0} {
		mf := fams[name]
		if mf == nil {
			t.Errorf("no family %s", name)
			continue
		}
		var got float64
		for _, m := range mf.GetMetric() {
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				got += m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				got += m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				got += float64(m.GetHistogram().GetSampleCount())
			}
			if name != "vllm:request_success_total" && !strings.Contains(m.String(), `model_name`) {
				t.Errorf("%s: no model_name label: %v", name, m)
			}
		}
		if got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	for _, name := range []string{"vllm:prompt_tokens_created", "vllm:e2e_request_latency_seconds_created", "http_request_duration_highr_seconds"} {
		if fams[name] == nil && !bytes.Contains(page, []byte(name)) {
			t.Errorf("no %s", name)
		}
	}
}
