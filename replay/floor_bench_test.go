package replay

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/noise"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/mockllm"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/tokenizer"
)

// floorRounds is how many interleaved rounds the floor benchmarks take their medians over:
// go test -run '^$' -bench 'BenchmarkFloorVsClients|BenchmarkClientsScheduleLag' -benchtime 1x ./replay/ -floor.rounds 3
// (make bench-floor ROUNDS=3).
var floorRounds = flag.Int("floor.rounds", 1, "interleaved rounds whose medians the floor benchmarks print")

// floorBody is the request floor.c sends (testdata/floor.c): 128 words in, osl tokens out.
func floorBody(osl int) []byte {
	return []byte(fmt.Sprintf(`{"model":"Qwen/Qwen3-0.6B","messages":[{"role":"user","content":"%s"}],"stream":true,"max_tokens":%d,"ignore_eos":true}`,
		strings.Repeat("word ", 128), osl))
}

// floorCPUs returns the CPU the client runs on and the one the server runs on (-1, -1 when
// there are not two).
func floorCPUs() (all []int, client, server int) {
	all, err := allowedCPUs()
	if err != nil || len(all) < 2 {
		return all, -1, -1
	}
	return all, all[0], all[1]
}

// BenchmarkFloorVsClients runs the floor program (testdata/floor.c, built with cc), the
// event-loop client (the default) and the net client against the same mockllm (TTFT 20 ms,
// ITL 5 ms and 10 ms, 128 words in, 100 tokens out), closed loop at concurrency 64, 256 and
// 1,000, the client on one CPU and mockllm on the other, in -floor.rounds interleaved rounds.
// It prints, per setting, each one's CPU per request and per read (start-up excluded: the
// floor counts from its last connect, a worker from its first CPU sample after its last
// connect: steadyCPU) as ratios to the floor's, medians over the rounds. Where perf can count tracepoints (perf stat -e
// raw_syscalls:sys_enter), it also prints what a load on the machine does not change: system
// calls and context switches per request, the worker's start-up (a one-request run)
// subtracted. -benchtime=1x runs each once.
func BenchmarkFloorVsClients(b *testing.B) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		b.Skip("no cc to build testdata/floor.c")
	}
	bin := filepath.Join(b.TempDir(), "floor")
	if out, err := exec.Command(cc, "-O2", "-o", bin, "testdata/floor.c").CombinedOutput(); err != nil {
		b.Fatalf("cc floor.c: %v\n%s", err, out)
	}
	// pin keeps this process (mockllm) on the server's CPU while the floor runs; the
	// coordinator moves itself off the worker's CPU on its own.
	all, clientCPU, serverCPU := floorCPUs()
	pin := func(cpus []int) {
		if clientCPU >= 0 {
			if err := setAffinity(cpus); err != nil {
				b.Fatal(err)
			}
		}
	}
	defer pin(all)
	perf := newPerfCounter(b)
	const osl = 100
	for _, itl := range []time.Duration{5 * time.Millisecond, 10 * time.Millisecond} {
		url := startMock(b, 20*time.Millisecond, itl)
		port := url[strings.LastIndexByte(url, ':')+1:]
		base := map[string]*perfCounts{} // each client's start-up, once per server
		for _, conc := range []int{64, 256, 1000} {
			b.Run(fmt.Sprintf("itl=%v/concurrency=%d", itl, conc), func(b *testing.B) {
				n := max(4*conc, 512)
				for i := 0; i < b.N; i++ {
					rows := map[string][]floorResult{}
					for round := 0; round < *floorRounds; round++ {
						pin([]int{serverCPU})
						rows["floor"] = append(rows["floor"], runFloor(b, bin, port, conc, n, osl, clientCPU, perf))
						pin(all)
						for _, client := range []string{ClientLoop, ClientNet} {
							if _, ok := base[client]; !ok && perf != nil {
								c := runClientCPU(b, url, client, 1, 1, osl, clientCPU, perf, nil).counts
								base[client] = &c
							}
							rows[client] = append(rows[client], runClientCPU(b, url, client, conc, n, osl, clientCPU, perf, base[client]))
						}
					}
					fl := medianFloor(rows["floor"])
					fmt.Printf("\nmockllm ITL %v, concurrency %d, %d requests of %d tokens, client on CPU %d, mockllm on CPU %d; medians of %d round(s); load %s\n",
						itl, conc, n, osl, clientCPU, serverCPU, *floorRounds, loadAvg())
					fmt.Printf("  %-6s %10s %7s %9s %7s %9s", "", "CPU ms/req", "×floor", "µs/read", "×floor", "reads/req")
					if perf != nil {
						fmt.Printf(" %9s %8s %8s %8s %8s %8s %8s", "syscalls", "ctxsw", "epoll", "read", "futex+ns", "timerset", "epollctl")
					}
					fmt.Println()
					for _, name := range []string{"floor", ClientLoop, ClientNet} {
						r := medianFloor(rows[name])
						fmt.Printf("  %-6s %10.3f %7.2f %9.2f %7.2f %9.1f", name, r.msPerReq, r.msPerReq/fl.msPerReq, r.usPerRead, r.usPerRead/fl.usPerRead, r.readsPerReq)
						if perf != nil {
							c := r.counts
							fmt.Printf(" %9.1f %8.1f %8.1f %8.1f %8.2f %8.2f %8.2f", c.syscalls, c.ctxsw, c.epoll, c.read, c.futex+c.nanosleep, c.timerSet, c.epollCtl)
						}
						fmt.Println()
						if name != "floor" {
							b.ReportMetric(r.msPerReq/fl.msPerReq, name+"-req/floor")
						}
					}
					if perf != nil {
						fmt.Println("  (per request: system calls, context switches, epoll_wait+epoll_pwait, read, futex+nanosleep, timerfd_settime, epoll_ctl; the workers' start-up subtracted)")
					}
				}
			})
		}
	}
}

