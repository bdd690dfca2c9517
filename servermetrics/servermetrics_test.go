package servermetrics

import (
	"bytes"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmbench/llmbench/rawlog"
)

const vllmPage = `# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 3.0
# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.25
# HELP vllm:num_preemptions_total Cumulative number of preemption from the engine.
# TYPE vllm:num_preemptions_total counter
vllm:num_preemptions_total{engine="0",model_name="m"} 7.0
# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{le="0.01",model_name="m"} 1.0
vllm:time_to_first_token_seconds_bucket{le="0.1",model_name="m"} 4.0
vllm:time_to_first_token_seconds_bucket{le="+Inf",model_name="m"} 5.0
vllm:time_to_first_token_seconds_count{model_name="m"} 5.0
vllm:time_to_first_token_seconds_sum{model_name="m"} 0.5
# HELP lag A summary.
# TYPE lag summary
lag{quantile="0.5"} NaN
lag_sum 0
lag_count 0
`

const openMetricsPage = `# TYPE vllm:num_preemptions counter
vllm:num_preemptions_total{model_name="m"} 2.0
# TYPE up gauge
up 1
# EOF
`

func find(t *testing.T, s []Sample, name string, labels ...string) Sample {
	t.Helper()
outer:
	for _, x := range s {
		if x.Name != name {
			continue
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if x.Labels[labels[i]] != labels[i+1] {
				continue outer
			}
		}
		return x
	}
	t.Fatalf("no sample %s %v in %+v", name, labels, s)
	return Sample{}
}

func TestParse(t *testing.T) {
	s, err := Parse([]byte(vllmPage), "text/plain; version=0.0.4; charset=utf-8")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		labels []string
		typ    string
		v      float64
	}{
		{"vllm:num_requests_running", []string{"engine", "0"}, "gauge", 3},
		{"vllm:kv_cache_usage_perc", nil, "gauge", 0.25},
		{"vllm:num_preemptions_total", nil, "counter", 7},
		{"vllm:time_to_first_token_seconds_bucket", []string{"le", "0.1"}, "histogram", 4},
		{"vllm:time_to_first_token_seconds_bucket", []string{"le", "+Inf"}, "histogram", 5},
		{"vllm:time_to_first_token_seconds_sum", nil, "histogram", 0.5},
		{"vllm:time_to_first_token_seconds_count", nil, "histogram", 5},
		{"lag_count", nil, "summary", 0},
	} {
		x := find(t, s, c.name, c.labels...)
		if x.Type != c.typ || x.V != c.v {
			t.Errorf("%s %v: type %s value %v, want %s %v", c.name, c.labels, x.Type, x.V, c.typ, c.v)
		}
	}
	if x := find(t, s, "lag", "quantile", "0.5"); !math.IsNaN(x.V) {
		t.Errorf("NaN quantile read as %v", x.V)
	}
	om, err := Parse([]byte(openMetricsPage), "application/openmetrics-text; version=1.0.0; charset=utf-8")
	if err != nil {
		t.Fatal(err)
	}
	if x := find(t, om, "vllm:num_preemptions_total"); x.V != 2 || FamilyKey(x.Family) != "vllm:num_preemptions" {
		t.Errorf("OpenMetrics counter: %+v", x)
	}
}

func TestParseRejects(t *testing.T) {
	for _, c := range []struct {
		body, ctype string
		json        bool
	}{
		{`{"iterationStats": []}`, "application/json", true},
		{`[{"gpu": 1}]`, "text/plain", true},
		{"<html><body>hello</body></html>", "text/html", false},
		{"metric{ 1\n", "text/plain", false},
	} {
		_, err := Parse([]byte(c.body), c.ctype)
		if !errors.Is(err, ErrNotPrometheus) || errors.Is(err, ErrJSON) != c.json {
			t.Errorf("%q: err %v, want not-Prometheus (json %v)", c.body, err, c.json)
		}
	}
	if s, err := Parse([]byte("# only comments\n\n"), "text/plain"); err != nil || len(s) != 0 {
		t.Errorf("an empty exposition: %v %v", s, err)
	}
}

