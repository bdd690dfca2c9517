package replay

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/noise"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay/telemetry"
)

// testOptions are Options for a coordinator run whose workers are this test binary.
func testOptions(t testing.TB, plan, url string) Options {
	return Options{Plan: plan, URLs: []string{url}, OutputDir: filepath.Join(t.TempDir(), "run"),
		WorkerCommand: []string{os.Args[0], WorkerArg}, GPUSampleInterval: -1, NoServerMetrics: true,
		RequestTimeout: 20 * time.Second, GracePeriod: 5 * time.Second}
}

// readRun reads every worker log of a run directory, checking that each plan index appears
// exactly once across them, and returns the records by index.
func readRun(t testing.TB, m *rawlog.Manifest, dir string) map[uint32]rawlog.Request {
	t.Helper()
	all := map[uint32]rawlog.Request{}
	for _, w := range m.Workers {
		path := filepath.Join(dir, w.Log)
		s := summarize(t, path)
		if s.Header.Worker != w.ID || s.Header.PID != w.PID || s.Header.CPU != w.CPU || s.Header.PlanHash != m.PlanHash || s.Header.StartUnixNs != m.StartUnixNs {
			t.Fatalf("%s header %+v, manifest worker %+v", w.Log, s.Header, w)
		}
		for i, q := range readLog(t, path) {
			if _, dup := all[i]; dup {
				t.Fatalf("request %d logged by two workers", i)
			}
			all[i] = q
		}
		if w.RecoveryLog == "" {
			continue
		}
		// The coordinator's not_sent records for a worker that died.
		path = filepath.Join(dir, w.RecoveryLog)
		s = summarize(t, path)
		if s.Header.Worker != w.ID || s.Header.PlanHash != m.PlanHash || s.Header.StartUnixNs != m.StartUnixNs ||
			s.Requests != w.Recovered || s.Counts.NotSent != w.Recovered || s.Footer == nil || s.Footer.Status != rawlog.StatusRecovered {
			t.Fatalf("%s: summary %+v, manifest worker %+v", w.RecoveryLog, s, w)
		}
		for i, q := range readLog(t, path) {
			if _, dup := all[i]; dup {
				t.Fatalf("request %d logged by worker %d and recovered", i, w.ID)
			}
			all[i] = q
		}
	}
	return all
}

// sentIndices returns the plan indices of a log's Sent records.
func sentIndices(t testing.TB, path string) map[uint32]bool {
	t.Helper()
	r, err := rawlog.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := map[uint32]bool{}
	for {
		k, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if k == rawlog.KindSent {
			out[r.Sent().Index] = true
		}
	}
}

