package replay

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/mockllm"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/tokenizer"
)

// floorBody is the request floor.c sends (testdata/floor.c): 128 words in, osl tokens out.
func floorBody(osl int) []byte {
	return []byte(fmt.Sprintf(`{"model":"Qwen/Qwen3-0.6B","messages":[{"role":"user","content":"%s"}],"stream":true,"max_tokens":%d,"ignore_eos":true}`,
		strings.Repeat("word ", 128), osl))
}

// BenchmarkFloorVsClients runs the floor program (testdata/floor.c, built with cc), the net
// client and the event-loop client against the same mockllm (TTFT 20 ms, ITL 5 ms, 100
// tokens out), closed loop at concurrency 64, 256 and 1,000, and prints each one's CPU per
// read and per request, as ratios to the floor's. The client runs on CPU 0 and this process
// (mockllm) on CPU 1 when there are two. -benchtime=1x runs each once.
func BenchmarkFloorVsClients(b *testing.B) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		b.Skip("no cc to build testdata/floor.c")
	}
	bin := filepath.Join(b.TempDir(), "floor")
	if out, err := exec.Command(cc, "-O2", "-o", bin, "testdata/floor.c").CombinedOutput(); err != nil {
		b.Fatalf("cc floor.c: %v\n%s", err, out)
	}
	// pin keeps this process (mockllm) on serverCPU while the floor runs; the coordinator
	// moves itself off the worker's CPU on its own.
	clientCPU, serverCPU := -1, -1
	all, err := allowedCPUs()
	if err == nil && len(all) >= 2 {
		clientCPU, serverCPU = all[0], all[1]
	}
	pin := func(cpus []int) {
		if clientCPU >= 0 {
			if err := setAffinity(cpus); err != nil {
				b.Fatal(err)
			}
		}
	}
	defer pin(all)
	url := startMock(b, 20*time.Millisecond, 5*time.Millisecond)
	port := url[strings.LastIndexByte(url, ':')+1:]
	const osl = 100
	for _, conc := range []int{64, 256, 1000} {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) {
			n := max(4*conc, 512)
			for i := 0; i < b.N; i++ {
				pin([]int{serverCPU})
				fl := runFloor(b, bin, port, conc, n, osl, clientCPU)
				pin(all)
				fmt.Printf("concurrency %d, %d requests, load %s\n  %-6s %8.2f µs/read %8.3f ms/req %6.1f reads/req  TTFT p99 %.2f ms\n",
					conc, n, loadAvg(), "floor", fl.usPerRead, fl.msPerReq, fl.readsPerReq, fl.ttftP99)
				for _, client := range []string{ClientNet, ClientLoop} {
					usRead, msReq, readsReq := runClientCPU(b, url, client, conc, n, osl, clientCPU)
					fmt.Printf("  %-6s %8.2f µs/read %8.3f ms/req %6.1f reads/req  = %.2f× the floor per read, %.2f× per request\n",
						client, usRead, msReq, readsReq, usRead/fl.usPerRead, msReq/fl.msPerReq)
					b.ReportMetric(usRead/fl.usPerRead, client+"-read/floor")
					b.ReportMetric(msReq/fl.msPerReq, client+"-req/floor")
				}
			}
		})
	}
}

type floorResult struct{ usPerRead, msPerReq, readsPerReq, ttftP99 float64 }

// runFloor runs the floor program and parses its line.
func runFloor(b *testing.B, bin, port string, conc, n, osl, cpu int) floorResult {
	args := []string{port, strconv.Itoa(conc), strconv.Itoa(n), strconv.Itoa(osl)}
	cmd := exec.Command(bin, args...)
	if cpu >= 0 {
		if ts, err := exec.LookPath("taskset"); err == nil {
			cmd = exec.Command(ts, append([]string{"-c", strconv.Itoa(cpu), bin}, args...)...)
		}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("floor: %v\n%s", err, out)
	}
	var r floorResult
	for _, f := range strings.Fields(string(out)) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		x, _ := strconv.ParseFloat(strings.TrimSuffix(v, "s"), 64)
		switch k {
		case "us_per_read":
			r.usPerRead = x
		case "cpu_ms_per_req":
			r.msPerReq = x
		case "reads_per_req":
			r.readsPerReq = x
		case "ttft_p99":
			r.ttftP99 = x
		}
	}
	if r.usPerRead <= 0 || r.msPerReq <= 0 {
		b.Fatalf("floor output %q", out)
	}
	return r
}

