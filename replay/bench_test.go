package replay

import (
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/mockllm"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay/internal/testserver"
	"github.com/llmbench/llmbench/tokenizer"
)

// A worker's steady state allocates nothing per request, its masking of the credentials it
// sends included: two runs of different sizes over
// the same allocation-free server allocate the same (setup only), whatever the number of
// requests and reads.
func TestWorkerSteadyStateAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	addr := testserver.RawSSE(t, 16)
	for _, client := range []string{ClientNet, ClientLoop} {
		t.Run(client, func(t *testing.T) { steadyStateAllocs(t, addr, client) })
	}
}

// steadyStateAllocs checks one client's allocations per request (see
// TestWorkerSteadyStateAllocs).
func steadyStateAllocs(t *testing.T, addr, client string) {
	mallocs := func(n int) uint64 {
		ps := singleTurn(n, job{}, nil)
		ps.meta.Concurrency = 4
		plan := ps.write(t, t.TempDir())
		cfg := workerConfig{Plan: plan, URLs: []string{"http://" + addr}, Workers: 1, CPU: -1, Client: client,
			RequestTimeoutNs: int64(10 * time.Second), Log: filepath.Join(t.TempDir(), "w.rawlog"),
			// A credential to mask in every logged body (worker.mask) is on the path measured.
			Headers: [][2]string{{"Authorization", "Bearer sk-steady-state-0123456789"}}}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		res, err := runWorker(cfg, make(chan string), inproc{start: time.Now().UnixNano()})
		runtime.ReadMemStats(&after)
		if err != nil || res.Counts.Completed != n {
			t.Fatalf("%v %+v", err, res.Counts)
		}
		return after.Mallocs - before.Mallocs
	}
	mallocs(200) // warm up lazily initialised runtime and library state
	small, large := mallocs(300), mallocs(3000)
	perRequest := (float64(large) - float64(small)) / 2700
	t.Logf("allocations: %d for 300 requests, %d for 3000: %.3f per extra request", small, large, perRequest)
	// The plan scan (a session map) grows with the plan, not with the sending: allow it.
	if perRequest > 0.5 {
		t.Fatalf("%.2f allocations per request", perRequest)
	}
}

// BenchmarkWorkerRequest is one request through a worker, per client: a closed loop at
// concurrency 4 against an allocation-free loopback server, b.N requests in one run. With
// -benchmem, allocs/op is what a request allocates in steady state plus the run's setup
// (plan scan, graph, buffers) spread over b.N.
func BenchmarkWorkerRequest(b *testing.B) {
	addr := testserver.RawSSE(b, 16)
	for _, client := range []string{ClientNet, ClientLoop} {
		b.Run(client, func(b *testing.B) {
			ps := singleTurn(b.N, job{}, nil)
			ps.meta.Concurrency = 4
			plan := ps.write(b, b.TempDir())
			cfg := workerConfig{Plan: plan, URLs: []string{"http://" + addr}, Workers: 1, CPU: -1, Client: client,
				RequestTimeoutNs: int64(10 * time.Second), Log: filepath.Join(b.TempDir(), "w.rawlog")}
			b.ReportAllocs()
			b.ResetTimer()
			res, err := runWorker(cfg, make(chan string), inproc{start: time.Now().UnixNano()})
			if err != nil || res.Counts.Completed != b.N {
				b.Fatalf("%v %+v", err, res.Counts)
			}
		})
	}
}