// A full run through worker processes: sessions stay on one worker, every request is logged
// once, run.json says what happened, and the API key is written nowhere.
func TestRunWorkerProcesses(t *testing.T) {
	srv := newTestServer(t)
	srv.keep = true
	ps := &planSpec{}
	for s := 0; s < 12; s++ {
		for turn := 0; turn < 3; turn++ {
			delay := int64(-1)
			if turn > 0 {
				delay = 1e6
			}
			ps.add(mmapds.Record{SendOffsetNs: mmapds.NoSendOffset, DelayNs: delay, Session: uint32(1000 + s), Turn: uint32(turn), Phase: mmapds.PhaseProfile},
				jobBody(job{N: 5, ITLms: 1, Stream: true}))
		}
	}
	ps.meta.Concurrency = 4
	dir := t.TempDir()
	plan := ps.write(t, dir)
	o := testOptions(t, plan, srv.URL)
	o.APIKey = "sk-secret-123"
	o.Headers = []string{"X-Api-Key: sk-other-456", "X-Team: infra"}
	o.CommandLine = []string{"replay", "--api-key", "sk-secret-123", "-H", "X-Api-Key: sk-other-456", "--plan", plan}
	o.SessionHeader = DefaultSessionHeader
	o.GPUSampleInterval = 0 // default: NVML absent here means one notice and no telemetry
	var notices bytes.Buffer
	o.Notice = &notices
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Run()
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != rawlog.StatusComplete || m.Counts.Planned != 36 || m.Counts.Completed != 36 || m.Counts.Lost != 0 {
		t.Fatalf("status %s counts %+v error %q", m.Status, m.Counts, m.Error)
	}
	cpus, _ := allowedCPUs()
	if len(m.Workers) != min(len(cpus), 4) {
		t.Fatalf("%d workers for %d CPUs", len(m.Workers), len(cpus))
	}
	for i, w := range m.Workers {
		if w.PID == 0 || w.CPU != cpus[i] || w.Status != rawlog.StatusComplete || w.Planned == 0 {
			t.Fatalf("worker %+v", w)
		}
	}
	if m.StartUnixNs == 0 || m.EndUnixNs <= m.StartUnixNs || m.Kernel == "" || m.GoVersion == "" || m.PlanHash == "" {
		t.Fatalf("manifest %+v", m)
	}
	if m.TelemetryLog == "" && (m.TelemetryNote == "" || !strings.Contains(notices.String(), "no GPU telemetry")) {
		t.Fatalf("no telemetry and no note: %q / %q", m.TelemetryNote, notices.String())
	}
	reqs := readRun(t, m, o.OutputDir)
	if len(reqs) != 36 {
		t.Fatalf("%d records", len(reqs))
	}
	// The turns of a session are on one worker, in order.
	byLog := map[string]map[uint32]bool{}
	for _, w := range m.Workers {
		byLog[w.Log] = map[uint32]bool{}
		for i := range readLog(t, filepath.Join(o.OutputDir, w.Log)) {
			byLog[w.Log][i] = true
		}
	}
	for s := 0; s < 12; s++ {
		first := uint32(s * 3)
		for _, set := range byLog {
			if set[first] && (!set[first+1] || !set[first+2]) {
				t.Fatalf("session %d split across workers", s)
			}
		}
		if q1, q0 := reqs[first+1], reqs[first]; q1.WriteStartNs < q0.EndNs+1e6 {
			t.Fatalf("session %d: turn 1 sent before turn 0 ended + delay", s)
		}
	}
	// Credentials reached the server and nothing on disk.
	srv.mu.Lock()
	auth := srv.headers[0]
	srv.mu.Unlock()
	if auth.Get("Authorization") != "Bearer sk-secret-123" || auth.Get("X-Api-Key") != "sk-other-456" || auth.Get("X-Team") != "infra" ||
		auth.Get("X-Correlation-ID") == "" || !strings.HasPrefix(auth.Get("User-Agent"), "llmbench-replay/") {
		t.Fatalf("server saw headers %v", auth)
	}
	filepath.Walk(o.OutputDir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, _ := os.ReadFile(path)
		if bytes.Contains(b, []byte("sk-secret-123")) || bytes.Contains(b, []byte("sk-other-456")) {
			t.Errorf("%s contains a credential", path)
		}
		return nil
	})
	raw, _ := os.ReadFile(filepath.Join(o.OutputDir, "run.json"))
	var back rawlog.Manifest
	if err := json.Unmarshal(raw, &back); err != nil || !strings.Contains(strings.Join(back.CommandLine, " "), "--api-key REDACTED") {
		t.Fatalf("command line %v %v", back.CommandLine, err)
	}
	// A second run into the same directory is refused.
	if _, err := r.Run(); err == nil || !strings.Contains(err.Error(), "already holds a run") {
		t.Fatalf("reused output dir: %v", err)
	}
}

// Done-when: a run stopped as by SIGINT leaves readable logs and run.json marked
// interrupted, with every planned request accounted for.
func TestRunInterrupted(t *testing.T) {
	srv := newTestServer(t)
	plan := singleTurn(200, job{N: 20, ITLms: 10, Stream: true}, func(i int) int64 { return int64(i) * 20e6 }).write(t, t.TempDir())
	o := testOptions(t, plan, srv.URL)
	o.GracePeriod = 50 * time.Millisecond
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		waitStarted(t, o.OutputDir)
		time.Sleep(400 * time.Millisecond)
		r.Stop()
	}()
	m, err := r.Run()
	if err != nil {
		t.Fatal(err)
	}
	c := m.Counts
	if m.Status != rawlog.StatusInterrupted || c.NotSent < 100 || c.Completed+c.Aborted+c.NotSent+c.Failed != 200 || c.Lost != 0 {
		t.Fatalf("status %s counts %+v", m.Status, c)
	}
	back, err := rawlog.ReadManifest(o.OutputDir)
	if err != nil || back.Status != rawlog.StatusInterrupted {
		t.Fatalf("run.json: %v %v", back, err)
	}
	if got := len(readRun(t, m, o.OutputDir)); got != 200 {
		t.Fatalf("%d records", got)
	}
	for _, w := range m.Workers {
		if s := summarize(t, filepath.Join(o.OutputDir, w.Log)); s.Footer == nil || s.Footer.Status != rawlog.StatusInterrupted {
			t.Fatalf("%s footer %+v", w.Log, s.Footer)
		}
	}
}

