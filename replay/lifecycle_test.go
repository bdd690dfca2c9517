package replay

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
)

// corruptIndex rewrites record i's Index in the plan file at path and stores a fresh hash,
// as a buggy plan writer would: only record validation can tell.
func corruptIndex(t testing.TB, path string, i int, index uint32) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	off := binary.LittleEndian.Uint64(data[48:]) + uint64(i)*mmapds.RecordSize
	binary.LittleEndian.PutUint32(data[off+36:], index)
	sum := sha256.Sum256(data[:len(data)-mmapds.HashSize])
	copy(data[len(data)-mmapds.HashSize:], sum[:])
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A plan whose record indexes are not their record numbers is refused before anything is
// sent or created, with one line naming the plan file; a worker given one refuses it too
// (it used to panic with "index out of range", or log 101 outcomes for 100 planned).
func TestPlanIndexesValidated(t *testing.T) {
	for _, c := range []struct {
		name  string
		n     int
		rec   int
		index uint32
		want  string
	}{
		{"out of range", 2, 1, 64, "record 1 has index 64"},
		{"duplicated", 100, 7, 6, "record 7 has index 6"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := newTestServer(t)
			plan := singleTurn(c.n, job{N: 1, Stream: true}, func(i int) int64 { return int64(i) * 1e6 }).write(t, t.TempDir())
			corruptIndex(t, plan, c.rec, c.index)
			o := testOptions(t, plan, srv.URL)
			_, err := New(o)
			if err == nil || !strings.Contains(err.Error(), plan+": ") || !strings.Contains(err.Error(), c.want) ||
				!errors.Is(err, mmapds.ErrFormat) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("New: %v; want one line naming %s and %q", err, plan, c.want)
			}
			if _, err := os.Stat(o.OutputDir); !os.IsNotExist(err) {
				t.Fatalf("output dir created: %v", err)
			}
			cfg := workerConfig{Plan: plan, URLs: []string{srv.URL}, Workers: 1, CPU: -1, Log: filepath.Join(t.TempDir(), "w.rawlog")}
			if _, err := runWorker(cfg, make(chan string), inproc{start: time.Now().UnixNano()}); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("worker: %v, want %q", err, c.want)
			}
			if got := srv.requests.Load(); got != 0 {
				t.Fatalf("server saw %d requests", got)
			}
		})
	}
}

// failingFile accepts limit bytes, writing them to a real file, then fails every write with
// ENOSPC, as a full disk does (a write that crosses the limit is cut short).
type failingFile struct {
	*os.File
	mu     sync.Mutex
	limit  int
	writes int // failed writes
}

func (f *failingFile) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(p) <= f.limit {
		f.limit -= len(p)
		return f.File.Write(p)
	}
	n, _ := f.File.Write(p[:f.limit])
	f.limit = 0
	f.writes++
	return n, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
}