// floorResult is one run's CPU figures and, with perf, counts per request.
type floorResult struct {
	usPerRead, msPerReq, readsPerReq float64
	counts                           perfCounts
}

// medianFloor is the per-figure median of rs.
func medianFloor(rs []floorResult) floorResult {
	med := func(f func(floorResult) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		sort.Float64s(v)
		return v[len(v)/2]
	}
	return floorResult{usPerRead: med(func(r floorResult) float64 { return r.usPerRead }),
		msPerReq:    med(func(r floorResult) float64 { return r.msPerReq }),
		readsPerReq: med(func(r floorResult) float64 { return r.readsPerReq }),
		counts: perfCounts{
			syscalls:  med(func(r floorResult) float64 { return r.counts.syscalls }),
			ctxsw:     med(func(r floorResult) float64 { return r.counts.ctxsw }),
			epoll:     med(func(r floorResult) float64 { return r.counts.epoll }),
			read:      med(func(r floorResult) float64 { return r.counts.read }),
			futex:     med(func(r floorResult) float64 { return r.counts.futex }),
			nanosleep: med(func(r floorResult) float64 { return r.counts.nanosleep }),
			timerSet:  med(func(r floorResult) float64 { return r.counts.timerSet }),
			epollCtl:  med(func(r floorResult) float64 { return r.counts.epollCtl }),
		}}
}

// perfCounts are perf stat counts of one process tree (per request once divided).
type perfCounts struct {
	syscalls, ctxsw, epoll, read, futex, nanosleep, timerSet, epollCtl float64
}

func (c perfCounts) minus(d perfCounts) perfCounts {
	return perfCounts{c.syscalls - d.syscalls, c.ctxsw - d.ctxsw, c.epoll - d.epoll, c.read - d.read, c.futex - d.futex,
		c.nanosleep - d.nanosleep, c.timerSet - d.timerSet, c.epollCtl - d.epollCtl}
}

