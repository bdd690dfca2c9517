package replay

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/lockbuf"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/servermetrics"
)

// A run scrapes the server's /metrics (the default endpoint) before the start, during the
// run and after the last response into server_metrics.jsonl, and a DCGM exporter into the
// file and, as GPU samples in place of NVML, into telemetry.rawlog.
func TestRunScrapesServerAndDCGM(t *testing.T) {
	url := startMock(t, 20*time.Millisecond, 5*time.Millisecond)
	page, err := os.ReadFile("../servermetrics/testdata/dcgm_exporter_h100.txt")
	if err != nil {
		t.Fatal(err)
	}
	dcgm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		w.Write(page)
	}))
	defer dcgm.Close()
	ps := &planSpec{}
	for k := 0; k < 12; k++ {
		ps.add(mmapds.Record{SendOffsetNs: int64(k) * 25e6, DelayNs: -1, Session: uint32(k), OSL: 8, Phase: mmapds.PhaseProfile}, chatBody(8))
	}
	ps.meta.Streaming = true
	o := testOptions(t, ps.write(t, t.TempDir()), url)
	o.NoServerMetrics = false
	o.ServerMetricsInterval = 50 * time.Millisecond
	o.GPUSampleInterval = 0
	o.GPUTelemetryURLs = []string{dcgm.URL}
	m := runReplay(t, o)
	if m.Counts.Completed != 12 {
		t.Fatalf("counts %+v", m.Counts)
	}
	f, err := servermetrics.ReadFile(filepath.Join(o.OutputDir, servermetrics.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Endpoints) != 2 || f.Endpoints[0].URL != url+"/metrics" || f.Endpoints[1].URL != dcgm.URL+"/metrics" || f.Endpoints[1].Role != servermetrics.RoleGPU {
		t.Fatalf("endpoints %+v", f.Endpoints)
	}
	if f.Header.StartUnixNs != m.StartUnixNs {
		t.Errorf("file clock zero %d, run.json start %d", f.Header.StartUnixNs, m.StartUnixNs)
	}
	for ep := range f.Endpoints {
		var phases []string
		for _, s := range f.Scrapes {
			if s.Endpoint == ep {
				phases = append(phases, s.Phase)
			}
		}
		if len(phases) < 3 || phases[0] != servermetrics.PhaseBaseline || phases[len(phases)-1] != servermetrics.PhaseFinal {
			t.Errorf("endpoint %d phases %v", ep, phases)
		}
	}
	if first := f.Scrapes[0]; first.Phase != servermetrics.PhaseBaseline || first.TimeNs >= 0 {
		t.Errorf("first scrape %s at %d ns: want the baseline before the start", first.Phase, first.TimeNs)
	}
	// The last response came before the final scrape of the server.
	var lastEnd int64
	for _, q := range readRun(t, m, o.OutputDir) {
		lastEnd = max(lastEnd, q.EndNs)
	}
	for _, s := range f.Scrapes {
		if s.Endpoint == 0 && s.Phase == servermetrics.PhaseFinal && s.TimeNs < lastEnd {
			t.Errorf("final scrape at %d ns, before the last response at %d", s.TimeNs, lastEnd)
		}
	}
	names := map[string]bool{}
	for _, s := range f.Series {
		names[s.Name] = true
	}
	for _, n := range []string{"vllm:num_requests_waiting", "vllm:kv_cache_usage_perc", "vllm:time_to_first_token_seconds_bucket", "DCGM_FI_DEV_GPU_UTIL"} {
		if !names[n] {
			t.Errorf("no series %s", n)
		}
	}
	if m.TelemetryLog != TelemetryLogName || m.Options["gpu_telemetry_source"] != "dcgm" {
		t.Fatalf("telemetry log %q, options %v", m.TelemetryLog, m.Options)
	}
	lr, err := rawlog.Open(filepath.Join(o.OutputDir, m.TelemetryLog))
	if err != nil {
		t.Fatal(err)
	}
	defer lr.Close()
	gpus := 0
	for {
		k, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if k == rawlog.KindGPU {
			g := lr.GPU()
			if g.GPU == 0 && (g.PowerMilliwatts != 512337 || g.GPUUtilPct != 87 || g.SMClockMHz != 1980) {
				t.Fatalf("GPU sample %+v", g)
			}
			gpus++
		}
	}
	if gpus < 6 {
		t.Errorf("%d GPU samples, want 2 per DCGM scrape", gpus)
	}
	if list, _ := m.Options["gpus"].([]string); len(list) != 2 || !strings.HasPrefix(list[0], "0:NVIDIA H100 80GB HBM3:GPU-") {
		t.Errorf("gpus %v", m.Options["gpus"])
	}
}