func TestDCGMFixture(t *testing.T) {
	page, err := os.ReadFile("testdata/dcgm_exporter_h100.txt")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse(page, "text/plain; version=0.0.4")
	if err != nil {
		t.Fatal(err)
	}
	got, gpus := DCGMSamples(s, 42)
	if len(got) != 2 || len(gpus) != 2 {
		t.Fatalf("%d samples, %d GPUs; want 2", len(got), len(gpus))
	}
	want := rawlog.GPUSample{TimeNs: 42, GPU: 0, UUID: "GPU-927d7444-b45a-7c49-8402-5e686e46a026", PowerMilliwatts: 512337,
		EnergyMillijoules: 8214335127, GPUUtilPct: 87, MemUtilPct: 41, MemUsedBytes: 76417 << 20, SMClockMHz: 1980, TempC: 61,
		PowerInstantMilliwatts: -1}
	if got[0] != want {
		t.Errorf("GPU 0:\n got %+v\nwant %+v", got[0], want)
	}
	if got[1].GPU != 1 || got[1].GPUUtilPct != 64 || gpus[1].Name != "NVIDIA H100 80GB HBM3" {
		t.Errorf("GPU 1: %+v %+v", got[1], gpus[1])
	}
	// A page without a field leaves it -1, as NVML does for what it cannot read.
	part, _ := DCGMSamples([]Sample{{Name: "DCGM_FI_DEV_GPU_UTIL", Labels: map[string]string{"gpu": "3"}, V: 5}}, 1)
	if len(part) != 1 || part[0].GPUUtilPct != 5 || part[0].PowerMilliwatts != -1 || part[0].TempC != -1 {
		t.Errorf("partial page: %+v", part)
	}
	// A value beyond its field's int64 (1e308 W in mW) is unreadable, like NaN, on every
	// machine (Go's conversion is undefined there: amd64 gave -9223372036854775808).
	huge, _ := DCGMSamples([]Sample{{Name: "DCGM_FI_DEV_POWER_USAGE", Labels: map[string]string{"gpu": "0"}, V: 1e308},
		{Name: "DCGM_FI_DEV_GPU_UTIL", Labels: map[string]string{"gpu": "0"}, V: 9.3e18},
		{Name: "DCGM_FI_DEV_GPU_TEMP", Labels: map[string]string{"gpu": "0"}, V: 60}}, 1)
	if len(huge) != 1 || huge[0].PowerMilliwatts != -1 || huge[0].GPUUtilPct != -1 || huge[0].TempC != 60 {
		t.Errorf("values beyond int64: %+v", huge)
	}
}

func TestFileRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{StartUnixNs: 1000, IntervalNs: 333e6})
	if err != nil {
		t.Fatal(err)
	}
	w.Endpoint(EndpointInfo{ID: 0, URL: "http://h/metrics", Role: RoleServer})
	a := []Sample{{Family: "g", Type: "gauge", Name: "g", Labels: map[string]string{"b": "2", "a": "1"}, V: 1.5},
		{Family: "h", Type: "histogram", Name: "h_bucket", Labels: map[string]string{"le": "+Inf"}, V: math.Inf(1)}}
	if err := w.Scrape(0, PhaseBaseline, -5, 995, 3, a); err != nil {
		t.Fatal(err)
	}
	a[0].V, a[1].V = math.NaN(), 2
	if err := w.Scrape(0, PhaseFinal, 7, 1007, 2, append(a, Sample{Family: "c", Type: "counter", Name: "c_total", V: 9})); err != nil {
		t.Fatal(err)
	}
	w.Note(Note{Endpoint: 0, TimeNs: 8, Message: "hello"})
	f, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if f.Header.StartUnixNs != 1000 || len(f.Endpoints) != 1 || len(f.Series) != 3 || len(f.Scrapes) != 2 || len(f.Notes) != 1 {
		t.Fatalf("read %+v", f)
	}
	if f.Series[0].Labels["a"] != "1" || f.Scrapes[0].Phase != PhaseBaseline || f.Scrapes[0].TimeNs != -5 || !math.IsInf(f.Scrapes[0].Values[1].V, 1) {
		t.Errorf("first scrape %+v, series %+v", f.Scrapes[0], f.Series[0])
	}
	if v := f.Scrapes[1].Values; len(v) != 3 || !math.IsNaN(v[0].V) || v[2].Series != 2 || v[2].V != 9 {
		t.Errorf("second scrape %+v", v)
	}
	// A crash mid-line leaves a torn last line: skipped, the rest kept.
	torn := append(bytes.Clone(buf.Bytes()), `{"kind":"scrape","endpoint":0,"val`...)
	if f, err := Read(bytes.NewReader(torn)); err != nil || f.Torn == 0 || len(f.Scrapes) != 2 {
		t.Errorf("torn: %v %+v", err, f)
	}
}