// runClientCPU replays the floor's workload with one worker on cpu and returns its CPU per
// read and per request and its reads per request.
func runClientCPU(b *testing.B, url, client string, conc, n, osl, cpu int) (usPerRead, msPerReq, readsPerReq float64) {
	ps := &planSpec{}
	body := floorBody(osl)
	for k := 0; k < n; k++ {
		ps.add(mmapds.Record{SendOffsetNs: mmapds.NoSendOffset, DelayNs: -1, Session: uint32(k), OSL: uint32(osl), Phase: mmapds.PhaseProfile}, body)
	}
	ps.meta.Concurrency = conc
	m, recs, dir := pinnedRun(b, ps, url, client, cpu, false)
	if m.Counts.Completed != n {
		b.Fatalf("%s: counts %+v", client, m.Counts)
	}
	reads := 0
	for _, q := range recs {
		reads += len(q.ReadNs)
	}
	cpuNs := float64(workerCPU(b, m, dir).Nanoseconds())
	return cpuNs / float64(reads) / 1e3, cpuNs / float64(n) / 1e6, float64(reads) / float64(n)
}

// loadAvg is the machine's 1-minute load average, for the figures' context.
func loadAvg() string {
	if runtime.GOOS != "linux" {
		return "?"
	}
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// pinnedRun replays ps with client on one worker pinned to cpu (the coordinator, and with it
// this process's mockllm, keeps off that CPU), and returns the manifest, records and run dir.
func pinnedRun(b *testing.B, ps *planSpec, url, client string, cpu int, session bool) (*rawlog.Manifest, map[uint32]rawlog.Request, string) {
	ps.meta.Streaming = true
	plan := ps.write(b, b.TempDir())
	o := testOptions(b, plan, url)
	o.Workers, o.Client = 1, client
	if session {
		o.SessionHeader = mockllm.CorrelationHeader
	}
	if cpu >= 0 {
		o.CPUs = []int{cpu}
	} else {
		o.NoPin = true
	}
	return replayed(b, o)
}

// BenchmarkClientsScheduleLag sends a Poisson open loop at 500 and 2,000 req/s for 3 s to
// mockllm (TTFT 20 ms, ITL 5 ms, 8 tokens) with each client, the worker on CPU 0 and mockllm
// on the other, and prints the schedule lag (write start minus planned instant) p50/p99 and
// the worker's CPU utilisation beside it. -benchtime=1x runs each once.
func BenchmarkClientsScheduleLag(b *testing.B) {
	url := startMock(b, 20*time.Millisecond, 5*time.Millisecond)
	cpu := -1
	if cpus, err := allowedCPUs(); err == nil && len(cpus) >= 2 {
		cpu = cpus[0]
	}
	for _, rate := range []float64{500, 2000} {
		for _, client := range []string{ClientNet, ClientLoop} {
			b.Run(fmt.Sprintf("rate=%v/client=%s", rate, client), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					rng := rand.New(rand.NewPCG(7, uint64(i)))
					at := int64(0)
					n := int(rate * 3)
					ps := &planSpec{}
					for k := 0; k < n; k++ {
						at += int64(rng.ExpFloat64() / rate * 1e9)
						ps.add(mmapds.Record{SendOffsetNs: at, DelayNs: -1, Session: uint32(k), OSL: 8, Phase: mmapds.PhaseProfile}, chatBody(8))
					}
					m, reqs, dir := pinnedRun(b, ps, url, client, cpu, false)
					var lags, dials, dialStart []int64
					for _, q := range reqs {
						if q.Outcome != rawlog.OutcomeCompleted {
							b.Fatalf("request %d: %s", q.Index, brief(q))
						}
						lags = append(lags, q.WriteStartNs-q.IntendedNs)
						if q.ConnectStartNs >= 0 {
							dials = append(dials, q.ConnectEndNs-q.ConnectStartNs)
							dialStart = append(dialStart, q.ConnectStartNs-q.IntendedNs)
						}
					}
					if len(dials) > 0 {
						fmt.Printf("  %d of %d requests dialled: connect p50 %.1f µs p99 %.1f µs, dial start lag p50 %.1f µs\n", len(dials), len(lags),
							float64(percentile(dials, 50))/1e3, float64(percentile(dials, 99))/1e3, float64(percentile(dialStart, 50))/1e3)
					}
					cpuPct := float64(workerCPU(b, m, dir)) / float64(m.EndUnixNs-m.StartUnixNs) * 100
					p50, p99 := percentile(lags, 50), percentile(lags, 99)
					fmt.Printf("rate %v %-4s lag p50 %7.1f µs p99 %7.1f µs max %7.1f µs  worker CPU %5.1f%%  load %s\n",
						rate, client, float64(p50)/1e3, float64(p99)/1e3, float64(lags[len(lags)-1])/1e3, cpuPct, loadAvg())
					b.ReportMetric(float64(p99)/1e3, "lag-p99-µs")
					b.ReportMetric(cpuPct, "worker-cpu-%")
				}
			})
		}
	}
}