// A log that cannot be written (disk full): the first failed write stops sending and is
// reported once; every planned request is still counted exactly once, never-sent ones as
// not_sent; nothing counted not_sent reached the server; what reached the file is a readable
// log up to a torn frame. writeThrough fails a write before the next frame is queued, as
// when the writer goroutine wins the race under load (the header's two frames included).
func TestLogWriteFails(t *testing.T) {
	for i, limit := range []int{0, 3000, 0, 3000} {
		writeThrough := i >= 2
		srv := newTestServer(t)
		const n = 60
		ps := singleTurn(n, job{N: 3, ITLms: 1, Stream: true}, nil)
		ps.meta.Concurrency = 2
		plan := ps.write(t, t.TempDir())
		var fails []string
		var ff *failingFile
		path := filepath.Join(t.TempDir(), "w.rawlog")
		cfg := workerConfig{Plan: plan, URLs: []string{srv.URL}, Workers: 1, CPU: -1, Log: path, RequestTimeoutNs: int64(10 * time.Second),
			logWriteThrough: writeThrough,
			openLog: func(path string) (logFile, error) {
				f, err := os.Create(path)
				ff = &failingFile{File: f, limit: limit}
				return ff, err
			}}
		res, err := runWorker(cfg, make(chan string), inproc{start: time.Now().Add(20 * time.Millisecond).UnixNano(), fails: &fails})
		if err != nil {
			t.Fatalf("limit %d (write-through %v): %v", limit, writeThrough, err)
		}
		c := res.Counts
		if res.Status != rawlog.StatusFailed || !strings.Contains(res.Err, "no space left on device") || c.Planned != n || c.Accounted() != n || c.Lost != 0 || c.NotSent == 0 {
			t.Fatalf("limit %d (write-through %v): status %s err %q counts %+v", limit, writeThrough, res.Status, res.Err, c)
		}
		if len(fails) != 1 || fails[0] != res.Err || ff.writes != 1 {
			t.Fatalf("limit %d (write-through %v): reported %d times (%q), %d failed writes; want once", limit, writeThrough, len(fails), fails, ff.writes)
		}
		// Aborted or failed ones may have been cut while connecting; not_sent ones never left.
		if got := int(srv.requests.Load()); got < c.Completed || got > c.Completed+c.Failed+c.Aborted {
			t.Fatalf("limit %d (write-through %v): server saw %d requests, counts %+v", limit, writeThrough, got, c)
		}
		if limit == 0 {
			if c.NotSent != n {
				t.Fatalf("nothing could be logged, yet counts %+v", c)
			}
			continue
		}
		s := summarize(t, path)
		if s.Footer != nil || s.Requests > c.Completed || s.Requests == 0 {
			t.Fatalf("limit %d (write-through %v): partial log %+v, counts %+v", limit, writeThrough, s, c)
		}
	}
}

// Losing the coordinator (stdin EOF, or a progress report that cannot be written) stops the
// worker as an interruption would, with the grace period: in-flight requests finish, the
// rest are not_sent, the log gets its footer, and the run fails.
func TestCoordinatorLost(t *testing.T) {
	for _, how := range []string{"stdin closed", "progress pipe broken"} {
		t.Run(how, func(t *testing.T) {
			srv := newTestServer(t)
			const n = 100
			plan := singleTurn(n, job{N: 5, ITLms: 20, Stream: true}, func(i int) int64 { return int64(i) * 20e6 }).write(t, t.TempDir())
			path := filepath.Join(t.TempDir(), "w.rawlog")
			cfg := workerConfig{Plan: plan, URLs: []string{srv.URL}, Workers: 1, CPU: -1, Log: path,
				RequestTimeoutNs: int64(10 * time.Second), GraceNs: int64(5 * time.Second)}
			cmds := make(chan string)
			rep := &lostReport{inproc: inproc{start: time.Now().Add(20 * time.Millisecond).UnixNano()}}
			if how == "stdin closed" {
				time.AfterFunc(400*time.Millisecond, func() { close(cmds) })
			} else {
				rep.breakAfter = time.Now().Add(400 * time.Millisecond)
			}
			res, err := runWorker(cfg, cmds, rep)
			if err != nil {
				t.Fatal(err)
			}
			c := res.Counts
			if res.Status != rawlog.StatusFailed || !strings.Contains(res.Err, "coordinator gone") || c.Accounted() != n || c.NotSent == 0 || c.Completed == 0 || c.Aborted != 0 {
				t.Fatalf("status %s err %q counts %+v", res.Status, res.Err, c)
			}
			s := summarize(t, path)
			if s.Footer == nil || s.Footer.Status != rawlog.StatusFailed || s.Requests != n || s.Counts.NotSent != c.NotSent {
				t.Fatalf("log %+v, counts %+v", s, c)
			}
			for _, q := range readLog(t, path) {
				if q.Outcome == rawlog.OutcomeNotSent && !strings.Contains(q.Err, "coordinator gone") {
					t.Fatalf("not_sent request %d: %q", q.Index, q.Err)
				}
			}
		})
	}
}

// lostReport's progress reports fail from breakAfter on, as writes to a closed pipe do.
type lostReport struct {
	inproc
	breakAfter time.Time
}

func (r *lostReport) progress(sent, done, errs int64) error {
	if !r.breakAfter.IsZero() && time.Now().After(r.breakAfter) {
		return syscall.EPIPE
	}
	return nil
}

