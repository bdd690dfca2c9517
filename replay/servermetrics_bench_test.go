package replay

import (
	"math/rand/v2"
	"testing"
	"time"
)

// BenchmarkScrapeScheduleLag proves a scrape never delays a send: a Poisson open loop at
// 500 req/s for 3 s against mockllm (TTFT 20 ms, ITL 5 ms, 8 tokens), without scraping and
// with the coordinator scraping mockllm's /metrics every 333 ms (AIPerf's period) and every
// 10 ms (30 times as often), reporting the schedule lag (write start − planned instant).
// -benchtime=1x runs each once.
func BenchmarkScrapeScheduleLag(b *testing.B) {
	url := startMock(b, 20*time.Millisecond, 5*time.Millisecond)
	for _, c := range []struct {
		name     string
		interval time.Duration // 0: no scraping
	}{{"scrape=off", 0}, {"scrape=333ms", 333 * time.Millisecond}, {"scrape=10ms", 10 * time.Millisecond}} {
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