// A scrape's phase is written as a JSON string whatever it holds (strconv.Quote's Go escapes,
// \x01 or \u2028 left raw, are not JSON's), and reads back as written.
func TestScrapePhaseEscaping(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{})
	if err != nil {
		t.Fatal(err)
	}
	w.Endpoint(EndpointInfo{ID: 0, URL: "http://h/metrics", Role: RoleServer})
	phase := "odd\x01\x7f\u2028\"é"
	if err := w.Scrape(0, phase, 0, 0, 0, []Sample{{Family: "g", Type: "gauge", Name: "g", V: 1}}); err != nil {
		t.Fatal(err)
	}
	f, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.Bytes())
	}
	if len(f.Scrapes) != 1 || f.Scrapes[0].Phase != phase {
		t.Errorf("scrapes %+v, want phase %q", f.Scrapes, phase)
	}
}

// TestFileRedacts: secrets in a scraped URL and in notes never reach the file, and a file
// from an older replay that holds them in clear is redacted on reading.
func TestFileRedacts(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{StartUnixNs: 1, IntervalNs: 1})
	if err != nil {
		t.Fatal(err)
	}
	w.Endpoint(EndpointInfo{ID: 0, URL: "http://u:s3cr3t@h/metrics?token=s3cr3t&sig=s3cr3t&x=1", Role: RoleServer})
	w.Note(Note{Endpoint: 0, Message: `server metrics http://h/metrics?api_key=s3cr3t: Get "http://h/metrics?api_key=s3cr3t": refused`})
	if strings.Contains(buf.String(), "s3cr3t") {
		t.Fatalf("the file holds the secret:\n%s", buf.String())
	}
	f, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := f.Endpoints[0].URL, "http://REDACTED@h/metrics?token=REDACTED&sig=REDACTED&x=1"; got != want {
		t.Errorf("endpoint URL %q; want %q", got, want)
	}
	old := `{"kind":"header","format":"llmbench-server-metrics","version":1,"start_unix_ns":0,"interval_ns":1}` + "\n" +
		`{"kind":"endpoint","endpoint":0,"url":"http://h/metrics?X-Amz-Signature=s3cr3t","role":"server"}` + "\n" +
		`{"kind":"note","endpoint":0,"t_ns":0,"message":"Get \"http://h/metrics?X-Amz-Signature=s3cr3t\": refused"}` + "\n"
	f, err = Read(strings.NewReader(old))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(f.Endpoints[0].URL, "s3cr3t") || strings.Contains(f.Notes[0].Message, "s3cr3t") {
		t.Errorf("read in clear: %q, %q", f.Endpoints[0].URL, f.Notes[0].Message)
	}
}

