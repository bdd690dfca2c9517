package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The harness: the four commands built once, mockllm servers on free loopback ports, and
// readers for analyze's exports. Every test drives the binaries as a user would.

// bin holds the paths of the commands TestMain built.
var bin struct{ plan, replay, analyze, mockllm, profile, chat string }

// cmdTimeout bounds every command: a hang fails the test instead of the whole package.
const cmdTimeout = 60 * time.Second

func TestMain(m *testing.M) {
	flag.Parse()
	// These tests judge what the commands do, not whether this (often loaded) machine kept a
	// schedule: a schedule miss is accepted, and still said (docs/exit-codes.md).
	os.Setenv("LLMBENCH_ACCEPT_SCHEDULE_MISS", "1")
	if testing.Short() {
		fmt.Println("e2e: skipped in -short mode (the tests build and run the commands)")
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "llmbench-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	code := 1
	start := time.Now()
	if err := build(dir); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
	} else {
		if testing.Verbose() {
			fmt.Printf("e2e: built plan, replay, analyze and mockllm in %v\n", time.Since(start).Round(time.Millisecond))
		}
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// build compiles the four commands into dir, without -race even when the tests run with it:
// the instrumented binaries would be several times slower and the timing checks would
// measure the race detector, not the chain.
func build(dir string) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("go toolchain not found: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "build", "-o", dir+string(filepath.Separator),
		"./cmd/plan", "./cmd/replay", "./cmd/analyze", "./cmd/mockllm", "./cmd/profile", "./cmd/chat")
	cmd.Dir = ".." // the module root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, out)
	}
	bin.plan = filepath.Join(dir, "plan")
	bin.replay = filepath.Join(dir, "replay")
	bin.analyze = filepath.Join(dir, "analyze")
	bin.mockllm = filepath.Join(dir, "mockllm")
	bin.profile = filepath.Join(dir, "profile")
	bin.chat = filepath.Join(dir, "chat")
	return nil
}

// result is what a command did.
type result struct {
	code           int
	stdout, stderr string
}

// command runs a binary to completion. A timeout or a death by signal (a crash) fails the
// test; the exit status is the caller's to judge.
func command(t testing.TB, name string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		if ctx.Err() != nil {
			t.Fatalf("%s timed out after %v\nstderr: %s", filepath.Base(name), cmdTimeout, r.stderr)
		}
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			t.Fatalf("%s %q died of %v (a crash)\nstderr: %s", filepath.Base(name), args, ws.Signal(), r.stderr)
		}
		r.code = ee.ExitCode()
	default:
		t.Fatalf("%s: %v", filepath.Base(name), err)
	}
	if strings.Contains(r.stderr, "panic: ") || strings.Contains(r.stderr, "fatal error: ") {
		t.Fatalf("%s %q panicked:\n%s", filepath.Base(name), args, r.stderr)
	}
	return r
}

// compile runs plan with args and returns the plan file's path.
func compile(t testing.TB, dir string, args ...string) string {
	t.Helper()
	path := filepath.Join(dir, "test.plan")
	r := command(t, bin.plan, append(args, "-o", path)...)
	if r.code != 0 {
		t.Fatalf("plan %q: exit %d: %s", args, r.code, r.stderr)
	}
	return path
}

// replayPlan sends the plan to the URLs and returns the run directory. Workers are not
// pinned: on a loaded two-core CI a pinned worker cannot move off a busy core, and
// pinning is replay's own tests' business.
func replayPlan(t testing.TB, dir, planPath string, urls []string, extra ...string) string {
	t.Helper()
	return replayInto(t, filepath.Join(dir, "run"), planPath, urls, extra...)
}

// replayInto is replayPlan with the run directory given.
func replayInto(t testing.TB, runDir, planPath string, urls []string, extra ...string) string {
	t.Helper()
	args := []string{"--plan", planPath, "--output-dir", runDir, "--no-pin", "--no-gpu-telemetry"}
	for _, u := range urls {
		args = append(args, "--url", u)
	}
	r := command(t, bin.replay, append(args, extra...)...)
	if r.code != 0 {
		t.Fatalf("replay: exit %d: %s", r.code, r.stderr)
	}
	return runDir
}

// replayBadServer is replayInto for a server whose answers the test wants recorded as they
// come: no preflight (it would refuse the run before a request of the plan is sent), and
// exit 1 accepted when it says that every request sent failed (docs/exit-codes.md).
func replayBadServer(t testing.TB, runDir, planPath string, urls []string, extra ...string) string {
	t.Helper()
	args := []string{"--plan", planPath, "--output-dir", runDir, "--no-pin", "--no-gpu-telemetry", "--no-preflight"}
	for _, u := range urls {
		args = append(args, "--url", u)
	}
	r := command(t, bin.replay, append(args, extra...)...)
	if r.code != 0 && (r.code != 1 || !strings.Contains(r.stderr, "every request sent failed")) {
		t.Fatalf("replay: exit %d: %s", r.code, r.stderr)
	}
	return runDir
}

// analyzeRun analyses runDir into outDir and returns the exit status: 0, or 1 when the
// error-rate gate fails. Bad input (2) fails the test.
func analyzeRun(t testing.TB, runDir, outDir string, extra ...string) int {
	t.Helper()
	args := append([]string{"--quiet", "--output-dir", outDir}, extra...)
	r := command(t, bin.analyze, append(args, runDir)...)
	if r.code != 0 && r.code != 1 {
		t.Fatalf("analyze %q: exit %d: %s", extra, r.code, r.stderr)
	}
	return r.code
}

// mockServer is a mockllm process on a free loopback port, writing its schedule log
// (docs/mockllm.md) to schedPath.
type mockServer struct {
	URL       string
	schedPath string
	cmd       *exec.Cmd
	mu        sync.Mutex
	logs      bytes.Buffer
	done      chan struct{}
}

