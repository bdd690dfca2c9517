//go:build unix

package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/mmapds"
)

// A plan whose concurrency the open-file limit cannot carry, even over as many workers as
// replay would start (80 files: 16 streams a process), is bad input: replay says so in one
// line, with the command that raises the limit, exits 2 and creates nothing. (The issue:
// concurrency 5000 under `ulimit -n 1024` filed thousands of "too many open files" as the
// server's transport errors; now that runs on 6 workers, replay/fdlimit_test.go.)
func TestOpenFileLimitIsBadInput(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh to lower the limit with")
	}
	path := filepath.Join(t.TempDir(), "c.plan")
	w, err := mmapds.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5000; i++ {
		r := mmapds.Record{SendOffsetNs: mmapds.NoSendOffset, DelayNs: -1, Session: uint32(i), Phase: mmapds.PhaseProfile}
		if err := w.Add(r, []byte(`{"stream":true}`)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Close(&mmapds.Meta{Endpoint: "chat", Paths: []string{"/v1/chat/completions"}, Method: "POST", Streaming: true, Concurrency: 5000}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	// ulimit -n sets the soft and the hard limit: replay cannot raise it itself.
	cmd := exec.Command(sh, "-c", `ulimit -n 80 && exec "$0" "$@"`, os.Args[0],
		"--plan", path, "--url", "http://127.0.0.1:9", "--output-dir", dir, "--workers", "1", "--no-pin", "--no-gpu-telemetry")
	cmd.Env = append(os.Environ(), "LLMBENCH_TEST_MAIN=1")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("exit %v, want 2: %s", err, out)
	}
	msg := strings.TrimSpace(string(out))
	if strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "needs about 5064 open files per worker, and the limit is 80") ||
		!strings.Contains(msg, "ulimit -Hn 5064") {
		t.Fatalf("message: %s", out)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("run directory created: %v", err)
	}
}