// A full disk in a real run: worker 0's log is /dev/full. The worker says so once, sends
// nothing it could not log, and reports exact counts; run.json has them, and no empty
// recovery log or reserve file is left.
func TestRunOnFullDisk(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip(err)
	}
	srv := newTestServer(t)
	const n = 20
	plan := singleTurn(n, job{N: 1, Stream: true}, func(i int) int64 { return int64(i) * 1e6 }).write(t, t.TempDir())
	o := testOptions(t, plan, srv.URL)
	o.Workers = 1
	var notices bytes.Buffer
	o.Notice = &notices
	// The log becomes /dev/full once the run has locked its directory (which a directory
	// holding a worker log already cannot be): the worker is started through a shell that
	// links it first.
	o.WorkerCommand = []string{"/bin/sh", "-c", `ln -s /dev/full "$1" && shift && exec "$0" "$@"`,
		os.Args[0], filepath.Join(o.OutputDir, WorkerLogName(0)), WorkerArg}
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Run()
	c := m.Counts
	if err == nil || m.Status != rawlog.StatusFailed || !strings.Contains(err.Error(), "no space left on device") ||
		c.Planned != n || c.NotSent != n || c.Lost != 0 || c.Accounted() != n {
		t.Fatalf("status %s err %v counts %+v", m.Status, err, c)
	}
	if got := strings.Count(notices.String(), "no space left on device"); got != 1 {
		t.Fatalf("the failure was reported %d times: %q", got, notices.String())
	}
	if got := srv.requests.Load(); got != 0 {
		t.Fatalf("the server saw %d requests that could not be logged", got)
	}
	back, err := rawlog.ReadManifest(o.OutputDir)
	if err != nil || back.Counts != c || back.Status != rawlog.StatusFailed {
		t.Fatalf("run.json %+v %v", back, err)
	}
	for _, name := range []string{RecoveryLogName(0), reserveName} {
		if _, err := os.Lstat(filepath.Join(o.OutputDir, name)); !os.IsNotExist(err) {
			t.Fatalf("%s left in the run directory (%v)", name, err)
		}
	}
}

// The plan file truncated in place during a run (cp over it does that): the workers' reads
// of the mapping fault, and the run ends failed, with every log closed and every request
// counted, instead of the processes dying of SIGBUS.
func TestPlanTruncatedDuringRun(t *testing.T) {
	srv := newTestServer(t)
	const n = 200
	// Bodies big enough that the records lie pages past the start of the file.
	ps := &planSpec{}
	body := jobBody(job{N: 1, Stream: true, Text: strings.Repeat("x", 2000)})
	for i := 0; i < n; i++ {
		ps.add(mmapds.Record{SendOffsetNs: int64(i) * 10e6, DelayNs: -1, Session: uint32(i), Phase: mmapds.PhaseProfile}, body)
	}
	plan := ps.write(t, t.TempDir())
	o := testOptions(t, plan, srv.URL)
	o.Workers = 2
	o.NoPin = true
	var notices bytes.Buffer
	o.Notice = &notices
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		waitStarted(t, o.OutputDir)
		time.Sleep(300 * time.Millisecond)
		os.Truncate(plan, 0)
	}()
	m, err := r.Run()
	if err == nil || m.Status != rawlog.StatusFailed || !strings.Contains(err.Error(), "truncated or rewritten while in use") {
		t.Fatalf("status %s err %v", m.Status, err)
	}
	c := m.Counts
	if c.Planned != n || c.Accounted() != n || c.Lost != 0 || c.Completed == 0 || c.NotSent == 0 {
		t.Fatalf("counts %+v", c)
	}
	for _, w := range m.Workers {
		if w.Status != rawlog.StatusFailed || w.RecoveryLog != "" {
			t.Fatalf("worker %+v (killed means SIGBUS)", w)
		}
		if s := summarize(t, filepath.Join(o.OutputDir, w.Log)); s.Footer == nil || s.Footer.Status != rawlog.StatusFailed || s.Requests != w.Planned {
			t.Fatalf("%s: %+v", w.Log, s)
		}
	}
}
