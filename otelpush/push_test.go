package otelpush

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/proto"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay"
)

// collector is an OTLP/HTTP receiver: every push to /v1/metrics, decoded with the OTLP proto
// types, and when it arrived.
type collector struct {
	mu     sync.Mutex
	pushes []*colmetrics.ExportMetricsServiceRequest
	at     []time.Time
	bad    []string
}

func startCollector(t *testing.T) (*collector, string) {
	t.Helper()
	c := &collector{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		defer c.mu.Unlock()
		if r.URL.Path != "/v1/metrics" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			c.bad = append(c.bad, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type"))
			w.WriteHeader(http.StatusNotFound)
			return
		}
		req := &colmetrics.ExportMetricsServiceRequest{}
		if err := proto.Unmarshal(b, req); err != nil {
			c.bad = append(c.bad, "undecodable push: "+err.Error())
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		c.pushes = append(c.pushes, req)
		c.at = append(c.at, time.Now())
		w.Header().Set("Content-Type", "application/x-protobuf")
		out, _ := proto.Marshal(&colmetrics.ExportMetricsServiceResponse{})
		w.Write(out)
	}))
	t.Cleanup(srv.Close)
	return c, srv.URL
}

// metrics returns the named metric of the last push that has it, and that push's resource
// attributes.
func (c *collector) last(name string) (*metricspb.Metric, map[string]string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.pushes) - 1; i >= 0; i-- {
		for _, rm := range c.pushes[i].ResourceMetrics {
			res := map[string]string{}
			for _, kv := range rm.Resource.GetAttributes() {
				res[kv.Key] = kv.Value.GetStringValue()
			}
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					if m.Name == name {
						return m, res
					}
				}
			}
		}
	}
	return nil, nil
}

func attrs(kvs []*commonpb.KeyValue) map[string]string {
	out := map[string]string{}
	for _, kv := range kvs {
		out[kv.Key] = kv.Value.GetStringValue()
	}
	return out
}

// sseBody is a streamed chat answer of n one-word chunks, each its own read: ttft after the
// send, then every itl.
func sseRequest(index int, send, ttft, itl int64, n int) *rawlog.Request {
	q := &rawlog.Request{Index: uint32(index), Outcome: rawlog.OutcomeCompleted, Status: 200, IntendedNs: -1, ReadyNs: send,
		WriteStartNs: send, WriteEndNs: send + 1000, HeaderNs: send + ttft/2, ConnectStartNs: -1, ConnectEndNs: -1}
	for k := 0; k <= n; k++ {
		ev := `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" w"}}]}` + "\n\n"
		if k == n {
			ev = "data: [DONE]\n\n"
		}
		q.Body = append(q.Body, ev...)
		q.ReadNs = append(q.ReadNs, send+ttft+int64(min(k, n-1))*itl)
		q.ReadEnd = append(q.ReadEnd, uint32(len(q.Body)))
	}
	q.EndNs = q.ReadNs[len(q.ReadNs)-1] + 1000
	return q
}

type words struct{}

func (words) Count(s string) int { return len(strings.Fields(s)) }