func TestReadRejects(t *testing.T) {
	head := `{"kind":"header","format":"llmbench-server-metrics","version":1,"start_unix_ns":0,"interval_ns":1}` + "\n"
	for _, c := range []struct{ in, want string }{
		{"", "empty file"},
		{`{"kind":"header","format":"llmbench-server-metrics","version":2}` + "\n", "version 2: this build reads version 1 only"},
		{`{"kind":"x"}` + "\n", "not a llmbench-server-metrics file"},
		{head + `{"kind":"scrape","endpoint":0}` + "\n", "line 2: scrape: unknown endpoint 0"},
		{head + `{"kind":"endpoint","endpoint":0}` + "\n" + `{"kind":"scrape","endpoint":0,"values":[[3,1]]}` + "\n", "line 3: scrape: unknown series 3"},
		{head + `{"kind":"wat"}` + "\n", `unknown line kind "wat"`},
		{head + "not json\n", "line 2: invalid character"},
	} {
		_, err := Read(strings.NewReader(c.in))
		if err == nil || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err %v, want %q", c.in, err, c.want)
		}
	}
}

func TestNormalizeURL(t *testing.T) {
	for _, c := range []struct{ in, want, err string }{
		{"localhost:8000", "http://localhost:8000/metrics", ""},
		{"http://h:1/", "http://h:1/metrics", ""},
		{"https://h/prometheus/metrics", "https://h/prometheus/metrics", ""},
		{"ftp://h", "", "scheme must be http or https"},
		{"http://", "", "no host"},
		{"http://u:p@h", "", "credentials"},
		{" ", "", "empty"},
		// Refused URLs are shown redacted: no credential reaches the error line.
		{"ftp://h/m?token=s3cr3t", "", `"ftp://h/m?token=REDACTED": scheme must be http or https`},
		{"http://s3cr3t:s3cr3t@h/m", "", `"http://REDACTED@h/m": credentials`},
		{"s3cr3t@h:9400", "", `"REDACTED@h:9400": credentials`},
		{"http://h:bad/m?sig=s3cr3t", "", `"http://h:bad/m?sig=REDACTED": invalid port`},
		{"http:///m?api_key=s3cr3t", "", "no host"},
	} {
		got, err := NormalizeURL(c.in)
		if got != c.want || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%q: %q %v, want %q %q", c.in, got, err, c.want, c.err)
		}
		if err != nil && strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%q: the error shows the secret: %v", c.in, err)
		}
	}
	if _, err := DefaultServerURLs([]string{"http://[::1/?token=s3cr3t"}); err == nil || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("bad base URL: %v", err)
	}
	d, _ := DefaultServerURLs([]string{"http://a:8000/v1", "http://a:8000", "b:9"})
	if strings.Join(d, " ") != "http://a:8000/metrics http://b:9/metrics" {
		t.Errorf("defaults %v", d)
	}
	g, _ := DefaultDCGMURLs([]string{"http://a:8000"})
	if strings.Join(g, " ") != "http://a:9400/metrics http://a:9401/metrics" {
		t.Errorf("DCGM defaults %v", g)
	}
}

func TestLookup(t *testing.T) {
	for _, c := range []struct{ family, stable string }{
		{"vllm:num_requests_waiting", "requests_waiting"},
		{"vllm:num_preemptions_total", "preemptions"},
		{"vllm:num_preemptions", "preemptions"},
		{"sglang:token_usage", "kv_cache_usage"},
		{"trtllm:time_to_first_token_seconds", "server_ttft"},
		{"vllm:iteration_tokens_total", "batch_tokens"},
	} {
		m, _, ok := Lookup(c.family)
		if !ok || m.Stable != c.stable {
			t.Errorf("%s: %+v %v, want %s", c.family, m, ok, c.stable)
		}
	}
	if _, _, ok := Lookup("process_cpu_seconds_total"); ok {
		t.Error("an unknown family mapped")
	}
}

