//go:build unix

package replay

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/llmbench/llmbench/rawlog"
)

func TestCheckFileLimit(t *testing.T) {
	for _, c := range []struct {
		n, workers int
		soft, hard uint64
		want       string // "" = accepted
	}{
		{5000, 1, 1024, 1024, "concurrency 5000 over 1 workers needs about 5064 open files per worker, and the limit is 1024 (hard limit 1024): raise the hard limit first (as root: ulimit -Hn 5064"},
		{5000, 1, 1024, 1 << 20, "raise it first (ulimit -n 5064)"},
		{5000, 1, 5064, 8192, ""}, // multi-turn sessions hold no timer each: one socket per slot
		{5000, 8, 1024, 1024, ""}, // 625 each
		{5001, 8, 689, 689, "needs about 690"},
		{5000, 1, 5064, 5064, ""},
		{0, 1, 16, 16, ""},  // no concurrency bound: nothing to check
		{5000, 1, 0, 0, ""}, // limit unknown
		{100, 1, 1024, 1024, ""},
	} {
		err := checkFileLimit(c.n, c.workers, c.soft, c.hard)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v", c, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%+v: error %v, want %q on one line", c, err, c.want)
		}
	}
}

// childEnv marks a test binary started by one of these tests to do the child's part.
const childEnv = "LLMBENCH_FDLIMIT_CHILD"

// runChild runs test name in a child process with RLIMIT_NOFILE set to soft/hard there, and
// fails if the child's part failed.
func runChild(t *testing.T, name string, soft, hard uint64, env ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), append(env, childEnv+"="+strconv.FormatUint(soft, 10)+":"+strconv.FormatUint(hard, 10))...)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "PASS") {
		t.Fatalf("child %s: %v\n%s", name, err, out)
	}
}

// inChild reports whether this is the child's part, and if so lowers the limit as asked.
func inChild(t *testing.T) bool {
	v := os.Getenv(childEnv)
	if v == "" {
		return false
	}
	a, b, _ := strings.Cut(v, ":")
	soft, _ := strconv.ParseUint(a, 10, 64)
	hard, _ := strconv.ParseUint(b, 10, 64)
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: soft, Max: hard}); err != nil {
		t.Fatalf("setrlimit: %v", err)
	}
	return true
}

func TestWorkersForFiles(t *testing.T) {
	for _, c := range []struct {
		n     int
		limit uint64
		want  int
	}{
		{100000, 20000, 6}, // 19,936 streams each at most
		{19936, 20000, 1},
		{19937, 20000, 2},
		{5000, 1024, 6},
		{0, 1024, 0},    // no concurrency bound
		{5000, 64, 0},   // nothing left after the overhead
		{5000, 0, 0},    // limit unknown
		{1, 1 << 62, 1}, // no overflow
	} {
		if got := workersForFiles(c.n, c.limit); got != c.want {
			t.Errorf("workersForFiles(%d, %d) = %d, want %d", c.n, c.limit, got, c.want)
		}
	}
}

// The check is made before anything runs. At concurrency 5000 with 1,024 files per process,
// New starts 6 workers instead of the one asked for, and says so; with a hard limit that
// allows one, New raises the soft limit itself and keeps one; with a limit so small that no
// reasonable number of workers would do (80 files: 16 streams each), it refuses in one line
// saying how to raise the limit, before the run directory exists.
func TestFileLimitUpFront(t *testing.T) {
	if !inChild(t) {
		runChild(t, t.Name(), 1024, 1024, "LLMBENCH_FDLIMIT_EXPECT=scaled")
		runChild(t, t.Name(), 1024, 8192, "LLMBENCH_FDLIMIT_EXPECT=raised")
		runChild(t, t.Name(), 80, 80, "LLMBENCH_FDLIMIT_EXPECT=refused")
		return
	}
	ps := singleTurn(5000, job{}, nil)
	ps.meta.Concurrency = 5000
	plan := ps.write(t, t.TempDir())
	o := testOptions(t, plan, "http://127.0.0.1:9")
	var notes strings.Builder
	o.Workers, o.NoPin, o.CPUs, o.Notice = 1, true, []int{0}, &notes
	r, err := New(o)
	var rl unix.Rlimit
	unix.Getrlimit(unix.RLIMIT_NOFILE, &rl)
	switch os.Getenv("LLMBENCH_FDLIMIT_EXPECT") {
	case "scaled":
		want := "replay: concurrency 5000 needs 6 worker processes: each holds an open file per stream and may hold 1024\n"
		if err != nil || len(r.cpus) != 6 || notes.String() != want || r.workersNote+"\n" != strings.TrimPrefix(want, "replay: ") {
			t.Fatalf("hard limit 1024: %v, %d workers, notice %q", err, len(r.cpus), notes.String())
		}
	case "raised":
		if err != nil || rl.Cur != 8192 || len(r.cpus) != 1 || notes.Len() != 0 {
			t.Fatalf("hard limit 8192: %v, soft limit now %d, %d workers, notice %q", err, rl.Cur, len(r.cpus), notes.String())
		}
	default:
		if err == nil || !strings.Contains(err.Error(), "needs about 5064 open files per worker, and the limit is 80 (hard limit 80)") ||
			!strings.Contains(err.Error(), "ulimit -Hn 5064") || strings.Contains(err.Error(), "\n") {
			t.Fatalf("New at concurrency 5000 with 80 files: %v", err)
		}
		if _, statErr := os.Stat(o.OutputDir); !os.IsNotExist(statErr) {
			t.Fatalf("run directory created before the check: %v", statErr)
		}
	}
}