// waitStarted waits until run.json has a start instant.
func waitStarted(t testing.TB, dir string) *rawlog.Manifest {
	for i := 0; i < 1000; i++ {
		if m, err := rawlog.ReadManifest(dir); err == nil && m.StartUnixNs != 0 {
			if d := time.Until(time.Unix(0, m.StartUnixNs)); d > 0 {
				time.Sleep(d)
			}
			return m
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Error("run never started")
	return nil
}

// Done-when: a worker killed with SIGKILL loses only its in-flight requests, which the run
// reports; the requests it never sent are not_sent (in its recovery log), the run goes on
// with the other workers, and every planned request has exactly one outcome.
func TestWorkerKilled(t *testing.T) {
	cpus, _ := allowedCPUs()
	if len(cpus) < 2 {
		t.Skip("needs two CPUs for two workers")
	}
	srv := newTestServer(t)
	const n, slots = 60, 4 // two per worker
	ps := singleTurn(n, job{N: 10, ITLms: 10, Stream: true}, nil)
	ps.meta.Concurrency = slots
	plan := ps.write(t, t.TempDir())
	o := testOptions(t, plan, srv.URL)
	o.Workers = 2
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		m := waitStarted(t, o.OutputDir)
		time.Sleep(350 * time.Millisecond)
		syscall.Kill(m.Workers[1].PID, syscall.SIGKILL)
	}()
	m, err := r.Run()
	if err == nil || m.Status != rawlog.StatusFailed || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("status %s err %v", m.Status, err)
	}
	w0, w1 := m.Workers[0], m.Workers[1]
	c := m.Counts
	if w0.Status != rawlog.StatusComplete || w0.Lost != 0 || w0.RecoveryLog != "" || w1.Status != rawlog.StatusKilled {
		t.Fatalf("workers %+v %+v", w0, w1)
	}
	if c.Planned != n || c.Accounted() != n {
		t.Fatalf("counts %+v do not add up to %d", c, n)
	}
	// Lost is exactly the killed worker's in-flight requests: started (Sent record) with no
	// outcome. Its two slots were busy when it was killed (each request takes ~100 ms).
	logPath := filepath.Join(o.OutputDir, w1.Log)
	logged, started := readLog(t, logPath), sentIndices(t, logPath)
	inFlight := 0
	for i := range started {
		if _, ok := logged[i]; !ok {
			inFlight++
		}
	}
	if w1.Lost != inFlight || c.Lost != w1.Lost || w1.Lost < 1 || w1.Lost > slots/2 {
		t.Fatalf("lost %d (run %d), in flight %d, slots %d", w1.Lost, c.Lost, inFlight, slots/2)
	}
	for i, q := range logged {
		if !started[i] && q.Outcome != rawlog.OutcomeNotSent {
			t.Fatalf("request %d ended %v with no Sent record", i, q.Outcome)
		}
	}
	// The rest of its part was never sent: not_sent records, each with the reason, none of
	// them started.
	if w1.Recovered == 0 || w1.RecoveryLog != RecoveryLogName(1) || len(logged)+w1.Lost+w1.Recovered != w1.Planned || c.NotSent != w1.Recovered {
		t.Fatalf("worker 1 %+v: %d logged, counts %+v", w1, len(logged), c)
	}
	reqs := readRun(t, m, o.OutputDir) // the killed worker's log is readable
	if len(reqs) != n-c.Lost || c.Completed != n-c.Lost-c.NotSent {
		t.Fatalf("counts %+v, %d records", c, len(reqs))
	}
	recovered := readLog(t, filepath.Join(o.OutputDir, w1.RecoveryLog))
	for i, q := range recovered {
		if started[i] || q.Outcome != rawlog.OutcomeNotSent || q.WriteStartNs != -1 || !strings.Contains(q.Err, "worker 1 died (killed by signal killed) before sending it") {
			t.Fatalf("recovered request %d: started %v, %+v", i, started[i], q)
		}
	}
	// The server saw every completed request and at most the lost ones besides: nothing
	// reported not_sent reached it.
	if got := int(srv.requests.Load()); got < c.Completed || got > c.Completed+c.Lost {
		t.Fatalf("server saw %d requests; %d completed, %d lost", got, c.Completed, c.Lost)
	}
	if s := summarize(t, logPath); s.Footer != nil || s.Counts.Completed == 0 {
		t.Fatalf("killed worker log %+v", s)
	}
	if !strings.Contains(m.Error, "lost in flight") || !strings.Contains(m.Error, RecoveryLogName(1)) {
		t.Fatalf("error %q", m.Error)
	}
}

