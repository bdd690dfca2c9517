package mockllm

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
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

// leanStreams opens n connections to addr, starting them at random
// over spread, sends req on each and reads until "[DONE]". The client does as
// little as possible so that the server's timing, not the client, is
// measured: no parsing, and it drains each socket every readEvery rather
// than on every event (the kernel buffers the events meanwhile; the
// server's emit lag is taken when its write returns, so a lazy reader
// does not change it as long as the socket buffer has room).
func leanStreams(tb testing.TB, addr string, n int, spread, readEvery time.Duration, req []byte) (failed int64) {
	var wg sync.WaitGroup
	var bad atomic.Int64
	start := time.Now()
	done := []byte("data: [DONE]")
	// Arrivals at seeded uniform random offsets (a Poisson process given
	// its count), not on a grid: a grid whose step divides the ITL would
	// make n*step/ITL streams due at the very same instants.
	r := rand.New(rand.NewPCG(1, 2))
	offsets := make([]time.Duration, n)
	for i := range offsets {
		offsets[i] = time.Duration(r.Int64N(int64(spread) + 1))
	}
	for i := range n {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			time.Sleep(time.Until(start.Add(offsets[i])))
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
			buf := make([]byte, 16384)
			var tail []byte
			for {
				if readEvery > 0 {
					time.Sleep(readEvery)
				}
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

// Environment of the lean client helper process.
const (
	envLeanAddr   = "MOCKLLM_LEAN_CLIENT_ADDR"
	envLeanN      = "MOCKLLM_LEAN_CLIENT_N"
	envLeanSpread = "MOCKLLM_LEAN_CLIENT_SPREAD"
	envLeanRead   = "MOCKLLM_LEAN_CLIENT_READ"
	envLeanBody   = "MOCKLLM_LEAN_CLIENT_BODY"
)

// TestLeanClientProcess is not a test: it is the emit-lag benchmark's
// client, run by the benchmark in a process of its own (so that client
// and server do not share one Go scheduler, as with a real benchmark
// client). It skips unless the benchmark set its environment.
func TestLeanClientProcess(t *testing.T) {
	addr := os.Getenv(envLeanAddr)
	if addr == "" {
		t.Skip("helper process of BenchmarkEmitLag1000Streams")
	}
	n, _ := strconv.Atoi(os.Getenv(envLeanN))
	spread, _ := time.ParseDuration(os.Getenv(envLeanSpread))
	readEvery, _ := time.ParseDuration(os.Getenv(envLeanRead))
	body := os.Getenv(envLeanBody)
	if bad := leanStreams(t, addr, n, spread, readEvery, rawRequest("/v1/chat/completions", []byte(body))); bad > 0 {
		t.Fatalf("%d of %d streams failed", bad, n)
	}
}

// leanStreamsProcess runs leanStreams in a child process (this test
// binary, running TestLeanClientProcess) at the lowest CPU priority.
func leanStreamsProcess(tb testing.TB, addr string, n int, spread, readEvery time.Duration, body []byte) error {
	args := []string{os.Args[0], "-test.run=^TestLeanClientProcess$", "-test.count=1"}
	// The load generator yields the cores to the server it loads: on two
	// cores a client at equal priority holds a core for whole scheduler
	// slices (milliseconds) and its own lag would be measured as the
	// server's. A real client runs on other cores.
	if nice, err := exec.LookPath("nice"); err == nil {
		args = append([]string{nice, "-n", "19"}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), envLeanAddr+"="+addr, envLeanN+"="+strconv.Itoa(n),
		envLeanSpread+"="+spread.String(), envLeanRead+"="+readEvery.String(), envLeanBody+"="+string(body))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("lean client process: %w\n%s", err, out)
	}
	return nil
}

// BenchmarkEmitLag1000Streams serves 1,000 concurrent streams over
// loopback and reports the server's own emit lag: actual minus scheduled
// write time of every token event, from its /metrics histogram. The
// client runs in a separate process at the lowest priority (sharing one
// Go scheduler, or equal CPU priority, with 1,000 reading connections
// would measure the client) and drains each socket every 50 ms. Streams
// start at random over one second and last three, so all 1,000 are live
// for most of the run. "gotimer" is the baseline: the same server waiting
// with Go timers instead of its clock; p99-gain-x is their ratio. At
// 20 ms ITL the 50,000 loopback writes a second take most of two cores on
// a small VM (30 µs a write here), so that case shows where the machine,
// not the schedule, sets the lag; 100 ms ITL leaves the cores half idle.
func BenchmarkEmitLag1000Streams(b *testing.B) {
	const streams = 1000
	cases := []struct {
		itl  time.Duration
		mode string
	}{
		{100 * time.Millisecond, "gotimer"},
		{100 * time.Millisecond, "clock"},
		{20 * time.Millisecond, "gotimer"},
		{20 * time.Millisecond, "clock"},
	}
	var base time.Duration
	for _, c := range cases {
		b.Run(fmt.Sprintf("itl=%v/%s", c.itl, c.mode), func(b *testing.B) {
			var last LagStats
			for range b.N {
				o := testOptions()
				o.TTFT, o.ITL = 100*time.Millisecond, c.itl
				s, err := New(o)
				if err != nil {
					b.Fatal(err)
				}
				if c.mode == "gotimer" {
					s.wait = waitGoTimer
				}
				addr := serveOn(b, s)
				tokens := int(3*time.Second/c.itl) + 1
				body := []byte(`{"model":"m","messages":[{"role":"user","content":"hello world"}],"stream":true,"max_tokens":` +
					strconv.Itoa(tokens) + `,"ignore_eos":true}`)
				if err := leanStreamsProcess(b, addr, streams, time.Second, 50*time.Millisecond, body); err != nil {
					b.Fatal(err)
				}
				last = s.Stats().EmitLag
				if last.Count != int64(streams*tokens) {
					b.Fatalf("recorded %d emits, want %d", last.Count, streams*tokens)
				}
			}
			b.ReportMetric(float64(last.P50.Microseconds()), "lag-p50-µs")
			b.ReportMetric(float64(last.P99.Microseconds()), "lag-p99-µs")
			b.ReportMetric(float64(last.P999.Microseconds()), "lag-p99.9-µs")
			b.ReportMetric(float64(last.Max.Microseconds()), "lag-max-µs")
			switch {
			case c.mode == "gotimer":
				base = last.P99
			case base > 0 && last.P99 > 0:
				b.ReportMetric(float64(base)/float64(last.P99), "p99-gain-x")
			}
		})
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