// A concurrency one process cannot hold the sockets for runs on as many worker processes as
// it takes, pinned and sharing the CPUs: in a child process whose every process may hold
// 200 files, concurrency 300 (each stream open 400 ms, so all at once) runs on 3 workers
// pinned to one CPU, every request completes, and run.json says why (options.workers_note,
// options.workers_per_cpu).
func TestWorkersScaleToFileLimit(t *testing.T) {
	if !inChild(t) {
		srv := newTestServer(t)
		runChild(t, t.Name(), 200, 200, "LLMBENCH_FDLIMIT_URL="+srv.URL)
		if got := srv.requests.Load(); got != 300 {
			t.Fatalf("server saw %d requests, want 300", got)
		}
		return
	}
	cpus, err := allowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	const n = 300
	ps := singleTurn(n, job{N: 2, TTFTms: 400, Stream: true}, nil)
	ps.meta.Concurrency = n
	plan := ps.write(t, t.TempDir())
	o := testOptions(t, plan, os.Getenv("LLMBENCH_FDLIMIT_URL"))
	o.CPUs = cpus[:1]
	var notes strings.Builder
	o.Notice = &notes
	m := runReplay(t, o)
	recs := readRun(t, m, o.OutputDir)
	if m.Counts.Completed != n || len(recs) != n || len(m.Workers) != 3 {
		t.Fatalf("%d workers, counts %+v, %d records", len(m.Workers), m.Counts, len(recs))
	}
	for _, w := range m.Workers {
		if w.CPU != cpus[0] {
			t.Errorf("worker %d on CPU %d, want %d", w.ID, w.CPU, cpus[0])
		}
	}
	note := fmt.Sprintf("concurrency 300 needs 3 worker processes: each holds an open file per stream and may hold 200, so they share CPUs %d, up to 3 to a CPU", cpus[0])
	if m.Options["workers_note"] != note || fmt.Sprint(m.Options["workers_per_cpu"]) != "3" || !strings.Contains(notes.String(), "replay: "+note+"\n") {
		t.Fatalf("workers_note %q, workers_per_cpu %v, notices %q; want %q", m.Options["workers_note"], m.Options["workers_per_cpu"], notes.String(), note)
	}
}

// Out of file descriptors, connects fail with EMFILE: those requests fail as the client's
// error, saying how to raise the limit, never as a server transport error. The worker runs
// in a child process whose limit is 48 files, at concurrency 100 against a slow server.
func TestClientFDExhaustion(t *testing.T) {
	if !inChild(t) {
		srv := newTestServer(t)
		runChild(t, t.Name(), 48, 48, "LLMBENCH_FDLIMIT_URL="+srv.URL)
		return
	}
	ps := singleTurn(100, job{N: 1, TTFTms: 300, Stream: true}, nil)
	ps.meta.Concurrency = 100
	plan := ps.write(t, t.TempDir())
	res, reqs, _ := runInProcess(t, workerConfig{Plan: plan, URLs: []string{os.Getenv("LLMBENCH_FDLIMIT_URL")},
		RequestTimeoutNs: int64(20 * time.Second)}, nil)
	client, ok := 0, 0
	for _, q := range reqs {
		switch {
		case q.Outcome == rawlog.OutcomeCompleted:
			ok++
		case q.Outcome == rawlog.OutcomeFailed && strings.HasPrefix(q.Err, ClientErrorPrefix+"connect: ") &&
			strings.Contains(q.Err, syscall.EMFILE.Error()) && strings.Contains(q.Err, "ulimit -n"):
			client++
		default:
			t.Fatalf("request %d: %v %q", q.Index, q.Outcome, q.Err)
		}
	}
	if client == 0 || ok == 0 || client+ok != 100 || res.Counts.Failed != client || res.Counts.ClientFailed != client {
		t.Fatalf("%d completed, %d client errors, counts %+v", ok, client, res.Counts)
	}
}
