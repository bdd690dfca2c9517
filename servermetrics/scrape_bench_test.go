package servermetrics

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/llmbench/llmbench/mockllm"
)

// vllmPages are successive /metrics pages of mockllm's vLLM page (--vllm-metrics) with
// requests served between them, so that the histograms and counters change from one page
// to the next as a real server's do under load.
func vllmPages(tb testing.TB, n int) [][]byte {
	o := mockllm.DefaultOptions()
	o.VLLMMetrics, o.TTFT, o.ITL = true, 0, 0
	url, stop, err := mockllm.Start("127.0.0.1:0", o)
	if err != nil {
		tb.Fatal(err)
	}
	defer stop()
	var pages [][]byte
	for i := range n {
		for range 1 + i%3 {
			resp, err := http.Post(url+"/v1/chat/completions", "application/json",
				strings.NewReader(`{"messages":[{"role":"user","content":"hi"}],"max_tokens":8,"ignore_eos":true,"stream":true}`))
			if err != nil {
				tb.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		resp, err := http.Get(url + "/metrics")
		if err != nil {
			tb.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		pages = append(pages, b)
	}
	return pages
}

// processCPU is this process's user and system CPU time.
func processCPU() time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkScrapeVLLMPage is one scrape of a vLLM-sized page (mockllm --vllm-metrics, about
// 630 samples and 65 kB, its values changing between scrapes): the request, the read, the
// selection and parse, and the server-metrics file's line, as the coordinator does it every
// interval. It reports the process's CPU per scrape (the HTTP transport's goroutines
// included; the test server only writes a prepared page) and what that is of one core at the
// default interval (DefaultInterval): the scrape's cost to the machine.
func BenchmarkScrapeVLLMPage(b *testing.B) {
	pages := vllmPages(b, 8)
	var k atomic.Uint64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.Write(pages[k.Add(1)%uint64(len(pages))])
	}))
	defer srv.Close()
	out, err := NewWriter(io.Discard, Header{})
	if err != nil {
		b.Fatal(err)
	}
	cfg := Config{Out: out, Interval: DefaultInterval, Timeout: 2 * time.Second, MaxSeries: DefaultMaxSeries, MaxPageBytes: MaxPageBytes,
		IdleAbove: lightPageBytes, Client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}}
	e := &endpointState{cfg: &cfg, url: srv.URL + "/metrics", role: RoleServer, start: time.Now(), gpuMu: &sync.Mutex{}}
	ctx := context.Background()
	if _, err := e.scrape(ctx, PhaseBaseline); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	for b.Loop() {
		if _, err := e.scrape(ctx, PhaseRun); err != nil {
			b.Fatal(err)
		}
	}
	cpu := processCPU() - cpu0
	per := float64(cpu) / float64(b.N)
	b.ReportMetric(per/1e3, "cpu-µs/scrape")
	b.ReportMetric(per/float64(DefaultInterval)*100, "%core@333ms")
	b.ReportMetric(float64(len(pages[0]))/1024, "page-kB")
}
