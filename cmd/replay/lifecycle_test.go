package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/analyze/benchclaim"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
)

// Usage and setup errors exit 2 with one line and leave nothing behind: no run directory
// is created, and one that exists is left as it was.
func TestSetupErrorsExit2(t *testing.T) {
	// Should a case get as far as starting workers (the defect this guards against), they
	// must be workers, not copies of this test binary running the tests again.
	t.Setenv("LLMBENCH_TEST_MAIN", "1")
	plan := writePlan(t, 4, 0)
	// A plan whose record 1 claims index 64 (and whose hash was redone to match).
	badPlan := writePlan(t, 2, 0)
	data, _ := os.ReadFile(badPlan)
	off := binary.LittleEndian.Uint64(data[48:]) + mmapds.RecordSize
	binary.LittleEndian.PutUint32(data[off+36:], 64)
	sum := sha256.Sum256(data[:len(data)-mmapds.HashSize])
	copy(data[len(data)-mmapds.HashSize:], sum[:])
	if err := os.WriteFile(badPlan, data, 0o644); err != nil {
		t.Fatal(err)
	}
	held := t.TempDir() // already holds a run
	if err := os.WriteFile(filepath.Join(held, rawlog.ManifestName), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A directory this process cannot create files in: mode bits do not stop root, sysfs does.
	readOnly := filepath.Join(t.TempDir(), "ro")
	if os.Geteuid() == 0 {
		readOnly = "/sys/llmbench-replay-test/run"
	} else if err := os.Mkdir(readOnly, 0o555); err != nil {
		t.Fatal(err)
	}
	logsOnly := t.TempDir() // a run's logs without its run.json
	if err := os.WriteFile(filepath.Join(logsOnly, "worker-000.rawlog"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	notDir := filepath.Join(t.TempDir(), "file")
	os.WriteFile(notDir, nil, 0o644)
	env := func(string) string { return "" }
	for _, c := range []struct {
		name   string
		plan   string
		url    string
		dir    string
		exists bool // the directory exists before the run
		want   string
		extra  []string
	}{
		{"output dir holds a run", plan, "http://127.0.0.1:1", held, true, "already holds a run", nil},
		{"read-only output dir", plan, "http://127.0.0.1:1", readOnly, false, "cannot create files in", nil},
		{"output dir under a file", plan, "http://127.0.0.1:1", filepath.Join(notDir, "run"), false, "not a directory", nil},
		{"credentials in the URL", plan, "http://user:sk-pass@127.0.0.1:1", filepath.Join(t.TempDir(), "run"), false, "credentials in URLs are not supported", nil},
		{"record index out of range", badPlan, "http://127.0.0.1:1", filepath.Join(t.TempDir(), "run"), false, badPlan + ": not a valid plan file: record 1 has index 64", nil},
		{"output dir holds logs without run.json", plan, "http://127.0.0.1:1", logsOnly, true, "already holds a run (worker-000.rawlog, without run.json)", nil},
		{"start-at in 2099", plan, "http://127.0.0.1:1", filepath.Join(t.TempDir(), "run"), false, "more than the 24h0m0s a start may be ahead", []string{"--start-at", "2099-01-01T00:00:00Z"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.dir == readOnly && os.Geteuid() == 0 {
				if _, err := os.Stat("/sys"); err != nil {
					t.Skip("no /sys")
				}
			}
			var before []os.DirEntry
			if c.exists {
				before, _ = os.ReadDir(c.dir)
			}
			var stderr bytes.Buffer
			code := run(append([]string{"replay", "--plan", c.plan, "--url", c.url, "--output-dir", c.dir, "--no-gpu-telemetry"}, c.extra...), &stderr, env)
			out := stderr.String()
			if code != 2 || !strings.Contains(out, c.want) || strings.Count(out, "\n") != 1 || strings.Contains(out, "sk-pass") {
				t.Fatalf("exit %d, stderr %q; want 2 and one line with %q", code, out, c.want)
			}
			if !c.exists {
				if _, err := os.Stat(c.dir); err == nil {
					t.Fatalf("%s was created", c.dir)
				}
				return
			}
			if after, _ := os.ReadDir(c.dir); len(after) != len(before) {
				t.Fatalf("%s changed: %d entries, had %d", c.dir, len(after), len(before))
			}
		})
	}
}

// The coordinator killed with SIGKILL mid-run: its workers notice (stdin EOF), stop sending,
// let in-flight requests finish within the grace period, and close their logs with not_sent
// records and a footer. run.json still says running, and analyze reports the run as crashed
// with never-sent requests as not_sent, none lost.
func TestCoordinatorKilled(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < 5; i++ {
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n")
			w.(http.Flusher).Flush()
			time.Sleep(20 * time.Millisecond)
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	const n = 300
	plan := writePlan(t, n, 10*time.Millisecond)
	dir := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(os.Args[0], "--plan", plan, "--url", srv.URL, "--output-dir", dir, "--workers", "2", "--no-pin",
		"--benchmark-grace-period", "10", "--no-gpu-telemetry")
	cmd.Env = append(os.Environ(), "LLMBENCH_TEST_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var m *rawlog.Manifest
	for i := 0; ; i++ {
		var err error
		if m, err = rawlog.ReadManifest(dir); err == nil && m.StartUnixNs != 0 && time.Now().UnixNano() > m.StartUnixNs+int64(400*time.Millisecond) {
			break
		}
		if i > 2000 {
			cmd.Process.Kill()
			t.Fatalf("run did not start: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	// The workers, now orphans, finish on their own: wait for their footers.
	for _, w := range m.Workers {
		path := filepath.Join(dir, w.Log)
		for i := 0; ; i++ {
			if s, err := rawlog.Summarize(path); err == nil && s.Footer != nil {
				if s.Footer.Status != rawlog.StatusFailed || s.Requests != w.Planned {
					t.Fatalf("%s: footer %+v, %d requests of %d", w.Log, s.Footer, s.Requests, w.Planned)
				}
				break
			}
			if i > 3000 {
				syscall.Kill(w.PID, syscall.SIGKILL)
				t.Fatalf("%s: no footer 30 s after the coordinator died; stderr %s", w.Log, stderr.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if back, err := rawlog.ReadManifest(dir); err != nil || back.Status != rawlog.StatusRunning {
		t.Fatalf("run.json %+v %v", back, err)
	}
	if !strings.Contains(stderr.String(), "coordinator gone") {
		t.Fatalf("stderr %q", stderr.String())
	}
	s, err := analyze.Analyze(analyze.Options{RunDirs: []string{dir}, UseServerTokenCount: true, TempDir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Counts
	if c.Lost != 0 || c.NotSent == 0 || c.Valid == 0 || c.Valid+c.Errors != n {
		t.Fatalf("analyze counts %+v", c)
	}
	crashed := false
	for _, note := range s.Notes {
		crashed = crashed || strings.Contains(note, "the run crashed")
	}
	if !crashed {
		t.Fatalf("notes %q do not say the run crashed", s.Notes)
	}
}

// TestValidateIntoHeldDirectory: --validate into a directory that holds a run is refused
// before the validation sends anything, and the run's own generator validation file is left
// as it was (it was overwritten by the new validation, then the run refused).
func TestValidateIntoHeldDirectory(t *testing.T) {
	plan := writePlan(t, 4, 0)
	held := t.TempDir()
	old := []byte(`{"the":"old run's evidence"}` + "\n")
	for name, b := range map[string][]byte{rawlog.ManifestName: []byte("{}\n"), benchclaim.GeneratorValidationName: old} {
		if err := os.WriteFile(filepath.Join(held, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var stderr bytes.Buffer
	code := run([]string{"replay", "--plan", plan, "--url", "http://127.0.0.1:1", "--output-dir", held, "--no-gpu-telemetry", "--no-pin", "--validate"}, &stderr, func(string) string { return "" })
	if code != 2 || !strings.Contains(stderr.String(), "already holds a run") || strings.Count(stderr.String(), "\n") != 1 {
		t.Fatalf("exit %d, stderr %q; want 2 and one line: the directory holds a run", code, stderr.String())
	}
	if b, _ := os.ReadFile(filepath.Join(held, benchclaim.GeneratorValidationName)); !bytes.Equal(b, old) {
		t.Fatalf("the held run's %s was replaced: %q", benchclaim.GeneratorValidationName, b)
	}
}