// BenchmarkTTFTVsEmit measures, at concurrency 100 with the client pinned to one CPU and
// mockllm (TTFT 20 ms, ITL 5 ms) on the other, how long after mockllm began writing a
// request's first token event (its schedule log) the client's read of it returned, at p50
// and p99, for each client: what the client adds to TTFT.
func BenchmarkTTFTVsEmit(b *testing.B) {
	tok, err := tokenizer.Builtin()
	if err != nil {
		b.Fatal(err)
	}
	var sched bytes.Buffer
	var mu sync.Mutex
	o := mockllm.DefaultOptions()
	o.Tokenizer, o.TTFT, o.ITL = tok, 20*time.Millisecond, 5*time.Millisecond
	o.ScheduleLog = lockedWriter{&mu, &sched}
	url, stop, err := mockllm.Start("127.0.0.1:0", o)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(stop)
	cpu := -1
	if cpus, err := allowedCPUs(); err == nil && len(cpus) >= 2 {
		cpu = cpus[0]
	}
	for _, client := range []string{ClientNet, ClientLoop} {
		b.Run("client="+client, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				mu.Lock()
				sched.Reset()
				mu.Unlock()
				ps := &planSpec{}
				const n = 400
				for k := 0; k < n; k++ {
					ps.add(mmapds.Record{SendOffsetNs: mmapds.NoSendOffset, DelayNs: -1, Session: uint32(k), OSL: 8, Phase: mmapds.PhaseProfile}, chatBody(8))
				}
				ps.meta.Concurrency = 100
				m, reqs, _ := pinnedRun(b, ps, url, client, cpu, true)
				mu.Lock()
				recs, err := mockllm.ReadSchedule(bytes.NewReader(sched.Bytes()))
				mu.Unlock()
				if err != nil {
					b.Fatal(err)
				}
				emit := map[string]int64{}
				for _, r := range recs {
					if len(r.SentNs) > 0 {
						emit[r.CorrelationID] = r.ArrivalUnixNs + r.SentNs[0]
					}
				}
				var d []int64
				for _, q := range reqs {
					k := firstContentRead(q)
					e, ok := emit[strconv.Itoa(int(q.Index))]
					if k < 0 || !ok {
						continue
					}
					d = append(d, m.StartUnixNs+q.ReadNs[k]-e)
				}
				if len(d) < n/2 {
					b.Fatalf("%d of %d requests matched the schedule log", len(d), n)
				}
				fmt.Printf("TTFT minus mockllm's emit instant, %-4s: p50 %7.1f µs p99 %7.1f µs (%d requests)  load %s\n",
					client, float64(percentile(d, 50))/1e3, float64(percentile(d, 99))/1e3, len(d), loadAvg())
				b.ReportMetric(float64(percentile(d, 99))/1e3, "ttft-minus-emit-p99-µs")
			}
		})
	}
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
