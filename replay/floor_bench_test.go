package replay

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
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
	"github.com/llmbench/llmbench/servermetrics"
	"github.com/llmbench/llmbench/tokenizer"
)

// floorRounds is how many interleaved rounds the floor benchmarks take their medians over:
// go test -run '^$' -bench 'BenchmarkFloorVsClients|BenchmarkClientsScheduleLag' -benchtime 1x ./replay/ -floor.rounds 3
// (make bench-floor ROUNDS=3).
var floorRounds = flag.Int("floor.rounds", 1, "interleaved rounds whose medians the floor benchmarks print")

// floorBody is the request floor.c sends (testdata/floor.c): 128 words in, osl tokens out.
func floorBody(osl int) []byte {
	return []byte(fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"%s"}],"stream":true,"max_tokens":%d,"ignore_eos":true}`,
		*floorModel, strings.Repeat("word ", 128), osl))
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
// event-loop client (the default) and the net client against the same server, closed loop at
// concurrency 64, 256 and 1,000 (128 words in, 100 tokens out), the client on one CPU and the
// server on the other, in -floor.rounds interleaved rounds. The server is mockllm in vLLM's
// chunk layout serving vLLM's /metrics page (TTFT 100 ms, ITL 10 ms, in a process of its own),
// or -floor.url's; our clients run with replay's default flags (the server scrape on). It
// prints the scrape's own CPU per scrape (scrapeCost) and, per setting, each client's CPU per
// request and per read as ratios to the floor's, medians over the rounds: the worker's (from
// its first CPU sample after its last connect, as the floor counts from its last connect:
// steadyCPU), the coordinator's (this process's CPU over the run: scrapes, progress; less a
// one-request run's, its fixed start and end, as the floor's start-up is not counted) and
// their sum, the figure the floor is held to. Then the one-token row: requests
// completed per CPU-second of the client with one-token, zero-delay responses. Where perf can
// count tracepoints (perf stat -e raw_syscalls:sys_enter), it also prints what a load on the
// machine does not change: system calls and context switches per request, the worker's
// start-up (a one-request run) subtracted. -benchtime=1x runs each once.
func BenchmarkFloorVsClients(b *testing.B) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		b.Skip("no cc to build testdata/floor.c")
	}
	bin := filepath.Join(b.TempDir(), "floor")
	if out, err := exec.Command(cc, "-O2", "-o", bin, "testdata/floor.c").CombinedOutput(); err != nil {
		b.Fatalf("cc floor.c: %v\n%s", err, out)
	}
	_, clientCPU, serverCPU := floorCPUs()
	perf := newPerfCounter(b)
	const osl = 100
	srv := startFloorServer(b, 100*time.Millisecond, 10*time.Millisecond, serverCPU)
	perScrape, page := scrapeCost(b, srv, bin, clientCPU)
	fmt.Printf("\nserver: %s; load %s\n", srv.name, loadAvg())
	fmt.Printf("  scrape of its /metrics (%d kB): %.0f µs CPU per scrape = %.3f%% of one core at the default interval (%v), on the coordinator's CPUs (off the worker's); the page changing between scrapes (the floor streaming meanwhile)\n",
		page>>10, float64(perScrape)/1e3, float64(perScrape)/float64(servermetrics.DefaultInterval)*100, servermetrics.DefaultInterval)
	b.ReportMetric(float64(perScrape)/1e3, "scrape-cpu-µs")
	base := map[string]*floorResult{} // each client's start-up (a one-request run), once
	concs := []int{64, 256, 1000}
	if *floorQuick {
		concs = concs[:1]
	}
	for _, conc := range concs {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) {
			n := max(4*conc, 512)
			for i := 0; i < b.N; i++ {
				rows := map[string][]floorResult{}
				for round := 0; round < *floorRounds; round++ {
					rows["floor"] = append(rows["floor"], runFloor(b, bin, srv.hostPort, conc, n, osl, clientCPU, perf))
					for _, client := range []string{ClientLoop, ClientNet} {
						if _, ok := base[client]; !ok {
							r := runClientCPU(b, srv.url, client, 1, 1, osl, clientCPU, perf, nil)
							base[client] = &r
						}
						rows[client] = append(rows[client], runClientCPU(b, srv.url, client, conc, n, osl, clientCPU, perf, base[client]))
					}
				}
				fmt.Printf("\nconcurrency %d, %d requests of %d tokens, client on CPU %d, server on CPU %d; medians of %d round(s); load %s\n",
					conc, n, osl, clientCPU, serverCPU, *floorRounds, loadAvg())
				printFloorRows(b, rows, perf != nil)
			}
		})
	}
	b.Run("one-token", func(b *testing.B) {
		one := srv
		if *floorURL == "" {
			one = startFloorServer(b, 0, 0, serverCPU)
		}
		n := *floorOneToken
		if *floorQuick {
			n = min(n, 10000)
		}
		for i := 0; i < b.N; i++ {
			rows := map[string][]floorResult{}
			for round := 0; round < *floorRounds; round++ {
				rows["floor"] = append(rows["floor"], runFloor(b, bin, one.hostPort, 64, n, 1, clientCPU, perf))
				for _, client := range []string{ClientLoop, ClientNet} {
					if _, ok := base[client]; !ok {
						r := runClientCPU(b, one.url, client, 1, 1, 1, clientCPU, perf, nil)
						base[client] = &r
					}
					rows[client] = append(rows[client], runClientCPU(b, one.url, client, 64, n, 1, clientCPU, perf, base[client]))
				}
			}
			fl := medianFloor(rows["floor"])
			fmt.Printf("\none-token responses, zero delay (%s), concurrency 64, %d requests; medians of %d round(s); load %s\n",
				one.name, n, *floorRounds, loadAvg())
			fmt.Printf("  %-6s %16s %9s %10s %10s %9s %8s   (AIPerf's Rust runtime publishes 276.8k req/s on 144 cores: ~1.9k per core)\n", "", "requests/CPU-s", "×floor", "worker µs", "coord µs", "syscalls", "ctxsw")
			for _, name := range []string{"floor", ClientLoop, ClientNet} {
				r := medianFloor(rows[name])
				rate := 1000 / r.totalMsPerReq()
				fmt.Printf("  %-6s %16.0f %9.2f %10.2f %10.2f %9.1f %8.2f\n", name, rate, fl.totalMsPerReq()/r.totalMsPerReq(), r.msPerReq*1e3, r.coordMsPerReq*1e3, r.counts.syscalls, r.counts.ctxsw)
				if name != "floor" {
					b.ReportMetric(rate, name+"-req/cpu-s")
					b.ReportMetric(fl.totalMsPerReq()/r.totalMsPerReq(), name+"-rate/floor")
				}
			}
		}
	})
}

// floorQuick keeps one setting of each figure (concurrency 64, 10,000 one-token requests,
// 2,000 req/s Poisson): make bench-floor QUICK=1, a minute or two on 2 CPUs.
var floorQuick = flag.Bool("floor.quick", false, "one setting of each figure: concurrency 64, 10,000 one-token requests, 2,000 req/s Poisson")

// floorOneToken is how many one-token requests each client sends in the one-token row.
var floorOneToken = flag.Int("floor.onetoken", 30000, "requests of the one-token row (enough for a few seconds of work)")

// printFloorRows prints the rows of one setting: CPU per request (the worker's, the
// coordinator's, their sum) and per read, as ratios to the floor's.
func printFloorRows(b *testing.B, rows map[string][]floorResult, counts bool) {
	fl := medianFloor(rows["floor"])
	fmt.Printf("  %-6s %10s %10s %10s %7s %9s %7s %9s", "", "worker ms", "coord ms", "CPU ms/req", "×floor", "µs/read", "×floor", "reads/req")
	if counts {
		fmt.Printf(" %9s %8s %8s %8s %8s %8s %8s", "syscalls", "ctxsw", "epoll", "read", "futex+ns", "timerset", "epollctl")
	}
	fmt.Println()
	for _, name := range []string{"floor", ClientLoop, ClientNet} {
		r := medianFloor(rows[name])
		fmt.Printf("  %-6s %10.3f %10.3f %10.3f %7.2f %9.2f %7.2f %9.1f", name, r.msPerReq, r.coordMsPerReq, r.totalMsPerReq(), r.totalMsPerReq()/fl.totalMsPerReq(),
			r.usPerRead, r.usPerRead/fl.usPerRead, r.readsPerReq)
		if counts {
			c := r.counts
			fmt.Printf(" %9.1f %8.1f %8.1f %8.1f %8.2f %8.2f %8.2f", c.syscalls, c.ctxsw, c.epoll, c.read, c.futex+c.nanosleep, c.timerSet, c.epollCtl)
		}
		fmt.Println()
		if name != "floor" {
			b.ReportMetric(r.totalMsPerReq()/fl.totalMsPerReq(), name+"-req/floor")
		}
	}
	fmt.Println("  (worker: its CPU after its last connect per request; coord: the coordinator's over the run per request, the scrape's included, a one-request run's (its fixed costs) subtracted; CPU ms/req their sum)")
	if counts {
		fmt.Println("  (per request: system calls, context switches, epoll_wait+epoll_pwait, read, futex+nanosleep, timerfd_settime, epoll_ctl; the workers' start-up subtracted)")
	}
}

// floorResult is one run's CPU figures and, with perf, counts per request.
type floorResult struct {
	usPerRead, msPerReq, readsPerReq float64
	coordMsPerReq                    float64       // the coordinator's CPU per request (0 for the floor)
	coordNs                          time.Duration // the start-up run's: the coordinator's CPU over it
	counts                           perfCounts
}

// totalMsPerReq is the client's CPU per request: the worker's and the coordinator's.
func (r floorResult) totalMsPerReq() float64 { return r.msPerReq + r.coordMsPerReq }

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
		msPerReq:      med(func(r floorResult) float64 { return r.msPerReq }),
		readsPerReq:   med(func(r floorResult) float64 { return r.readsPerReq }),
		coordMsPerReq: med(func(r floorResult) float64 { return r.coordMsPerReq }),
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
func runFloor(b *testing.B, bin, hostPort string, conc, n, osl, cpu int, perf *perfCounter) floorResult {
	argv := []string{bin, hostPort, strconv.Itoa(conc), strconv.Itoa(n), strconv.Itoa(osl), *floorModel}
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
// read and per request and its reads per request, and the coordinator's CPU per request
// less base's; with perf, its counts per request less base's. base nil is the start-up run
// (one request): its raw counts and the coordinator's CPU over the run (coordNs), not
// divided, and no CPU figures. So a run's fixed costs (opening the plan, starting the
// worker, the first and last whole scrape, run.json) stay out of the per-request figures,
// as the floor's start-up does; what grows with the requests (the plan's hash, the periodic
// scrapes, progress) stays in.
func runClientCPU(b *testing.B, url, client string, conc, n, osl, cpu int, perf *perfCounter, base *floorResult) floorResult {
	ps := &planSpec{}
	body := floorBody(osl)
	for k := 0; k < n; k++ {
		ps.add(mmapds.Record{SendOffsetNs: mmapds.NoSendOffset, DelayNs: -1, Session: uint32(k), OSL: uint32(osl), Phase: mmapds.PhaseProfile}, body)
	}
	ps.meta.Concurrency = conc
	ps.meta.Streaming = true
	o := pinnedOptions(b, ps, url, client, cpu, false)
	defaultFlags(&o)
	var counts string
	if perf != nil {
		o.WorkerCommand, counts = perf.wrap(o.WorkerCommand)
	}
	rp, err := New(o)
	if err != nil {
		b.Fatal(err)
	}
	cpu0 := processCPU()
	m, err := rp.Run()
	if err != nil {
		b.Fatal(err)
	}
	coord := processCPU() - cpu0
	if m.Counts.Completed != n {
		b.Fatalf("%s: counts %+v", client, m.Counts)
	}
	var r floorResult
	if perf != nil {
		r.counts = perf.read(b, counts)
	}
	if base == nil {
		// The start-up run: its counts and CPU alone, it may end before its first CPU sample.
		r.coordNs = coord
		return r
	}
	if perf != nil {
		r.counts = r.counts.minus(base.counts).per(n)
	}
	cpuNs, reqs, reads := steadyCPU(b, filepath.Join(o.OutputDir, m.Workers[0].Log))
	r.usPerRead, r.msPerReq, r.readsPerReq = cpuNs/float64(reads)/1e3, cpuNs/float64(reqs)/1e6, float64(reads)/float64(reqs)
	r.coordMsPerReq = float64(max(0, coord-base.coordNs)) / float64(n) / 1e6
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
	var before, first, last *rawlog.CPUSample
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
		if s.TimeNs < lastConnect {
			before = &s
		}
		if first == nil && s.TimeNs >= lastConnect {
			first = &s
		}
		last = &s
	}
	if first == nil || last.TimeNs <= first.TimeNs {
		// A short run on a loaded machine (a late reconnect, one-token responses) can end
		// within a second of its last connect: the window then starts at the sample before
		// it, a few connects counted in, rather than no figure at all.
		if before == nil || last == nil || last.TimeNs <= before.TimeNs {
			b.Fatalf("%s: fewer than two CPU samples in the run (last connect at %d ns)", path, lastConnect)
		}
		fmt.Fprintf(os.Stderr, "%s: fewer than two CPU samples after the last connect at %.3f s; the window starts at %.3f s\n",
			path, float64(lastConnect)/1e9, float64(before.TimeNs)/1e9)
		first = before
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

// BenchmarkClientsScheduleLag sends an open loop at 200, 2,000 and 5,000 req/s for 3 s, Poisson
// and constant arrivals, to mockllm in vLLM's layout (TTFT 20 ms, ITL 5 ms, 8 tokens; or
// -floor.url's server) with each client on one worker CPU and replay's default flags (the
// server scrape on), and prints per rate and arrival: the send error (write start minus the
// plan's instant) p50/p99/max, the coefficient of variation of the realised send gaps beside
// the plan's (Poisson ~1, constant ~0: the realised should be the plan's within 5 %), the
// worker's CPU utilisation and the machine's noise on the worker's CPU during the same run
// (internal/noise: how late a thread's 200 µs sleeps there ended, p99 and max; what a loaded
// machine puts under any lag), medians over -floor.rounds interleaved rounds. -benchtime=1x
// runs each once.
func BenchmarkClientsScheduleLag(b *testing.B) {
	_, cpu, serverCPU := floorCPUs()
	srv := startFloorServer(b, 20*time.Millisecond, 5*time.Millisecond, serverCPU)
	type lagRow struct{ p50, p99, max, cvPlan, cvSent, cpuPct, noiseP99, noiseMax float64 }
	rates, arrivals := []float64{200, 2000, 5000}, []string{"poisson", "constant"}
	if *floorQuick {
		rates, arrivals = []float64{2000}, arrivals[:1]
	}
	for _, rate := range rates {
		for _, arrival := range arrivals {
			b.Run(fmt.Sprintf("rate=%v/%s", rate, arrival), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					rows := map[string][]lagRow{}
					for round := 0; round < *floorRounds; round++ {
						for _, client := range []string{ClientLoop, ClientNet} {
							rng := rand.New(rand.NewPCG(7, uint64(i*1000+round)))
							at := int64(0)
							n := int(rate * 3)
							ps := &planSpec{}
							for k := 0; k < n; k++ {
								if arrival == "poisson" {
									at += int64(rng.ExpFloat64() / rate * 1e9)
								} else {
									at = int64(float64(k) / rate * 1e9)
								}
								ps.add(mmapds.Record{SendOffsetNs: at, DelayNs: -1, Session: uint32(k), OSL: 8, Phase: mmapds.PhaseProfile}, chatBody(8))
							}
							ps.meta.Streaming = true
							o := pinnedOptions(b, ps, srv.url, client, cpu, false)
							defaultFlags(&o)
							sampler := noise.Start(cpu)
							m, reqs, dir := replayed(b, o)
							late := sampler.Stop()
							var lags, planned, sent []int64
							for _, q := range reqs {
								if q.Outcome != rawlog.OutcomeCompleted {
									b.Fatalf("request %d: %s", q.Index, brief(q))
								}
								lags = append(lags, q.WriteStartNs-q.IntendedNs)
								planned = append(planned, q.IntendedNs)
								sent = append(sent, q.WriteStartNs)
							}
							cpuPct := float64(workerCPU(b, m, dir)) / float64(m.EndUnixNs-m.StartUnixNs) * 100
							rows[client] = append(rows[client], lagRow{float64(percentile(lags, 50)) / 1e3, float64(percentile(lags, 99)) / 1e3,
								float64(lags[len(lags)-1]) / 1e3, gapCV(planned), gapCV(sent), cpuPct, float64(late.Quantile(0.99)) / 1e3, float64(late.Max()) / 1e3})
						}
					}
					fmt.Printf("\n%s %v req/s for 3 s, %s with 8 tokens, worker on CPU %d, default flags; medians of %d round(s); load %s\n",
						arrival, rate, srv.name, cpu, *floorRounds, loadAvg())
					fmt.Printf("  %-6s %10s %10s %10s %9s %9s %11s %13s %13s\n", "", "err p50 µs", "err p99 µs", "err max µs", "plan CV", "sent CV", "worker CPU", "noise p99 µs", "noise max µs")
					for _, client := range []string{ClientLoop, ClientNet} {
						med := func(f func(lagRow) float64) float64 {
							var v []float64
							for _, r := range rows[client] {
								v = append(v, f(r))
							}
							sort.Float64s(v)
							return v[len(v)/2]
						}
						p99 := med(func(r lagRow) float64 { return r.p99 })
						cvPlan, cvSent := med(func(r lagRow) float64 { return r.cvPlan }), med(func(r lagRow) float64 { return r.cvSent })
						fmt.Printf("  %-6s %10.1f %10.1f %10.1f %9.3f %9.3f %10.1f%% %13.1f %13.1f\n", client, med(func(r lagRow) float64 { return r.p50 }), p99,
							med(func(r lagRow) float64 { return r.max }), cvPlan, cvSent, med(func(r lagRow) float64 { return r.cpuPct }),
							med(func(r lagRow) float64 { return r.noiseP99 }), med(func(r lagRow) float64 { return r.noiseMax }))
						b.ReportMetric(p99, client+"-lag-p99-µs")
						b.ReportMetric(cvSent, client+"-sent-cv")
					}
					if arrival == "poisson" {
						fmt.Println("  (err: write start minus the plan's instant; CV: standard deviation over mean of the gaps between successive sends, planned and realised; Poisson ~1, within 5 % of the plan's)")
					} else {
						fmt.Println("  (constant arrivals: the plan's CV is 0; the realised one is the send error's spread over the gap)")
					}
				}
			})
		}
	}
}

// gapCV is the coefficient of variation of the gaps between successive instants of ts
// (sorted in place).
func gapCV(ts []int64) float64 {
	slices.Sort(ts)
	if len(ts) < 3 {
		return 0
	}
	var sum, sq float64
	for i := 1; i < len(ts); i++ {
		g := float64(ts[i] - ts[i-1])
		sum += g
		sq += g * g
	}
	n := float64(len(ts) - 1)
	mean := sum / n
	return math.Sqrt(max(sq/n-mean*mean, 0)) / mean
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