// TestScraper runs the scraper against loopback servers: the baseline before the start, the
// periodic scrapes, the final one; a JSON /metrics retried at /prometheus/metrics; a page
// that is not Prometheus text dropped after one warning; DCGM pages turned into GPU samples.
func TestScraper(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok/metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		w.Write([]byte(vllmPage))
	})
	mux.HandleFunc("/trt/metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`[{"iterationStats":1}]`))
	})
	mux.HandleFunc("/trt/prometheus/metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("trtllm_request_success_total 4\n"))
	})
	mux.HandleFunc("/html/metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html>no</html>"))
	})
	dcgm, err := os.ReadFile("testdata/dcgm_exporter_h100.txt")
	if err != nil {
		t.Fatal(err)
	}
	mux.HandleFunc("/dcgm/metrics", func(w http.ResponseWriter, _ *http.Request) { w.Write(dcgm) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	buf := &lineSignal{scrape: make(chan struct{})}
	out, err := NewWriter(buf, Header{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var notices []string
	var gpuSamples []rawlog.GPUSample
	cfg := Config{
		Targets: []Target{{srv.URL + "/ok/metrics", RoleServer}, {srv.URL + "/trt/metrics", RoleServer},
			{srv.URL + "/html/metrics", RoleServer}, {srv.URL + "/dcgm/metrics", RoleGPU}},
		Interval: 20 * time.Millisecond, Out: out,
		GPU:    func(g rawlog.GPUSample) error { gpuSamples = append(gpuSamples, g); return nil },
		Notice: func(s string) { mu.Lock(); notices = append(notices, s); mu.Unlock() },
	}
	start := time.Now().Add(30 * time.Millisecond)
	stop := make(chan struct{})
	go func() {
		// Stop once each good endpoint has two run-phase scrapes (a slow scrape spaces the
		// next, so a fixed time may hold fewer on a loaded machine).
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			buf.mu.Lock()
			f, err := Read(bytes.NewReader(buf.b.Bytes()))
			buf.mu.Unlock()
			if err != nil {
				continue
			}
			runs := map[int]int{}
			for _, s := range f.Scrapes {
				if s.Phase == PhaseRun {
					runs[s.Endpoint]++
				}
			}
			if runs[0] >= 2 && runs[1] >= 2 && runs[3] >= 2 {
				break
			}
		}
		close(stop)
	}()
	if err := Run(cfg, start, stop); err != nil {
		t.Fatal(err)
	}
	f, err := Read(bytes.NewReader(buf.b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	phases := map[int][]string{}
	for _, s := range f.Scrapes {
		phases[s.Endpoint] = append(phases[s.Endpoint], s.Phase)
	}
	for _, ep := range []int{0, 1, 3} {
		p := phases[ep]
		if len(p) < 3 || p[0] != PhaseBaseline || p[len(p)-1] != PhaseFinal || p[1] != PhaseRun {
			t.Errorf("endpoint %d phases %v: want baseline, run..., final", ep, p)
		}
	}
	if first := f.Scrapes[0]; first.TimeNs >= 0 {
		t.Errorf("baseline at t=%d ns, want before the start", first.TimeNs)
	}
	if len(phases[2]) != 0 {
		t.Errorf("the HTML endpoint was recorded: %v", phases[2])
	}
	joined := strings.Join(notices, "\n")
	if strings.Count(joined, "/html/metrics") != 1 || !strings.Contains(joined, "not scraped again") {
		t.Errorf("want one warning dropping the HTML endpoint, got:\n%s", joined)
	}
	if !strings.Contains(joined, "trying "+srv.URL+"/trt/prometheus/metrics") {
		t.Errorf("no retry at /prometheus/metrics:\n%s", joined)
	}
	if len(gpuSamples) < 6 || len(gpuSamples)%2 != 0 || gpuSamples[0].PowerMilliwatts != 512337 {
		t.Errorf("%d GPU samples (want 2 per scrape, ≥ 3 scrapes): %+v", len(gpuSamples), gpuSamples[:min(2, len(gpuSamples))])
	}
}
