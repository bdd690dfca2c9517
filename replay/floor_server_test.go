package replay

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/llmbench/llmbench/mockllm"
	"github.com/llmbench/llmbench/servermetrics"
	"github.com/llmbench/llmbench/tokenizer"
)

// The server the floor benchmarks measure against: by default mockllm in vLLM's layout
// (--vllm-chunks, --vllm-metrics) in a process of its own on the server's CPU, so that this
// process holds only replay's coordinator and its CPU is the coordinator's; with
// -floor.url (make bench-floor URL=...) any server a user points it at.
var (
	floorURL   = flag.String("floor.url", "", "measure against this server (http://host:port, an IPv4 host) instead of mockllm in vLLM's layout")
	floorModel = flag.String("floor.model", "Qwen/Qwen3-0.6B", "the model the floor benchmarks' requests name (a server with --served-model-name wants its own)")
)

// floorMockArg, as the test binary's first argument, makes it mockllm (floorMockMain).
const floorMockArg = "-floor-mockllm"

// floorMockMain serves mockllm in vLLM's layout on 127.0.0.1:0 with TTFT and ITL from
// args, prints its URL on stdout and serves until stdin closes.
func floorMockMain(args []string) int {
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "floor mockllm: want TTFT ITL")
		return 2
	}
	ttft, err1 := time.ParseDuration(args[0])
	itl, err2 := time.ParseDuration(args[1])
	if err1 != nil || err2 != nil {
		fmt.Fprintln(os.Stderr, "floor mockllm: bad TTFT or ITL")
		return 2
	}
	tok, err := tokenizer.Builtin()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	o := mockllm.DefaultOptions()
	o.Tokenizer, o.TTFT, o.ITL, o.VLLMChunks, o.VLLMMetrics = tok, ttft, itl, true, true
	u, stop, err := mockllm.Start("127.0.0.1:0", o)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stop()
	fmt.Println(u)
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// floorServer is the server of one benchmark setting.
type floorServer struct {
	url, hostPort string // hostPort as floor.c takes it
	name          string // for the figures' heading
}

// startFloorServer returns -floor.url's server, or starts mockllm in vLLM's layout with
// ttft and itl on cpu (-1: anywhere), stopped at the end of the benchmark.
func startFloorServer(b *testing.B, ttft, itl time.Duration, cpu int) floorServer {
	if *floorURL != "" {
		u, err := url.Parse(*floorURL)
		if err != nil || u.Scheme != "http" || u.Port() == "" {
			b.Fatalf("-floor.url %q: want http://HOST:PORT (floor.c speaks plain HTTP to an IPv4 address)", *floorURL)
		}
		return floorServer{url: strings.TrimSuffix(*floorURL, "/"), hostPort: u.Host, name: "the server at " + u.Host}
	}
	argv := []string{os.Args[0], floorMockArg, ttft.String(), itl.String()}
	if cpu >= 0 {
		if ts, err := exec.LookPath("taskset"); err == nil {
			argv = append([]string{ts, "-c", fmt.Sprint(cpu)}, argv...)
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	// As many Ps as the machine has CPUs, as the mock had in this process: on the one CPU
	// taskset leaves it the Go runtime would give it one, and a mock that falls behind holds
	// the client's connections (and sends) longer than the server it stands for.
	cmd.Env = append(os.Environ(), fmt.Sprintf("GOMAXPROCS=%d", runtime.NumCPU()))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { in.Close(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatalf("floor mockllm: %v", err)
	}
	u := strings.TrimSpace(line)
	return floorServer{url: u, hostPort: strings.TrimPrefix(u, "http://"),
		name: fmt.Sprintf("mockllm --vllm-chunks --vllm-metrics (TTFT %v, ITL %v)", ttft, itl)}
}

// processCPU is this process's user and system CPU time: with the server in another
// process, the coordinator's.
func processCPU() time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// scrapeCost scrapes srv's /metrics as a run does (servermetrics.Run: the first and last
// scrape whole, the periodic ones their known families) every 20 ms for a second, and
// returns this process's CPU per scrape and the page's size: the scrape's own cost. Meanwhile
// the floor (floorBin, a process of its own, on loadCPU) streams requests at concurrency 32, so
// the page's counters and histograms change between scrapes as they do in a run: a page that
// does not change costs less (its unchanged families are not parsed again) and would flatter.
func scrapeCost(b *testing.B, srv floorServer, floorBin string, loadCPU int) (perScrape time.Duration, pageBytes int) {
	argv := []string{floorBin, srv.hostPort, "32", "100000", "4", *floorModel}
	if ts, err := exec.LookPath("taskset"); err == nil && loadCPU >= 0 {
		argv = append([]string{ts, "-c", strconv.Itoa(loadCPU)}, argv...)
	}
	load := exec.Command(argv[0], argv[1:]...)
	if err := load.Start(); err != nil {
		b.Fatalf("floor: %v", err)
	}
	defer func() { load.Process.Kill(); load.Wait() }()
	time.Sleep(200 * time.Millisecond) // its connections made, its first requests served
	var buf countingWriter
	out, err := servermetrics.NewWriter(&buf, servermetrics.Header{})
	if err != nil {
		b.Fatal(err)
	}
	stop := make(chan struct{})
	start := time.Now()
	cpu0 := processCPU()
	time.AfterFunc(time.Second, func() { close(stop) })
	if err := servermetrics.Run(servermetrics.Config{Targets: []servermetrics.Target{{URL: srv.url + "/metrics", Role: servermetrics.RoleServer}},
		Interval: 20 * time.Millisecond, Out: out}, start, stop); err != nil {
		b.Fatal(err)
	}
	cpu := processCPU() - cpu0
	if buf.scrapes == 0 {
		return 0, 0
	}
	return cpu / time.Duration(buf.scrapes), pageSize(srv.url + "/metrics")
}

// countingWriter counts the scrape lines of a server-metrics file.
type countingWriter struct{ scrapes int }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.scrapes += strings.Count(string(p), `{"kind":"scrape"`)
	return len(p), nil
}

func pageSize(u string) int {
	resp, err := httpGet(u)
	if err != nil {
		return 0
	}
	return len(resp)
}

func httpGet(u string) ([]byte, error) {
	resp, err := http.Get(u)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

// defaultFlags makes o what replay's command line gives without flags for what the floor
// benchmarks touch: the server scrape on at its default interval, GPU telemetry at its
// default (testOptions turns both off for tests about something else).
func defaultFlags(o *Options) {
	o.NoServerMetrics, o.ServerMetricsInterval, o.GPUSampleInterval = false, 0, 0
	o.SpareConns = DefaultSpareConns
}
