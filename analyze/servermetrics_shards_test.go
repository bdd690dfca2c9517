package analyze

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/analyze/serverside"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/servermetrics"
)

// writeScrapes writes dir's server_metrics.jsonl: one server endpoint at url scraped every
// 100 ms from 1 s before the run's start to 10 s after, offset by off, exposing a counter
// growing 100/s, a gauge at 0.5 and a TTFT histogram of 10 observations/s of 50 ms each.
func writeScrapes(t *testing.T, dir, url string, off int64) {
	t.Helper()
	m, err := rawlog.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, servermetrics.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := servermetrics.NewWriter(f, servermetrics.Header{StartUnixNs: m.StartUnixNs, IntervalNs: 100 * ms})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Endpoint(servermetrics.EndpointInfo{ID: 0, URL: url, Role: servermetrics.RoleServer}); err != nil {
		t.Fatal(err)
	}
	for tn := -1000*ms + off; tn < 10_000*ms; tn += 100 * ms {
		sec := float64(tn+1000*ms) / 1e9
		n := 10 * sec
		samples := []servermetrics.Sample{
			{Family: "vllm:generation_tokens", Type: "counter", Name: "vllm:generation_tokens_total", V: 100 * sec},
			{Family: "vllm:kv_cache_usage_perc", Type: "gauge", Name: "vllm:kv_cache_usage_perc", V: 0.5},
			{Family: "vllm:time_to_first_token_seconds", Type: "histogram", Name: "vllm:time_to_first_token_seconds_bucket", Labels: map[string]string{"le": "0.1"}, V: n},
			{Family: "vllm:time_to_first_token_seconds", Type: "histogram", Name: "vllm:time_to_first_token_seconds_bucket", Labels: map[string]string{"le": "+Inf"}, V: n},
			{Family: "vllm:time_to_first_token_seconds", Type: "histogram", Name: "vllm:time_to_first_token_seconds_sum", V: 0.05 * n},
			{Family: "vllm:time_to_first_token_seconds", Type: "histogram", Name: "vllm:time_to_first_token_seconds_count", V: n},
		}
		if err := w.Scrape(0, servermetrics.PhaseRun, tn, m.StartUnixNs+tn, ms, samples); err != nil {
			t.Fatal(err)
		}
	}
}