func TestServerMetricsOptions(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string // the URLs scraped, or the error
	}{
		{Options{URLs: []string{"http://h:8000/v1", "http://h:8000"}}, "http://h:8000/metrics"},
		{Options{URLs: []string{"http://h:8000"}, ServerMetricsURLs: []string{"h:9090", "http://h:8000/metrics"}}, "http://h:8000/metrics http://h:9090/metrics"},
		{Options{URLs: []string{"http://h:8000"}, NoServerMetrics: true}, ""},
		{Options{URLs: []string{"http://h:8000"}, ServerMetricsURLs: []string{"ftp://x"}}, "server-metrics-url: metrics URL \"ftp://x\": scheme must be http or https"},
		{Options{URLs: []string{"http://h:8000"}, ServerMetricsInterval: time.Millisecond}, "server-metrics-interval 1ms: must be at least 10ms"},
	} {
		err := c.o.normalizeServerMetrics()
		got := strings.Join(c.o.ServerMetricsURLs, " ")
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%+v: %q, want %q", c.o, got, c.want)
		}
	}
}

// A /metrics page of 50,000 series and 30 MB, served as a DCGM exporter's too, changes
// nothing of the run's outcome: every request completes, the run is complete, and the
// series cap is said once per endpoint, on the console and in run.json's
// server_metrics_notes, with at most DefaultMaxSeries series recorded per endpoint.
func TestRunWithHugeMetricsPage(t *testing.T) {
	url := startMock(t, 20*time.Millisecond, 5*time.Millisecond)
	var page strings.Builder
	page.WriteString("# TYPE junk_metric gauge\n")
	pad := strings.Repeat("p", 570)
	for i := range 50000 {
		fmt.Fprintf(&page, "junk_metric{id=\"%d\",pad=\"%s\"} %d\n", i, pad, i)
	}
	page.WriteString("# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 3\n")
	huge := []byte(page.String())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(huge) }))
	defer srv.Close()
	ps := &planSpec{}
	for k := 0; k < 12; k++ {
		ps.add(mmapds.Record{SendOffsetNs: int64(k) * 25e6, DelayNs: -1, Session: uint32(k), OSL: 8, Phase: mmapds.PhaseProfile}, chatBody(8))
	}
	ps.meta.Streaming = true
	o := testOptions(t, ps.write(t, t.TempDir()), url)
	o.NoServerMetrics = false
	o.ServerMetricsURLs = []string{srv.URL + "/metrics"}
	o.GPUTelemetryURLs = []string{srv.URL + "/dcgm"}
	o.GPUSampleInterval = 0
	o.ServerMetricsInterval = 50 * time.Millisecond
	var console lockbuf.Buffer
	o.Notice = &console
	m := runReplay(t, o)
	if m.Status != rawlog.StatusComplete || m.Counts.Completed != 12 {
		t.Fatalf("status %s, counts %+v", m.Status, m.Counts)
	}
	f, err := servermetrics.ReadFile(filepath.Join(o.OutputDir, servermetrics.FileName))
	if err != nil {
		t.Fatal(err)
	}
	per, scrapes := map[int]int{}, map[int]int{}
	for _, s := range f.Series {
		per[s.Endpoint]++
	}
	for _, s := range f.Scrapes {
		scrapes[s.Endpoint]++
	}
	for ep, e := range f.Endpoints {
		if per[ep] > servermetrics.DefaultMaxSeries {
			t.Errorf("endpoint %d: %d series", ep, per[ep])
		}
		if !strings.HasPrefix(e.URL, srv.URL) {
			continue // the mock's own /metrics
		}
		said, shown := 0, strings.Count(console.String(), e.URL+": the page has 50001 series, over the cap")
		for _, n := range m.ServerMetricsNotes {
			if strings.Contains(n, e.URL+": the page has 50001 series, over the cap") {
				said++
			}
		}
		// Once per endpoint that was read at all (on a machine whose CPUs are all busy, the
		// idle-priority parse may miss every deadline: then the timeouts are noted instead).
		if want := min(scrapes[ep], 1); said != want || shown != want {
			t.Errorf("%s: the cap said %d times in run.json, %d on the console, over %d scrapes: %q", e.URL, said, shown, scrapes[ep], m.ServerMetricsNotes)
		}
	}
}
