package replay

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// BenchmarkScrapeScheduleLag proves a scrape never delays a send: a Poisson open loop at
// 500 req/s for 3 s against mockllm (TTFT 20 ms, ITL 5 ms, 8 tokens), without scraping and
// with the coordinator scraping mockllm's /metrics every 333 ms (AIPerf's period) and every
// 10 ms (30 times as often), reporting the schedule lag (write start − planned instant).
// -benchtime=1x runs each once.
//
// scrape=huge adds a second endpoint serving a page of 50,000 series and 30 MB (the series
// cap, the byte cap and the idle-priority parse at work), scraped every 333 ms.
func BenchmarkScrapeScheduleLag(b *testing.B) {
	url := startMock(b, 20*time.Millisecond, 5*time.Millisecond)
	var page strings.Builder
	page.WriteString("# TYPE junk_metric gauge\n")
	pad := strings.Repeat("p", 570)
	for i := range 50000 {
		fmt.Fprintf(&page, "junk_metric{id=\"%d\",pad=\"%s\"} %d\n", i, pad, i)
	}
	huge := []byte(page.String())
	hugeSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(huge) }))
	defer hugeSrv.Close()
	for _, c := range []struct {
		name     string
		interval time.Duration // 0: no scraping
		huge     bool
	}{{"scrape=off", 0, false}, {"scrape=333ms", 333 * time.Millisecond, false}, {"scrape=10ms", 10 * time.Millisecond, false},
		{"scrape=huge", 333 * time.Millisecond, true}} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				const rate = 500.0
				rng := rand.New(rand.NewPCG(11, uint64(i)))
				at := int64(0)
				ps := singleTurn(int(rate*3), job{}, func(int) int64 {
					at += int64(rng.ExpFloat64() / rate * 1e9)
					return at
				})
				for k := range ps.bodies {
					ps.bodies[k] = chatBody(8)
				}
				ps.meta.Streaming = true
				o := testOptions(b, ps.write(b, b.TempDir()), url)
				o.Workers = 1
				if c.interval > 0 {
					o.NoServerMetrics, o.ServerMetricsInterval = false, c.interval
				}
				if c.huge {
					o.ServerMetricsURLs = []string{hugeSrv.URL + "/metrics"}
				}
				r, err := New(o)
				if err != nil {
					b.Fatal(err)
				}
				m, err := r.Run()
				if err != nil {
					b.Fatal(err)
				}
				reqs := readRun(b, m, o.OutputDir)
				var lags []int64
				for _, q := range reqs {
					if q.WriteStartNs > 0 {
						lags = append(lags, q.WriteStartNs-q.IntendedNs)
					}
				}
				if len(lags) != len(reqs) || m.Counts.Completed != len(reqs) {
					b.Fatalf("counts %+v", m.Counts)
				}
				b.ReportMetric(float64(percentile(lags, 50))/1e3, "lag-p50-µs")
				b.ReportMetric(float64(percentile(lags, 99))/1e3, "lag-p99-µs")
				b.ReportMetric(float64(lags[len(lags)-1])/1e3, "lag-max-µs")
				b.ReportMetric(float64(len(lags)), "requests")
			}
		})
	}
}