func (c perfCounts) per(n int) perfCounts {
	f := float64(n)
	return perfCounts{c.syscalls / f, c.ctxsw / f, c.epoll / f, c.read / f, c.futex / f, c.nanosleep / f, c.timerSet / f, c.epollCtl / f}
}

// perfCounter runs commands under perf stat.
type perfCounter struct {
	dir string
	n   int
}

// perfEvents are what perfCounter counts.
var perfEvents = []string{"raw_syscalls:sys_enter", "context-switches", "syscalls:sys_enter_epoll_wait",
	"syscalls:sys_enter_epoll_pwait", "syscalls:sys_enter_read", "syscalls:sys_enter_futex", "syscalls:sys_enter_nanosleep",
	"syscalls:sys_enter_timerfd_settime", "syscalls:sys_enter_epoll_ctl"}

// newPerfCounter returns a counter, or nil when perf cannot count these events here.
func newPerfCounter(tb testing.TB) *perfCounter {
	if err := exec.Command("perf", "stat", "-x", ",", "-o", os.DevNull, "-e", strings.Join(perfEvents, ","), "true").Run(); err != nil {
		fmt.Printf("perf stat cannot count system calls here (%v): CPU figures only\n", err)
		return nil
	}
	return &perfCounter{dir: tb.TempDir()}
}

// wrap returns argv run under perf stat and the file its counts go to.
func (p *perfCounter) wrap(argv []string) ([]string, string) {
	p.n++
	out := filepath.Join(p.dir, fmt.Sprintf("perf%d.csv", p.n))
	return append([]string{"perf", "stat", "-x", ",", "-o", out, "-e", strings.Join(perfEvents, ","), "--"}, argv...), out
}

// read parses a perf stat -x , file.
func (p *perfCounter) read(tb testing.TB, path string) perfCounts {
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var c perfCounts
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(line, ",")
		if len(f) < 3 || strings.HasPrefix(line, "#") {
			continue
		}
		v, _ := strconv.ParseFloat(f[0], 64)
		switch f[2] {
		case "raw_syscalls:sys_enter":
			c.syscalls = v
		case "context-switches":
			c.ctxsw = v
		case "syscalls:sys_enter_epoll_wait", "syscalls:sys_enter_epoll_pwait":
			c.epoll += v
		case "syscalls:sys_enter_read":
			c.read = v
		case "syscalls:sys_enter_futex":
			c.futex = v
		case "syscalls:sys_enter_nanosleep":
			c.nanosleep = v
		case "syscalls:sys_enter_timerfd_settime":
			c.timerSet = v
		case "syscalls:sys_enter_epoll_ctl":
			c.epollCtl = v
		}
	}
	return c
}

// runFloor runs the floor program on cpu and parses its line (with perf, counted).
func runFloor(b *testing.B, bin, port string, conc, n, osl, cpu int, perf *perfCounter) floorResult {
	argv := []string{bin, port, strconv.Itoa(conc), strconv.Itoa(n), strconv.Itoa(osl)}
	if cpu >= 0 {
		if ts, err := exec.LookPath("taskset"); err == nil {
			argv = append([]string{ts, "-c", strconv.Itoa(cpu)}, argv...)
		}
	}
	var counts string
	if perf != nil {
		argv, counts = perf.wrap(argv)
	}
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
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
		}
	}
	if r.usPerRead <= 0 || r.msPerReq <= 0 {
		b.Fatalf("floor output %q", out)
	}
	if perf != nil {
		r.counts = perf.read(b, counts).per(n)
	}
	return r
}