// Workers that cannot start: the run fails, and run.json and the logs still give every
// planned request one outcome (not_sent, nothing having been sent).
func TestWorkersFailToStart(t *testing.T) {
	srv := newTestServer(t)
	const n = 12
	for _, c := range []struct {
		name string
		cmd  []string
		want string
	}{
		{"no such program", []string{"/nonexistent/llmbench-worker"}, "start worker 0"},
		{"exits at once", []string{"/bin/sh", "-c", "exit 3"}, "exited before the start"},
		{"plan replaced", nil, "changed since the coordinator opened it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.cmd != nil && c.name != "no such program" {
				if _, err := os.Stat(c.cmd[0]); err != nil {
					t.Skip(err)
				}
			}
			ps := singleTurn(n, job{N: 1, Stream: true}, nil)
			ps.meta.Concurrency = 2
			path := ps.write(t, t.TempDir())
			o := testOptions(t, path, srv.URL)
			o.Workers = 2
			o.NoPin = true
			if c.cmd != nil {
				o.WorkerCommand = c.cmd
			}
			r, err := New(o)
			if err != nil {
				t.Fatal(err)
			}
			if c.cmd == nil {
				// The plan file is replaced after the coordinator checked it: each worker
				// refuses it before it is ready.
				other := singleTurn(n, job{N: 2, Stream: true}, nil)
				other.meta.Concurrency = 2
				if err := os.Rename(other.write(t, t.TempDir()), path); err != nil {
					t.Fatal(err)
				}
			}
			m, err := r.Run()
			if err == nil || m.Status != rawlog.StatusFailed || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("status %s err %v", m.Status, err)
			}
			if got := m.Counts; got.Planned != n || got.NotSent != n || got.Accounted() != n {
				t.Fatalf("counts %+v", got)
			}
			if got := len(readRunLoose(t, m, o.OutputDir)); got != n {
				t.Fatalf("%d records in the logs, want %d", got, n)
			}
			back, err := rawlog.ReadManifest(o.OutputDir)
			if err != nil || back.Counts != m.Counts || back.Error != m.Error {
				t.Fatalf("run.json %+v %v", back, err)
			}
			for _, w := range back.Workers {
				if w.Status == rawlog.StatusRunning || w.Lost != 0 {
					t.Fatalf("worker %+v", w)
				}
			}
		})
	}
}