// fakeRun writes a plan of n requests (ISL 100) into dir and returns the run's info.
func fakeRun(t *testing.T, dir string, n int) replay.RunInfo {
	t.Helper()
	planPath := filepath.Join(dir, "plan.llmplan")
	w, err := mmapds.Create(planPath)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		ph := mmapds.PhaseProfile
		if i == 0 {
			ph = mmapds.PhaseWarmup
		}
		if err := w.Add(mmapds.Record{SendOffsetNs: mmapds.NoSendOffset, DelayNs: -1, Session: uint32(i), ISL: 100, Phase: ph}, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	h, err := w.Close(&mmapds.Meta{Endpoint: "chat", Model: "org/model-a,org/model-b", Streaming: true, Tokenizer: "words",
		Paths: []string{"/v1/chat/completions"}, Method: "POST"})
	if err != nil {
		t.Fatal(err)
	}
	runDir := filepath.Join(dir, "run")
	if err := os.Mkdir(runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	return replay.RunInfo{Dir: runDir, PlanPath: planPath, PlanHash: fmt.Sprintf("%x", h), StartUnixNs: 1_700_000_000_000_000_000,
		URLs: []string{"http://127.0.0.1:8000"}}
}

// TestPushesDuringTheRun: while a worker log grows over ~3 s, the collector gets a push every
// interval (several before the run ends), named by the GenAI semantic conventions, with the
// run's id and model; at the end the histograms hold exactly the run's profile requests, with
// the values analyze gives each one (TTFT 20 ms, ITL 5 ms, 8 output tokens, ISL 100).
func TestPushesDuringTheRun(t *testing.T) {
	col, url := startCollector(t)
	info := fakeRun(t, t.TempDir(), 31)
	var warn bytes.Buffer
	p, err := New(Options{URL: strings.TrimPrefix(url, "http://"), Interval: 300 * time.Millisecond,
		LoadTokenizer: func(string) (analyze.TokenCounter, error) { return words{}, nil }, Warn: &warn, Name: "test",
		ResourceAttributes: map[string]string{"deployment.environment": "ci"}})
	if err != nil {
		t.Fatal(err)
	}
	p.Start(info)
	f, err := os.Create(filepath.Join(info.Dir, replay.WorkerLogName(0)))
	if err != nil {
		t.Fatal(err)
	}
	lw, err := rawlog.NewWriter(f, rawlog.Header{Worker: 0, PlanHash: info.PlanHash, StartUnixNs: info.StartUnixNs})
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	for i := 0; i < 31; i++ {
		if err := lw.WriteRequest(sseRequest(i, int64(i)*100e6, 20e6, 5e6, 8)); err != nil {
			t.Fatal(err)
		}
		p.Progress(int64(i+1), int64(i+1), 0)
		time.Sleep(100 * time.Millisecond)
	}
	col.mu.Lock()
	during := len(col.pushes)
	col.mu.Unlock()
	p.Finish()
	f.Close()
	t.Logf("%d pushes in %v of run, %d in all", during, time.Since(began).Round(time.Millisecond), len(col.pushes))
	if during < 3 {
		t.Errorf("%d pushes while the run lasted, want several", during)
	}
	if len(col.bad) > 0 {
		t.Errorf("bad pushes: %q", col.bad)
	}
	if warn.Len() > 0 {
		t.Errorf("warnings with a working collector: %s", warn.String())
	}

	ttfc, res := col.last("gen_ai.client.operation.time_to_first_chunk")
	if ttfc == nil {
		t.Fatal("no gen_ai.client.operation.time_to_first_chunk pushed")
	}
	wantRes := map[string]string{"service.name": "llmbench", "aiperf.benchmark.id": analyze.BenchmarkIDOf(info.PlanHash, info.StartUnixNs),
		"aiperf.model.name": "org/model-a", "aiperf.endpoint.type": "chat", "deployment.environment": "ci"}
	for k, v := range wantRes {
		if res[k] != v {
			t.Errorf("resource %s = %q, want %q", k, res[k], v)
		}
	}
	profile := func(m *metricspb.Metric) *metricspb.HistogramDataPoint {
		for _, dp := range m.GetHistogram().GetDataPoints() {
			a := attrs(dp.Attributes)
			if a["aiperf.benchmark_phase"] == "profiling" && a["gen_ai.token.type"] != "input" {
				if a["gen_ai.request.model"] != "org/model-a" || a["gen_ai.operation.name"] != "chat" || a["gen_ai.provider.name"] != "_OTHER" {
					t.Errorf("%s attributes %v", m.Name, a)
				}
				return dp
			}
		}
		t.Fatalf("%s has no profiling data point", m.Name)
		return nil
	}
	for _, c := range []struct {
		name, unit string
		each       float64
	}{
		{"gen_ai.client.operation.time_to_first_chunk", "s", 0.020},
		{"gen_ai.client.operation.time_per_output_chunk", "s", 0.005},
		{"gen_ai.client.operation.duration", "s", 0.020 + 7*0.005},
		{"gen_ai.client.token.usage", "{token}", 8},
	} {
		m, _ := col.last(c.name)
		if m == nil {
			t.Errorf("no %s pushed", c.name)
			continue
		}
		if m.Unit != c.unit {
			t.Errorf("%s unit %q, want %q", c.name, m.Unit, c.unit)
		}
		dp := profile(m)
		if dp.Count != 30 || math.Abs(dp.GetSum()-30*c.each) > 1e-9*30*c.each+1e-12 {
			t.Errorf("%s: count %d sum %v, want 30 requests of %v", c.name, dp.Count, dp.GetSum(), c.each)
		}
	}
	if sent, _ := col.last("aiperf.timing.requests.sent"); sent == nil || sent.GetSum().GetDataPoints()[0].GetAsInt() != 31 {
		t.Errorf("aiperf.timing.requests.sent = %v, want 31", sent)
	}
}

// TestUnreachableCollector: a collector nobody listens on is one warning line, and the run's
// end is not held up beyond the export timeout.
func TestUnreachableCollector(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL
	dead.Close()
	info := fakeRun(t, t.TempDir(), 3)
	var warn bytes.Buffer
	p, err := New(Options{URL: url, Interval: 50 * time.Millisecond, LoadTokenizer: func(string) (analyze.TokenCounter, error) { return words{}, nil },
		Warn: &warn, Name: "profile"})
	if err != nil {
		t.Fatal(err)
	}
	p.Start(info)
	for i := 0; i < 10; i++ {
		p.Progress(int64(i), int64(i), 0)
		time.Sleep(30 * time.Millisecond)
	}
	t0 := time.Now()
	p.Finish()
	if d := time.Since(t0); d > finishTimeout {
		t.Errorf("Finish took %v", d)
	}
	lines := strings.Split(strings.TrimSpace(warn.String()), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "profile: --otel-url "+url+"/v1/metrics: the collector did not take the metrics") {
		t.Errorf("want one warning line, got:\n%s", warn.String())
	}
}

func TestCollectorURL(t *testing.T) {
	for _, c := range []struct{ in, want, err string }{
		{"localhost:4318", "http://localhost:4318/v1/metrics", ""},
		{"collector", "http://collector/v1/metrics", ""},
		{"https://c.example:4318/", "https://c.example:4318/v1/metrics", ""},
		{"http://c:4318/custom/metrics", "http://c:4318/custom/metrics", ""},
		{"ftp://c", "", "scheme must be http or https"},
		{"", "", "empty URL"},
		{"http://", "", "no host"},
	} {
		got, err := CollectorURL(c.in)
		if got != c.want || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("CollectorURL(%q) = %q, %v; want %q, error ~ %q", c.in, got, err, c.want, c.err)
		}
	}
}

func TestProviderName(t *testing.T) {
	for _, c := range []struct {
		override string
		urls     []string
		want     string
	}{
		{"", []string{"https://api.openai.com"}, "openai"},
		{"", []string{"http://localhost:8000", "https://x.openai.azure.com/openai"}, "azure.ai.openai"},
		{"vllm", []string{"https://api.openai.com"}, "vllm"},
		{"", []string{"http://127.0.0.1:8000"}, "_OTHER"},
	} {
		if got := providerName(c.override, c.urls); got != c.want {
			t.Errorf("providerName(%q, %q) = %q, want %q", c.override, c.urls, got, c.want)
		}
	}
}