// startMock serves mockllm on loopback with the given timing.
func startMock(tb testing.TB, ttft, itl time.Duration) string {
	tok, err := tokenizer.Builtin()
	if err != nil {
		tb.Fatal(err)
	}
	o := mockllm.DefaultOptions()
	o.Tokenizer = tok
	o.TTFT, o.ITL = ttft, itl
	url, stop, err := mockllm.Start("127.0.0.1:0", o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(stop)
	return url
}

func chatBody(tokens int) []byte {
	return []byte(fmt.Sprintf(`{"model":"mock-llm","messages":[{"role":"user","content":"Tell me a story about a lighthouse."}],`+
		`"stream":true,"max_completion_tokens":%d,"min_tokens":%d,"ignore_eos":true}`, tokens, tokens))
}

// replayed runs a replay with o and returns its manifest, records and run directory.
func replayed(b *testing.B, o Options) (*rawlog.Manifest, map[uint32]rawlog.Request, string) {
	b.Helper()
	r, err := New(o)
	if err != nil {
		b.Fatal(err)
	}
	m, err := r.Run()
	if err != nil {
		b.Fatal(err)
	}
	return m, readRun(b, m, o.OutputDir), o.OutputDir
}

// benchRun replays ps against url with workers workers and returns the manifest and records.
func benchRun(b *testing.B, ps *planSpec, url string, workers int, spin time.Duration) (*rawlog.Manifest, map[uint32]rawlog.Request, string) {
	b.Helper()
	ps.meta.Streaming = true
	plan := ps.write(b, b.TempDir())
	o := testOptions(b, plan, url)
	o.Workers = workers
	o.Spin = spin
	return replayed(b, o)
}

// workerCPU returns the CPU time the workers used between their first and last samples.
func workerCPU(b *testing.B, m *rawlog.Manifest, dir string) time.Duration {
	var total int64
	for _, w := range m.Workers {
		r, err := rawlog.Open(filepath.Join(dir, w.Log))
		if err != nil {
			b.Fatal(err)
		}
		var first, last *rawlog.CPUSample
		for {
			k, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if k == rawlog.KindCPU {
				s := r.CPU()
				if first == nil {
					first = &s
				}
				last = &s
			}
		}
		r.Close()
		total += last.UserNs + last.SysNs - first.UserNs - first.SysNs
	}
	return time.Duration(total)
}

// BenchmarkScheduleLag sends a Poisson open loop at 500 and 2,000 req/s for 3 s to an
// allocation-free loopback server and reports the schedule lag (write start minus planned
// instant) at p50 and p99. -benchtime=1x runs each once.
func BenchmarkScheduleLag(b *testing.B) {
	addr := "http://" + testserver.RawSSE(b, 4)
	for _, c := range []struct {
		rate    float64
		workers int
		spin    time.Duration
	}{{500, 1, 0}, {500, 1, 50 * time.Microsecond}, {2000, 1, 0}, {2000, 2, 0}} {
		b.Run(fmt.Sprintf("rate=%v/workers=%d/spin=%v", c.rate, c.workers, c.spin), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				rng := rand.New(rand.NewPCG(7, uint64(i)))
				at := int64(0)
				n := int(c.rate * 3)
				ps := singleTurn(n, job{}, func(int) int64 {
					at += int64(rng.ExpFloat64() / c.rate * 1e9)
					return at
				})
				m, reqs, dir := benchRun(b, ps, addr, c.workers, c.spin)
				var lags []int64
				for _, q := range reqs {
					lags = append(lags, q.WriteStartNs-q.IntendedNs)
				}
				b.ReportMetric(float64(percentile(lags, 50))/1e3, "lag-p50-µs")
				b.ReportMetric(float64(percentile(lags, 99))/1e3, "lag-p99-µs")
				b.ReportMetric(float64(lags[len(lags)-1])/1e3, "lag-max-µs")
				b.ReportMetric(float64(workerCPU(b, m, dir).Microseconds())/float64(n), "cpu-µs/req")
			}
		})
	}
}

// BenchmarkClientCPU is the reference run: a 128/128 streaming plan at concurrency
// 16 against mockllm (TTFT 20 ms, ITL 5 ms). It checks every request completed with all its
// events and reports the workers' CPU per streamed chunk (read) and per request, taken from
// the CPU samples in their logs (the server runs in this process, so its CPU is not counted).
func BenchmarkClientCPU(b *testing.B) {
	url := startMock(b, 20*time.Millisecond, 5*time.Millisecond)
	for i := 0; i < b.N; i++ {
		ps := &planSpec{}
		for k := 0; k < 128; k++ {
			ps.add(mmapds.Record{SendOffsetNs: mmapds.NoSendOffset, DelayNs: -1, Session: uint32(k), OSL: 128, Phase: mmapds.PhaseProfile}, chatBody(128))
		}
		ps.meta.Concurrency = 16
		m, reqs, dir := benchRun(b, ps, url, 1, 0)
		if m.Counts.Completed != 128 || len(reqs) != 128 {
			b.Fatalf("counts %+v", m.Counts)
		}
		reads, events := 0, 0
		for _, q := range reqs {
			if q.Status != 200 {
				b.Fatalf("request %d: status %d %s", q.Index, q.Status, q.Body)
			}
			reads += len(q.ReadNs)
			events += strings.Count(string(q.Body), "\"content\":") - strings.Count(string(q.Body), "\"content\":\"\"")
		}
		if events < 128*128 {
			b.Fatalf("%d content events, want %d", events, 128*128)
		}
		cpu := workerCPU(b, m, dir)
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(reads), "cpu-ns/read")
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(events), "cpu-ns/chunk")
		b.ReportMetric(float64(cpu.Microseconds())/128, "cpu-µs/req")
		b.ReportMetric(float64(reads)/128, "reads/req")
	}
}

// BenchmarkTTFTError measures TTFT (first content read minus write start) against mockllm's
// configured 20 ms at concurrency 1, 100 and 1,000, and reports the error at p50 and p99.
// The error includes mockllm's own lateness: both run on this machine.
func BenchmarkTTFTError(b *testing.B) {
	url := startMock(b, 20*time.Millisecond, 5*time.Millisecond)
	for _, conc := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				n := max(50, 2*conc)
				ps := &planSpec{}
				for k := 0; k < n; k++ {
					ps.add(mmapds.Record{SendOffsetNs: mmapds.NoSendOffset, DelayNs: -1, Session: uint32(k), Phase: mmapds.PhaseProfile}, chatBody(8))
				}
				ps.meta.Concurrency = conc
				_, reqs, _ := benchRun(b, ps, url, 1, 0)
				var errs []int64
				for _, q := range reqs {
					k := firstContentRead(q)
					if k < 0 {
						b.Fatalf("request %d has no content event: %s", q.Index, q.Err)
					}
					errs = append(errs, q.ReadNs[k]-q.WriteStartNs-20e6)
				}
				b.ReportMetric(float64(percentile(errs, 50))/1e3, "ttft-err-p50-µs")
				b.ReportMetric(float64(percentile(errs, 99))/1e3, "ttft-err-p99-µs")
			}
		})
	}
}