// runClientCPU replays the floor's workload with one worker on cpu and returns its CPU per
// read and per request and its reads per request; with perf, its counts per request less
// base (nil: the start-up run, the raw counts of the whole worker process, not divided, and
// no CPU figures).
func runClientCPU(b *testing.B, url, client string, conc, n, osl, cpu int, perf *perfCounter, base *perfCounts) floorResult {
	ps := &planSpec{}
	body := floorBody(osl)
	for k := 0; k < n; k++ {
		ps.add(mmapds.Record{SendOffsetNs: mmapds.NoSendOffset, DelayNs: -1, Session: uint32(k), OSL: uint32(osl), Phase: mmapds.PhaseProfile}, body)
	}
	ps.meta.Concurrency = conc
	ps.meta.Streaming = true
	o := pinnedOptions(b, ps, url, client, cpu, false)
	var counts string
	if perf != nil {
		o.WorkerCommand, counts = perf.wrap(o.WorkerCommand)
	}
	rp, err := New(o)
	if err != nil {
		b.Fatal(err)
	}
	m, err := rp.Run()
	if err != nil {
		b.Fatal(err)
	}
	if m.Counts.Completed != n {
		b.Fatalf("%s: counts %+v", client, m.Counts)
	}
	var r floorResult
	if perf != nil {
		r.counts = perf.read(b, counts)
		if base == nil {
			// The start-up run: its counts alone, it may end before its first CPU sample.
			return r
		}
		r.counts = r.counts.minus(*base).per(n)
	}
	cpuNs, reqs, reads := steadyCPU(b, filepath.Join(o.OutputDir, m.Workers[0].Log))
	r.usPerRead, r.msPerReq, r.readsPerReq = cpuNs/float64(reads)/1e3, cpuNs/float64(reqs)/1e6, float64(reads)/float64(reqs)
	return r
}

// steadyCPU returns the CPU a worker's log says it used once every connection was made, as
// the floor counts its own from its last connect (start-up excluded): from its first CPU
// sample at or after the last connect to its last sample, with the requests that ended and
// the reads that returned in that window. (Samples come once a second: the runs last
// several.)
func steadyCPU(b *testing.B, path string) (cpuNs float64, reqs, reads int) {
	recs := readLog(b, path)
	lastConnect := int64(0)
	for _, q := range recs {
		lastConnect = max(lastConnect, q.ConnectEndNs)
	}
	r, err := rawlog.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	var first, last *rawlog.CPUSample
	for {
		k, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		if k != rawlog.KindCPU {
			continue
		}
		s := r.CPU()
		if first == nil && s.TimeNs >= lastConnect {
			first = &s
		}
		last = &s
	}
	if first == nil || last.TimeNs <= first.TimeNs {
		b.Fatalf("%s: no CPU samples after the last connect at %d ns", path, lastConnect)
	}
	for _, q := range recs {
		if q.EndNs > first.TimeNs {
			reqs++
		}
		for _, t := range q.ReadNs {
			if t > first.TimeNs {
				reads++
			}
		}
	}
	return float64(last.UserNs + last.SysNs - first.UserNs - first.SysNs), reqs, reads
}

// loadAvg is the machine's load averages and, where the kernel keeps pressure stall
// figures, the share of the last 10 s some task waited for a CPU, for the figures' context.
func loadAvg() string {
	if runtime.GOOS != "linux" {
		return "?"
	}
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	load := strings.Join(strings.Fields(string(b))[:3], " ")
	if b, err := os.ReadFile("/proc/pressure/cpu"); err == nil {
		// "some avg10=84.73 avg60=76.01 avg300=84.20 total=..." on the first line.
		for _, f := range strings.Fields(string(b)) {
			if v, ok := strings.CutPrefix(f, "avg10="); ok {
				return load + ", CPU pressure " + v + "%"
			}
		}
	}
	return load
}

// pinnedOptions are the options that replay ps with client on one worker pinned to cpu (the
// coordinator, and with it this process's mockllm, keeps off that CPU).
func pinnedOptions(b *testing.B, ps *planSpec, url, client string, cpu int, session bool) Options {
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
	return o
}

// pinnedRun replays ps with pinnedOptions and returns the manifest, records and run dir.
func pinnedRun(b *testing.B, ps *planSpec, url, client string, cpu int, session bool) (*rawlog.Manifest, map[uint32]rawlog.Request, string) {
	ps.meta.Streaming = true
	return replayed(b, pinnedOptions(b, ps, url, client, cpu, session))
}

