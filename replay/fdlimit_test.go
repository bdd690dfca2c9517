//go:build unix

package replay

import (
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

// The check is made before anything runs: at concurrency 5000 with 1,024 files, New refuses
// in one line saying how to raise the limit; with a hard limit that allows it, New raises the
// soft limit itself and accepts.
func TestFileLimitUpFront(t *testing.T) {
	if !inChild(t) {
		runChild(t, t.Name(), 1024, 1024)
		runChild(t, t.Name(), 1024, 8192, "LLMBENCH_FDLIMIT_EXPECT=ok")
		return
	}
	ps := singleTurn(5000, job{}, nil)
	ps.meta.Concurrency = 5000
	plan := ps.write(t, t.TempDir())
	o := testOptions(t, plan, "http://127.0.0.1:9")
	o.Workers, o.NoPin = 1, true
	_, err := New(o)
	var rl unix.Rlimit
	unix.Getrlimit(unix.RLIMIT_NOFILE, &rl)
	if os.Getenv("LLMBENCH_FDLIMIT_EXPECT") == "ok" {
		if err != nil || rl.Cur != 8192 {
			t.Fatalf("hard limit 8192: %v, soft limit now %d", err, rl.Cur)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), "needs about 5064 open files per worker, and the limit is 1024 (hard limit 1024)") ||
		!strings.Contains(err.Error(), "ulimit -Hn 5064") {
		t.Fatalf("New at concurrency 5000 with 1024 files: %v", err)
	}
	if _, statErr := os.Stat(o.OutputDir); !os.IsNotExist(statErr) {
		t.Fatalf("run directory created before the check: %v", statErr)
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
	if client == 0 || ok == 0 || client+ok != 100 || res.Counts.Failed != client {
		t.Fatalf("%d completed, %d client errors, counts %+v", ok, client, res.Counts)
	}
}
