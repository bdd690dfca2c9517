package e2e_test

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// extremePage is a Prometheus page of legal but extreme values: gauges at ±1e308 (their sum
// and spread overflow float64), +Inf, NaN and the smallest subnormal; counters that jump by
// 1.7e308 and reset; a histogram whose sum is near the float64 limit and whose bucket
// bounds span it. Scrape k gets the k-th variant, so the counters move.
func extremePage(k int64) string {
	big := "1.7e308"
	if k%2 == 1 {
		big = "1e300" // below the previous value: a reset
	}
	return fmt.Sprintf(`# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0"} 1e308
vllm:kv_cache_usage_perc{engine="1"} 1.7e308
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0"} %[2]s
vllm:num_requests_running{engine="1"} 1.7e308
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting +Inf
# TYPE sglang:cache_hit_rate gauge
sglang:cache_hit_rate NaN
# TYPE tgi_batch_current_size gauge
tgi_batch_current_size 5e-324
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine="0"} %[1]s
vllm:generation_tokens_total{engine="1"} %[1]s
# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total +Inf
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{le="0.1"} %[3]d
vllm:time_to_first_token_seconds_bucket{le="1e308"} %[4]d
vllm:time_to_first_token_seconds_bucket{le="+Inf"} %[4]d
vllm:time_to_first_token_seconds_sum %[5]s
vllm:time_to_first_token_seconds_count %[4]d
`, big, map[bool]string{true: "-1.7e308", false: "1e308"}[k%2 == 0], k, 2*k, fmt.Sprintf("%de307", k%9+1))
}

// extremeDCGM is a DCGM page whose fields are beyond any GPU: power of 1e308 W, a utilisation
// of 1e20 %, and an energy counter near the int64 limit.
const extremeDCGM = `# TYPE DCGM_FI_DEV_POWER_USAGE gauge
DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-x",modelName="X"} 1e308
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-x",modelName="X"} 1e20
# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0",UUID="GPU-x",modelName="X"} 9.2e18
# TYPE DCGM_FI_DEV_GPU_TEMP gauge
DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-x",modelName="X"} 60
`

// TestExtremeServerMetrics: no value a server's /metrics page (or a DCGM exporter) may
// legally hold makes analyze fail: with gauges at ±1e308, +Inf and NaN, counters that
// overflow and reset, and a histogram near the float64 limit, analyze exits 0, writes every
// export as valid JSON or CSV and the HTML report, reports statistics that cannot be a
// float64 as non-finite (null in JSON, "inf" in CSV), and never prints a 300-digit number.
func TestExtremeServerMetrics(t *testing.T) {
	t.Parallel()
	// The server: a well-behaved stream of 8 tokens on every route but /metrics, this
	// page there.
	var scrapes atomic.Int64
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			fmt.Fprint(w, extremePage(scrapes.Add(1)))
			return
		}
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 8 {
			fmt.Fprintf(w, "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" w%d\"}}]}\n\n", i)
			w.(http.Flusher).Flush()
			time.Sleep(2 * time.Millisecond)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(front.Close)
	dcgm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprint(w, extremeDCGM)
	}))
	t.Cleanup(dcgm.Close)
	dir := t.TempDir()
	planPath := compile(t, dir, "--model", "mock", "--endpoint-type", "chat", "--streaming", "--isl", "16", "--osl", "8",
		"--request-count", "24", "--concurrency", "2")
	runDir := filepath.Join(dir, "run")
	if r := command(t, bin.replay, "--plan", planPath, "--output-dir", runDir, "--no-pin", "--url", front.URL,
		"--server-metrics-interval", "50ms",
		"--gpu-telemetry="+dcgm.URL+"/metrics"); r.code != 0 {
		t.Fatalf("replay: exit %d: %s", r.code, r.stderr)
	}
	if scrapes.Load() < 3 {
		t.Fatalf("%d scrapes, want ≥ 3", scrapes.Load())
	}
	out := filepath.Join(dir, "out")
	r := command(t, bin.analyze, "--output-dir", out, "--slice-duration", "0.1", runDir)
	if r.code != 0 {
		t.Fatalf("analyze: exit %d\nstdout:\n%s\nstderr:\n%s\nerrors: %+v", r.code, r.stdout, r.stderr, readSummary(t, out).errorSummary(t))
	}
	if long := regexp.MustCompile(`[0-9,]{40,}`).FindString(r.stdout); long != "" {
		t.Errorf("console prints a %d-digit number:\n%s", len(long), r.stdout)
	}
	if !strings.Contains(r.stdout, "+Inf") {
		t.Errorf("console shows no infinite statistic:\n%s", r.stdout)
	}
	for _, name := range []string{"profile_export_aiperf.json", "profile_export_aiperf_timeslices.json"} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(b) {
			t.Errorf("%s is not JSON", name)
		}
	}
	var ex serverMetricsExport
	readJSON(t, filepath.Join(out, "profile_export_aiperf.json"), &ex)
	sm := ex.Llmbench.ServerMetrics.Metrics
	kv := sm["server.kv_cache_usage"]
	// The two engines' mean, 1.35e308, though their sum is beyond float64.
	if kv.Max == nil || kv.Avg == nil || math.Abs(*kv.Max-1.35e308) > 1e296 || math.Abs(*kv.Avg-1.35e308) > 1e296 {
		t.Errorf("kv_cache_usage avg %v max %v: want 1.35e308, the engines' mean", deref(kv.Avg), deref(kv.Max))
	}
	// A sum beyond float64 is +Inf, reported as null; +Inf points likewise.
	for _, name := range []string{"server.requests_running", "server.requests_waiting"} {
		if m, ok := sm[name]; !ok || m.Max != nil {
			t.Errorf("%s %+v: want max null (+Inf)", name, m)
		}
	}
	if m, ok := sm["server.batch_size"]; !ok || m.Avg == nil || *m.Avg != 5e-324 {
		t.Errorf("batch_size %+v: want the subnormal 5e-324 kept", m)
	}
	if _, ok := sm["server.prefix_cache_hit_rate"]; ok {
		t.Errorf("prefix_cache_hit_rate: a NaN gauge has no value, want it left out")
	}
	if !strings.Contains(r.stdout, "NaN samples left out") || !strings.Contains(r.stdout, "is not finite") {
		t.Errorf("console does not say which server metrics were not finite:\n%s", r.stdout)
	}
	for _, name := range []string{"profile_export_aiperf.csv", "profile_export_aiperf_timeslices.csv"} {
		f, err := os.Open(filepath.Join(out, name))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		rd := csv.NewReader(f)
		rd.FieldsPerRecord, rd.LazyQuotes = -1, false
		if _, err := rd.ReadAll(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		f.Close()
	}
	html, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil {
		t.Fatalf("no report.html: %v", err)
	}
	for _, bad := range []string{"NaN", "Infinity"} {
		if strings.Contains(string(html), `":`+bad) || strings.Contains(string(html), ","+bad+",") {
			t.Errorf("report.html page data holds a bare %s", bad)
		}
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
