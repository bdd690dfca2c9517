package mockllm

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// serveOn serves s on a loopback listener until the test ends.
func serveOn(tb testing.TB, s *Server) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	tb.Cleanup(func() { s.Close(); _ = hs.Close() })
	return ln.Addr().String()
}

// rawRequest renders an HTTP/1.1 POST with a JSON body.
func rawRequest(path string, body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", path, len(body))
	b.Write(body)
	return b.Bytes()
}

// leanStreams opens n connections to addr, starting them evenly over
// spread, sends req on each and reads until "[DONE]". The client does as
// little as possible (one read per arrival, no parsing) so that the
// server's timing, not the client, is measured.
func leanStreams(tb testing.TB, addr string, n int, spread time.Duration, req []byte) (failed int64) {
	var wg sync.WaitGroup
	var bad atomic.Int64
	start := time.Now()
	done := []byte("data: [DONE]")
	for i := range n {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			time.Sleep(time.Until(start.Add(spread * time.Duration(i) / time.Duration(n))))
			c, err := net.Dial("tcp", addr)
			if err != nil {
				bad.Add(1)
				return
			}
			defer c.Close()
			if _, err := c.Write(req); err != nil {
				bad.Add(1)
				return
			}
			buf := make([]byte, 4096)
			var tail []byte
			for {
				m, err := c.Read(buf)
				if m > 0 {
					// Keep the last bytes so "[DONE]" split across reads is found.
					tail = append(tail[:0:0], append(tail, buf[:m]...)...)
					if bytes.Contains(tail, done) {
						return
					}
					if len(tail) > 32 {
						tail = tail[len(tail)-32:]
					}
				}
				if err != nil {
					if err != io.EOF {
						bad.Add(1)
					} else {
						bad.Add(1) // EOF before [DONE]
					}
					return
				}
			}
		}(i)
	}
	wg.Wait()
	return bad.Load()
}

// BenchmarkEmitLag1000Streams serves 1,000 concurrent streams over
// loopback and reports the server's own emit lag (actual minus scheduled
// write time). The "gotimer" variants are the baseline: the same server
// waiting with Go timers instead of its clock. Streams start evenly over
// one second, so all 1,000 are live for most of the run.
func BenchmarkEmitLag1000Streams(b *testing.B) {
	const streams = 1000
	for _, itl := range []time.Duration{10 * time.Millisecond, 20 * time.Millisecond} {
		var base time.Duration
		for _, mode := range []string{"gotimer", "clock"} {
			b.Run(fmt.Sprintf("itl=%v/%s", itl, mode), func(b *testing.B) {
				var last LagStats
				for range b.N {
					o := testOptions()
					o.TTFT, o.ITL = 100*time.Millisecond, itl
					s, err := New(o)
					if err != nil {
						b.Fatal(err)
					}
					s.goTimers = mode == "gotimer"
					addr := serveOn(b, s)
					tokens := int(3*time.Second/itl) + 1
					body := []byte(`{"model":"m","messages":[{"role":"user","content":"hello world"}],"stream":true,"max_tokens":` +
						strconv.Itoa(tokens) + `,"ignore_eos":true}`)
					if bad := leanStreams(b, addr, streams, time.Second, rawRequest("/v1/chat/completions", body)); bad > 0 {
						b.Fatalf("%d of %d streams failed", bad, streams)
					}
					last = s.Stats().EmitLag
					if last.Count < int64(streams*tokens) {
						b.Fatalf("recorded %d emits, want %d", last.Count, streams*tokens)
					}
				}
				b.ReportMetric(float64(last.P50.Microseconds()), "lag-p50-µs")
				b.ReportMetric(float64(last.P99.Microseconds()), "lag-p99-µs")
				b.ReportMetric(float64(last.P999.Microseconds()), "lag-p99.9-µs")
				b.ReportMetric(float64(last.Max.Microseconds()), "lag-max-µs")
				if mode == "gotimer" {
					base = last.P99
				} else if base > 0 && last.P99 > 0 {
					b.ReportMetric(float64(base)/float64(last.P99), "p99-gain-x")
				}
			})
		}
	}
}

// BenchmarkRenderEvent renders one mid-stream token event per API into
// a reused buffer: the per-chunk hot path must not allocate.
func BenchmarkRenderEvent(b *testing.B) {
	o := testOptions()
	o.ReasoningTokens = 4
	s, err := New(o)
	if err != nil {
		b.Fatal(err)
	}
	for _, api := range []apiKind{apiChat, apiCompletions, apiResponses, apiAnthropic, apiTGI} {
		b.Run(apiNames[api], func(b *testing.B) {
			g := s.plan(api, &genRequest{model: "m", maxTokens: 64, ignoreEOS: true, reasoning: api != apiTGI && api != apiCompletions, promptTokens: 10}, 1, 1)
			buf := make([]byte, 0, 4096)
			buf = g.event(buf[:0], 0) // open the first block/item
			j := len(g.chunks) / 2
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				buf = g.event(buf[:0], j)
			}
			b.SetBytes(int64(len(buf)))
		})
	}
}