// BenchmarkClientsScheduleLag sends a Poisson open loop at 200, 500 and 2,000 req/s for 3 s
// to mockllm (TTFT 20 ms, ITL 5 ms, 8 tokens) with each client, the worker on one CPU and
// mockllm on the other, and prints the schedule lag (write start minus planned instant)
// p50/p99, the worker's CPU utilisation and the machine's noise on the worker's CPU during
// the same run (internal/noise: how late a thread's 200 µs sleeps there ended, p99 and max;
// what a loaded machine puts under any lag) beside it, medians over -floor.rounds interleaved
// rounds. -benchtime=1x runs each once.
func BenchmarkClientsScheduleLag(b *testing.B) {
	url := startMock(b, 20*time.Millisecond, 5*time.Millisecond)
	_, cpu, _ := floorCPUs()
	type lagRow struct{ p50, p99, max, cpuPct, noiseP99, noiseMax float64 }
	for _, rate := range []float64{200, 500, 2000} {
		b.Run(fmt.Sprintf("rate=%v", rate), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				rows := map[string][]lagRow{}
				for round := 0; round < *floorRounds; round++ {
					for _, client := range []string{ClientLoop, ClientNet} {
						rng := rand.New(rand.NewPCG(7, uint64(i*1000+round)))
						at := int64(0)
						n := int(rate * 3)
						ps := &planSpec{}
						for k := 0; k < n; k++ {
							at += int64(rng.ExpFloat64() / rate * 1e9)
							ps.add(mmapds.Record{SendOffsetNs: at, DelayNs: -1, Session: uint32(k), OSL: 8, Phase: mmapds.PhaseProfile}, chatBody(8))
						}
						sampler := noise.Start(cpu)
						m, reqs, dir := pinnedRun(b, ps, url, client, cpu, false)
						late := sampler.Stop()
						var lags []int64
						for _, q := range reqs {
							if q.Outcome != rawlog.OutcomeCompleted {
								b.Fatalf("request %d: %s", q.Index, brief(q))
							}
							lags = append(lags, q.WriteStartNs-q.IntendedNs)
						}
						cpuPct := float64(workerCPU(b, m, dir)) / float64(m.EndUnixNs-m.StartUnixNs) * 100
						rows[client] = append(rows[client], lagRow{float64(percentile(lags, 50)) / 1e3, float64(percentile(lags, 99)) / 1e3,
							float64(lags[len(lags)-1]) / 1e3, cpuPct, float64(late.Quantile(0.99)) / 1e3, float64(late.Max()) / 1e3})
					}
				}
				fmt.Printf("\nPoisson %v req/s for 3 s, mockllm TTFT 20 ms ITL 5 ms, worker on CPU %d; medians of %d round(s); load %s\n", rate, cpu, *floorRounds, loadAvg())
				fmt.Printf("  %-6s %12s %12s %12s %11s %14s %14s\n", "", "lag p50 µs", "lag p99 µs", "lag max µs", "worker CPU", "noise p99 µs", "noise max µs")
				for _, client := range []string{ClientLoop, ClientNet} {
					med := func(f func(lagRow) float64) float64 {
						var v []float64
						for _, r := range rows[client] {
							v = append(v, f(r))
						}
						sort.Float64s(v)
						return v[len(v)/2]
					}
					p50, p99 := med(func(r lagRow) float64 { return r.p50 }), med(func(r lagRow) float64 { return r.p99 })
					fmt.Printf("  %-6s %12.1f %12.1f %12.1f %10.1f%% %14.1f %14.1f\n", client, p50, p99, med(func(r lagRow) float64 { return r.max }),
						med(func(r lagRow) float64 { return r.cpuPct }), med(func(r lagRow) float64 { return r.noiseP99 }), med(func(r lagRow) float64 { return r.noiseMax }))
					b.ReportMetric(p99, client+"-lag-p99-µs")
				}
			}
		})
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