// A CPU list naming CPUs this process may not use is refused by New, before anything is
// written.
func TestBadCPUs(t *testing.T) {
	srv := newTestServer(t)
	plan := singleTurn(2, job{N: 1}, nil).write(t, t.TempDir())
	allowed, _ := allowedCPUs()
	for _, c := range []struct {
		cpus []int
		want string
	}{
		{[]int{99999}, "cpus 99999: CPU 99999 is not available to this process, which may use CPUs " + formatCPUs(allowed)},
		{append([]int{allowed[0]}, 4000, 4001, 4002, 4005), "CPUs 4000-4002,4005 are not available"},
	} {
		o := testOptions(t, plan, srv.URL)
		o.CPUs = c.cpus
		_, err := New(o)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("cpus %v: %v, want %q", c.cpus, err, c.want)
		}
		if _, err := os.Stat(o.OutputDir); !os.IsNotExist(err) {
			t.Errorf("cpus %v: output dir created (%v)", c.cpus, err)
		}
		// Unpinned workers do not use the list's CPUs, only its length.
		o.NoPin = true
		if r, err := New(o); err != nil {
			t.Errorf("cpus %v with NoPin: %v", c.cpus, err)
		} else {
			r.plan.Close()
		}
	}
	if got := formatCPUs([]int{0, 1, 2, 3, 6, 8, 9, 5}); got != "0-3,6,8-9,5" {
		t.Errorf("formatCPUs: %q", got)
	}
}

// Done-when, scaled: a Poisson plan at 100 req/s is sent on schedule. The p99 schedule lag is
// bounded by 2 ms plus twice the machine's worst wake-up lateness on the worker's CPU: the
// worker's own calibration at its start, and a thread pinned beside it that sleeps 200 µs
// again and again during the run. Another process's time slice on that CPU (stress-ng: 3-5 ms
// here) moves the bound with it. The p99 is judged on a calm machine only (see the end);
// under the race detector the figures are only reported (BenchmarkScheduleLag measures
// them properly).
func TestPoissonScheduleLag(t *testing.T) {
	srv := newTestServer(t)
	rng := rand.New(rand.NewPCG(1, 2))
	at := int64(0)
	ps := singleTurn(150, job{N: 2, Stream: true}, func(int) int64 {
		at += int64(rng.ExpFloat64() / 100 * 1e9)
		return at
	})
	plan := ps.write(t, t.TempDir())
	o := testOptions(t, plan, srv.URL)
	o.Workers = 1
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	sampler := noise.Start(r.cpus[0])
	m, err := r.Run()
	late := sampler.Stop()
	if err := sampler.Err(); err != nil {
		t.Logf("noise sampler not pinned to CPU %d: %v", r.cpus[0], err)
	}
	noiseP99, noiseMax := late.Quantile(0.99), late.Max()
	if err != nil || m.Counts.Completed != 150 {
		t.Fatalf("counts %+v err %v", m.Counts, err)
	}
	var lags []int64
	for _, q := range readRun(t, m, o.OutputDir) {
		if q.ReadyNs != q.IntendedNs {
			t.Fatalf("open loop without ceiling: ready %d != intended %d", q.ReadyNs, q.IntendedNs)
		}
		lags = append(lags, q.WriteStartNs-q.IntendedNs)
	}
	p50, p99 := percentile(lags, 50), percentile(lags, 99)
	worst := noiseMax
	if c := m.Workers[0].Calibration; c != nil {
		worst = max(worst, time.Duration(c.TimerLagMaxNs))
	}
	bound := 2*time.Millisecond + 2*worst
	t.Logf("schedule lag at 100 req/s Poisson: p50 %v p99 %v max %v (bound %v: worst wake-up lateness %v, sampler p99 %v)",
		time.Duration(p50), time.Duration(p99), time.Duration(lags[len(lags)-1]), bound, worst, noiseP99)
	if lags[0] < -1e5 {
		t.Fatalf("a request went out %v early", time.Duration(-lags[0]))
	}
	if raceEnabled {
		return
	}
	// The median is judged always; the p99 only on a calm machine: a stall the rest of the
	// machine causes (CPU pressure from other processes, writes held back by the disk) can
	// reach the worker without the sampler on its CPU seeing it, and is the machine's, not
	// the client's. The benchmark measures the p99 properly.
	if time.Duration(p50) > bound {
		t.Fatalf("p50 schedule lag %v over %v", time.Duration(p50), bound)
	}
	if pr := noise.ReadPressure(); !pr.Calm(10) {
		t.Logf("p99 not judged: the machine is under pressure (CPU %.1f%%, I/O %.1f%% of the last 10 s)", pr.CPU, pr.IO)
	} else if time.Duration(p99) > bound {
		t.Fatalf("p99 schedule lag %v over %v (CPU pressure %.1f%%, I/O %.1f%%)", time.Duration(p99), bound, pr.CPU, pr.IO)
	}
}