// writeGPUs writes dir's telemetry log: GPU 0 (UUID uuid) at 300 W and 80%, its energy
// counter at 300 J/s, sampled every 100 ms over the same span, offset by off.
func writeGPUs(t *testing.T, dir, uuid string, off int64) {
	t.Helper()
	m, err := rawlog.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "telemetry.rawlog"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := rawlog.NewWriter(f, rawlog.Header{Worker: -1, PlanHash: m.PlanHash, StartUnixNs: m.StartUnixNs})
	if err != nil {
		t.Fatal(err)
	}
	for tn := -1000*ms + off; tn < 10_000*ms; tn += 100 * ms {
		g := rawlog.GPUSample{TimeNs: tn, GPU: 0, UUID: uuid, PowerMilliwatts: 300_000, EnergyMillijoules: 300 * (tn + 1000*ms) / ms,
			GPUUtilPct: 80, MemUtilPct: -1, MemUsedBytes: -1, SMClockMHz: -1, TempC: -1, PowerInstantMilliwatts: -1}
		if err := w.WriteGPU(g); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(rawlog.Footer{TimeNs: 60_000 * ms, Status: "complete"}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	m.TelemetryLog = "telemetry.rawlog"
	if err := rawlog.WriteManifest(dir, m); err != nil {
		t.Fatal(err)
	}
}

// setHost rewrites a run directory's host in run.json.
func setHost(t *testing.T, dir, host string) {
	t.Helper()
	m, err := rawlog.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	m.Host = host
	if err := rawlog.WriteManifest(dir, m); err != nil {
		t.Fatal(err)
	}
}

// The shards of a distributed run that scraped one server, or sampled one GPU, count it
// once: the counter's rate, the histogram's observations, the GPU's power and energy are
// the server's and the GPU's, not N times them; each metric has one series per origin. Two
// shards on two hosts scraping a loopback URL scraped two servers: those add up.
func TestShardsCountServerOnce(t *testing.T) {
	sc := scenario{n: 40, workers: 2, ttft: 20 * ms, itl: 5 * ms, tokens: 10, rate: 40, streaming: true}
	tmp := t.TempDir()
	shards := splitShards(t, sc.build(t, tmp), tmp)
	for i, d := range shards {
		writeScrapes(t, d, "http://10.0.0.5:8000/metrics", int64(i)*37*ms)
		writeGPUs(t, d, "GPU-same", int64(i)*41*ms)
	}
	one, _ := analyseDir(t, Options{}, shards[0])
	both, _ := analyseDir(t, Options{}, shards...)
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(math.Abs(a), math.Abs(b)) }
	for _, s := range []*Summary{one, both} {
		if r := s.ServerMetric("server.generation_tokens").Rate; !near(r, 100) {
			t.Errorf("%d shard(s): generation_tokens rate %v, want the server's 100/s", len(s.RunDirs), r)
		}
		h := s.ServerMetric("server.server_ttft")
		if !near(h.Avg, 50) {
			t.Errorf("%d shard(s): server_ttft avg %v, want 50 ms", len(s.RunDirs), h.Avg)
		}
		if g := s.ServerMetric("server.kv_cache_usage"); g.Avg != 0.5 {
			t.Errorf("%d shard(s): kv_cache_usage %+v", len(s.RunDirs), g)
		}
		seen := map[string]int{}
		for _, x := range s.ServerSeries {
			seen[x.Name]++
			if strings.Contains(x.Labels, "run=") {
				t.Errorf("series %s labelled by run: %q", x.Name, x.Labels)
			}
		}
		for name, n := range seen {
			if n != 1 {
				t.Errorf("%d shard(s): %d series of %s, want one per origin", len(s.RunDirs), n, name)
			}
		}
		if len(s.GPUs) != 1 || s.GPUs[0].Power == nil || s.GPUs[0].Power.Avg != 300 {
			t.Errorf("%d shard(s): GPUs %+v, want the one GPU at 300 W", len(s.RunDirs), s.GPUs)
		}
		if r := s.ResultOf(MTotalGPUPower); r == nil || r.Value != 300 {
			t.Errorf("%d shard(s): total_gpu_power %+v, want 300 W", len(s.RunDirs), r)
		}
	}
	// Samples pool both shards' scrapes; the counter's rate rests on both.
	if a, b := one.ServerMetric("server.kv_cache_usage").Samples, both.ServerMetric("server.kv_cache_usage").Samples; b < 2*a-2 {
		t.Errorf("kv_cache_usage samples %d of one shard, %d of two: want both shards' scrapes pooled", a, b)
	}
	// 300 W over the window and its grace, within a sample interval at each end.
	for _, s := range []*Summary{one, both} {
		want := 300 * (float64(s.EndUnixNs-s.StartUnixNs+serverside.EnergyGraceNs) / 1e9)
		if e := s.ResultOf(MTotalGPUEnergy); e == nil || math.Abs(e.Value-want) > 2*30 {
			t.Errorf("%d shard(s): total_gpu_energy %v, want the GPU's %v J once", len(s.RunDirs), e, want)
		}
	}

	// Loopback URLs on two hosts are two servers (and GPUs without UUIDs two GPUs).
	tmp2 := t.TempDir()
	local := splitShards(t, sc.build(t, tmp2), tmp2)
	for i, d := range local {
		writeScrapes(t, d, "http://127.0.0.1:8000/metrics", int64(i)*37*ms)
		writeGPUs(t, d, "", int64(i)*41*ms)
		setHost(t, d, []string{"node-a", "node-b"}[i])
	}
	s, _ := analyseDir(t, Options{}, local...)
	if r := s.ServerMetric("server.generation_tokens").Rate; !near(r, 200) {
		t.Errorf("two hosts' own servers: generation_tokens rate %v, want 2 × 100/s", r)
	}
	labels := map[string]bool{}
	for _, x := range s.ServerSeries {
		if x.Name == "server.generation_tokens" {
			labels[x.Labels] = true
		}
	}
	if !labels["endpoint=http://127.0.0.1:8000/metrics host=node-a"] || !labels["endpoint=http://127.0.0.1:8000/metrics host=node-b"] {
		t.Errorf("loopback series labels %v, want one per host", labels)
	}
	if len(s.GPUs) != 2 {
		t.Errorf("two hosts' GPUs without UUID: %d GPU rows, want 2", len(s.GPUs))
	}
}