var servingRE = regexp.MustCompile(`serving on (http://127\.0\.0\.1:\d+)`)

// startMock starts mockllm with args (timing, seed, faults) on 127.0.0.1:0 and waits until
// it has printed its address and answers /health. The server is stopped when t ends.
func startMock(t testing.TB, args ...string) *mockServer {
	t.Helper()
	s := &mockServer{done: make(chan struct{}), schedPath: filepath.Join(t.TempDir(), "schedule.jsonl")}
	s.cmd = exec.Command(bin.mockllm, append([]string{"--addr", "127.0.0.1:0", "--schedule-log", s.schedPath}, args...)...)
	pipe, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.stop)
	addr := make(chan string, 1)
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.logs.WriteString(line + "\n")
			s.mu.Unlock()
			if m := servingRE.FindStringSubmatch(line); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, pipe)
	}()
	select {
	case s.URL = <-addr:
	case <-s.done:
		t.Fatalf("mockllm %q exited before serving:\n%s", args, s.log())
	case <-time.After(30 * time.Second):
		t.Fatalf("mockllm %q did not report its address:\n%s", args, s.log())
	}
	resp, err := http.Get(s.URL + "/health")
	if err != nil {
		t.Fatalf("mockllm health: %v", err)
	}
	resp.Body.Close()
	return s
}

func (s *mockServer) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

func (s *mockServer) stop() {
	if s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
	s.cmd.Wait()
}

// metric reads one counter family from mockllm's /metrics: label value → value (the key is
// "" for a family without labels).
func (s *mockServer) metric(t testing.TB, name string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(s.URL + "/metrics")
	if err != nil {
		t.Fatalf("mockllm /metrics: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		series, val, ok := strings.Cut(line, " ")
		if !ok || (series != name && !strings.HasPrefix(series, name+"{")) {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			t.Fatalf("mockllm /metrics line %q: %v", line, err)
		}
		label := ""
		if _, rest, ok := strings.Cut(series, `="`); ok {
			label, _, _ = strings.Cut(rest, `"`)
		}
		out[label] = v
	}
	if len(out) == 0 {
		t.Fatalf("mockllm /metrics has no %s:\n%s", name, body)
	}
	return out
}

// requestsTotal is mockllm_requests_total summed over endpoint types.
func (s *mockServer) requestsTotal(t testing.TB) int {
	t.Helper()
	total := 0.0
	for _, v := range s.metric(t, "mockllm_requests_total") {
		total += v
	}
	return int(total)
}

// summary is profile_export_aiperf.json, kept as raw members.
type summary map[string]json.RawMessage

// stat is one metric block: a distribution or a single value (avg only).
type stat struct {
	Unit  string   `json:"unit"`
	Avg   float64  `json:"avg"`
	P50   *float64 `json:"p50"`
	Min   *float64 `json:"min"`
	Max   *float64 `json:"max"`
	Count *float64 `json:"count"`
}

func readSummary(t testing.TB, dir string) summary {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "profile_export_aiperf.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("profile_export_aiperf.json: %v", err)
	}
	return s
}

// stat returns the metric block of tag; ok is false when the export omits the metric.
func (s summary) stat(t testing.TB, tag string) (stat, bool) {
	t.Helper()
	raw, ok := s[tag]
	if !ok {
		return stat{}, false
	}
	var st stat
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatalf("%s: %v", tag, err)
	}
	return st, true
}

// must returns the metric block of tag, failing the test when it is missing.
func (s summary) must(t testing.TB, tag string) stat {
	t.Helper()
	st, ok := s.stat(t, tag)
	if !ok {
		t.Fatalf("profile_export_aiperf.json has no %s", tag)
	}
	return st
}

// p50 returns the median of a distribution metric.
func (s summary) p50(t testing.TB, tag string) float64 {
	t.Helper()
	st := s.must(t, tag)
	if st.P50 == nil {
		t.Fatalf("%s has no p50", tag)
	}
	return *st.P50
}

// errorSummary is the export's error_summary.
func (s summary) errorSummary(t testing.TB) []errorKind {
	t.Helper()
	var out []errorKind
	if err := json.Unmarshal(s["error_summary"], &out); err != nil {
		t.Fatalf("error_summary: %v", err)
	}
	return out
}

type errorKind struct {
	Details struct {
		Code    *int   `json:"code"`
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error_details"`
	Count int `json:"count"`
}

// record is one line of profile_export.jsonl.
type record struct {
	Metadata struct {
		RequestIndex  int    `json:"request_index"`
		Phase         string `json:"benchmark_phase"`
		Outcome       string `json:"outcome"`
		HTTPStatus    int    `json:"http_status"`
		ContentEvents int    `json:"content_events"`
	} `json:"metadata"`
	Metrics map[string]struct {
		Value json.RawMessage `json:"value"`
		Unit  string          `json:"unit"`
	} `json:"metrics"`
	Error *struct {
		Code    *int   `json:"code"`
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// num returns a single-valued per-request metric.
func (r *record) num(tag string) (float64, bool) {
	m, ok := r.Metrics[tag]
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(m.Value), 64)
	if err != nil {
		return math.NaN(), false
	}
	return v, true
}

func readRecords(t testing.TB, dir string) []record {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "profile_export.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []record
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("profile_export.jsonl line %d: %v", len(out)+1, err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// byIndex maps records by plan index.
func byIndex(recs []record) map[int]*record {
	m := make(map[int]*record, len(recs))
	for i := range recs {
		m[recs[i].Metadata.RequestIndex] = &recs[i]
	}
	return m
}

// testdata returns the absolute path of a fixture.
func testdata(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}
