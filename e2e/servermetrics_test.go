package e2e_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// serverMetricsExport is the part of profile_export_aiperf.json this file reads.
type serverMetricsExport struct {
	Llmbench struct {
		ServerMetrics struct {
			Metrics map[string]struct {
				Unit, Kind, Source            string
				Avg, Min, Max, P50, P99, Rate *float64
			} `json:"metrics"`
			TTFTComparison *struct {
				Server, Client, Difference struct{ Avg, P50, P99 float64 }
			} `json:"ttft_comparison"`
			Series []struct {
				Name string
				T, V []float64
			} `json:"series"`
		} `json:"server_metrics"`
	} `json:"llmbench"`
}

type slicesExport struct {
	Timeslices []map[string]json.RawMessage `json:"timeslices"`
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// The Done-when of the server-metrics issue: a run against mockllm at rising concurrency
// (a ramp from 1 to 8 over 3 s, --max-batch 3) shows vllm:num_requests_waiting rising once
// the batch is full, with the KV-cache gauge and the client's TTFT moving together in the
// JSON and in the time slices; gates on server metrics pass and fail on cue; a DCGM page
// served from loopback fills the same GPU fields as NVML.
func TestServerMetricsRisingConcurrency(t *testing.T) {
	dir := t.TempDir()
	srv := startMock(t, "--ttft", "20ms", "--itl", "5ms", "--max-batch", "3", "--kv-cache-tokens", "1024")
	page, err := os.ReadFile(filepath.Join("..", "servermetrics", "testdata", "dcgm_exporter_h100.txt"))
	if err != nil {
		t.Fatal(err)
	}
	dcgm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		w.Write(page)
	}))
	defer dcgm.Close()
	planPath := compile(t, dir, "--model", "mock", "--tokenizer", "builtin", "--endpoint-type", "chat", "--streaming",
		"--isl", "100", "--osl", "16", "--extra-inputs", "ignore_eos:true", "--concurrency", "8",
		"--concurrency-ramp-duration", "3", "--request-count", "110", "--random-seed", "1")
	runDir := filepath.Join(dir, "run")
	args := []string{"--plan", planPath, "--output-dir", runDir, "--no-pin", "--url", srv.URL,
		"--server-metrics-interval", "100ms", "--gpu-telemetry=" + dcgm.URL + "/metrics"}
	if r := command(t, bin.replay, args...); r.code != 0 {
		t.Fatalf("replay: exit %d: %s", r.code, r.stderr)
	}
	out := filepath.Join(dir, "out")
	if code := analyzeRun(t, runDir, out, "--slice-duration", "1"); code != 0 {
		t.Fatalf("analyze exit %d", code)
	}
	var ex serverMetricsExport
	readJSON(t, filepath.Join(out, "profile_export_aiperf.json"), &ex)
	sm := ex.Llmbench.ServerMetrics
	waiting, kv := sm.Metrics["server.requests_waiting"], sm.Metrics["server.kv_cache_usage"]
	running := sm.Metrics["server.requests_running"]
	if waiting.Max == nil || *waiting.Max < 1 || running.Max == nil || *running.Max != 3 {
		t.Fatalf("requests_waiting %+v, requests_running %+v: want waiting > 0 once the batch of 3 is full", waiting, running)
	}
	if kv.Max == nil || *kv.Max <= 0 || *kv.Max > 1 || kv.Source != "vllm:kv_cache_usage_perc" {
		t.Fatalf("kv_cache_usage %+v", kv)
	}
	if c := sm.TTFTComparison; c == nil || c.Server.Avg <= 0 || c.Client.Avg <= 0 {
		t.Fatalf("no server-vs-client TTFT comparison: %+v", c)
	}
	if g := sm.Metrics["gpu.utilization"]; g.Avg == nil || *g.Avg != 0.755 || g.Source != "dcgm" {
		t.Errorf("gpu.utilization %+v: want the DCGM page's (87%%+64%%)/2", g)
	}
	// Same GPU fields as NVML: AIPerf's telemetry_data block.
	var tele struct {
		TelemetryData struct {
			Endpoints map[string]struct {
				GPUs map[string]struct {
					GPUName string                     `json:"gpu_name"`
					Metrics map[string]json.RawMessage `json:"metrics"`
				} `json:"gpus"`
			} `json:"endpoints"`
		} `json:"telemetry_data"`
	}
	readJSON(t, filepath.Join(out, "profile_export_aiperf.json"), &tele)
	for _, ep := range tele.TelemetryData.Endpoints {
		g0 := ep.GPUs["gpu_0"]
		for _, k := range []string{"gpu_power_usage", "gpu_utilization", "memory_copy_utilization", "gpu_memory_used", "sm_clock_frequency", "gpu_temperature", "energy_consumption"} {
			if _, ok := g0.Metrics[k]; !ok {
				t.Errorf("telemetry_data gpu_0 lacks %s: %v", k, g0.Metrics)
			}
		}
		if g0.GPUName != "NVIDIA H100 80GB HBM3" {
			t.Errorf("gpu_name %q", g0.GPUName)
		}
	}
	if len(tele.TelemetryData.Endpoints) != 1 {
		t.Errorf("telemetry_data endpoints %d, want 1", len(tele.TelemetryData.Endpoints))
	}

	// Time slices: the first full slice (concurrency 1-3, under the batch) against the last
	// (8 in flight): waiting, the KV cache and the client's TTFT all rose.
	var sl slicesExport
	readJSON(t, filepath.Join(out, "profile_export_aiperf_timeslices.json"), &sl)
	type point struct{ ttft, kv, waiting float64 }
	var pts []point
	for _, s := range sl.Timeslices {
		var ttft struct{ Avg float64 }
		var own struct {
			ServerMetrics map[string]struct{ Avg float64 } `json:"server_metrics"`
		}
		if json.Unmarshal(s["time_to_first_token"], &ttft) != nil || json.Unmarshal(s["llmbench"], &own) != nil {
			continue
		}
		w, ok1 := own.ServerMetrics["server.requests_waiting"]
		k, ok2 := own.ServerMetrics["server.kv_cache_usage"]
		if ok1 && ok2 && ttft.Avg > 0 {
			pts = append(pts, point{ttft.Avg, k.Avg, w.Avg})
		}
	}
	if len(pts) < 3 {
		t.Fatalf("%d slices with TTFT and server metrics, want ≥ 3", len(pts))
	}
	first, last := pts[0], pts[len(pts)-2] // the very last slice may hold the tail only
	if !(last.waiting > first.waiting && last.kv > first.kv && last.ttft > first.ttft) {
		t.Errorf("first slice %+v, late slice %+v: want waiting, KV-cache usage and TTFT all higher", first, last)
	}
	csv, err := os.ReadFile(filepath.Join(out, "profile_export_aiperf.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(csv), "server.kv_cache_usage,ratio,gauge,vllm:kv_cache_usage_perc,") {
		t.Errorf("the CSV has no server-metrics rows:\n%s", csv)
	}

	// Gates on server and GPU metrics pass and fail on cue; a gate on a metric the run lacks
	// is not evaluable and fails, saying so.
	for _, c := range []struct {
		gate, want string
		code       int
	}{
		{"server.requests_waiting.max>=1", "PASS", 0},
		{"server.requests_waiting.max<1", "FAIL", 1},
		{"server.kv_cache_usage.max<1.01", "PASS", 0},
		{"gpu.utilization.avg>0.7", "PASS", 0},
		{"gpu.utilization.avg>0.8", "FAIL", 1},
		{"server.preemptions.rate<=0", "PASS", 0},
		{"server.server_queue_time.p99<100", "not evaluable: the run has no server.server_queue_time values", 1},
	} {
		r := command(t, bin.analyze, "--output-dir", filepath.Join(dir, "gate"), "--gate", c.gate, runDir)
		if r.code != c.code || !strings.Contains(r.stdout, "Gate "+c.gate+": ") || !strings.Contains(r.stdout, c.want) {
			t.Errorf("--gate %s: exit %d, want %d with %q:\n%s%s", c.gate, r.code, c.code, c.want, r.stdout, r.stderr)
		}
	}
}