// GPU telemetry during a run: with NVML, telemetry.rawlog holds samples of every GPU on the
// run's clock; without it, run.json says why and the run is otherwise the same.
func TestTelemetryInRun(t *testing.T) {
	srv := newTestServer(t)
	plan := singleTurn(10, job{N: 2, Stream: true}, func(i int) int64 { return int64(i) * 50e6 }).write(t, t.TempDir())
	o := testOptions(t, plan, srv.URL)
	o.Workers = 1
	o.GPUSampleInterval = 50 * time.Millisecond
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Run()
	if err != nil || m.Counts.Completed != 10 {
		t.Fatalf("%v %+v", err, m.Counts)
	}
	s, openErr := telemetry.Open()
	if openErr != nil {
		if m.TelemetryLog != "" || m.TelemetryNote == "" {
			t.Fatalf("no NVML (%v) but telemetry log %q, note %q", openErr, m.TelemetryLog, m.TelemetryNote)
		}
		t.Logf("no NVML: %s", m.TelemetryNote)
		return
	}
	gpus := len(s.GPUs())
	s.Close()
	lr, err := rawlog.Open(filepath.Join(o.OutputDir, m.TelemetryLog))
	if err != nil {
		t.Fatal(err)
	}
	defer lr.Close()
	if h := lr.Header(); h.Worker != -1 || h.StartUnixNs != m.StartUnixNs {
		t.Fatalf("telemetry header %+v", h)
	}
	perGPU := map[int]int{}
	for {
		k, err := lr.Next()
		if err != nil {
			break
		}
		if k == rawlog.KindGPU {
			g := lr.GPU()
			perGPU[g.GPU]++
			if g.TimeNs < -int64(time.Millisecond) || g.PowerMilliwatts <= 0 {
				t.Fatalf("sample %+v", g)
			}
			if perGPU[g.GPU] == 1 {
				t.Logf("first sample %+v", g)
			}
		}
	}
	run := time.Duration(m.EndUnixNs - m.StartUnixNs)
	for g := 0; g < gpus; g++ {
		if want := int(run/(50*time.Millisecond)) / 2; perGPU[g] < want {
			t.Fatalf("GPU %d: %d samples over %v, want >= %d", g, perGPU[g], run, want)
		}
	}
	t.Logf("%d GPUs, %v samples over %v", gpus, perGPU, run)
}

// Interrupted before the start: nothing is sent, every request is logged as not sent, and
// the run is interrupted, not failed.
func TestStopBeforeStart(t *testing.T) {
	srv := newTestServer(t)
	plan := singleTurn(20, job{N: 1, Stream: true}, func(i int) int64 { return int64(i) * 1e6 }).write(t, t.TempDir())
	o := testOptions(t, plan, srv.URL)
	o.StartDelay = time.Second
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	r.Stop()
	m, err := r.Run()
	if err != nil || m.Status != rawlog.StatusInterrupted {
		t.Fatalf("status %s err %v", m.Status, err)
	}
	if c := m.Counts; c.NotSent+c.Completed != 20 || c.Lost != 0 {
		t.Fatalf("counts %+v", c)
	}
	if got := len(readRunLoose(t, m, o.OutputDir)); got != 20 {
		t.Fatalf("%d records", got)
	}
}

// readRunLoose is readRun without the header checks (a run stopped before its start has
// no common start instant).
// A worker that never got far enough to write its log has none.
func readRunLoose(t testing.TB, m *rawlog.Manifest, dir string) map[uint32]rawlog.Request {
	all := map[uint32]rawlog.Request{}
	for _, w := range m.Workers {
		for _, name := range []string{w.Log, w.RecoveryLog} {
			if name == "" {
				continue
			}
			if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Size() == 0 {
				continue
			}
			for i, q := range readLog(t, filepath.Join(dir, name)) {
				if _, dup := all[i]; dup {
					t.Fatalf("request %d logged twice", i)
				}
				all[i] = q
			}
		}
	}
	return all
}
