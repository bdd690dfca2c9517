package e2e_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/llmbench/llmbench/rawlog"
)

// startAll starts every command at once and waits for all: exit statuses and stderr.
func startAll(t *testing.T, cmds ...[]string) ([]int, []string) {
	t.Helper()
	codes, errs := make([]int, len(cmds)), make([]string, len(cmds))
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i, c := range cmds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
			defer cancel()
			cmd := exec.CommandContext(ctx, c[0], c[1:]...)
			var eb bytes.Buffer
			cmd.Stderr = &eb
			<-gate
			err := cmd.Run()
			var ee *exec.ExitError
			switch {
			case err == nil:
			case errors.As(err, &ee) && ee.ExitCode() >= 0:
				codes[i] = ee.ExitCode()
			default:
				codes[i] = -1
				eb.WriteString(err.Error())
			}
			errs[i] = eb.String()
		}()
	}
	close(gate)
	wg.Wait()
	return codes, errs
}

// TestTwoReplaysOneOutputDir: two replays started together into one --output-dir (the
// issue's reproduction, a few times over, with the directory absent and existing empty):
// exactly one runs and exits 0, every one of the 200 planned requests completed once in its
// logs; the other exits 2 with one line and writes nothing, so the directory holds one run.
func TestTwoReplaysOneOutputDir(t *testing.T) {
	srv := startMock(t, "--ttft", "1ms", "--itl", "0s")
	dir := t.TempDir()
	planPath := compile(t, dir, "--model", "mock", "--tokenizer", "builtin", "--endpoint-type", "chat",
		"--isl", "16", "--osl", "4", "--concurrency", "4", "--request-count", "200", "--random-seed", "1")
	for trial := 0; trial < 4; trial++ {
		runDir := filepath.Join(dir, "runs", "trial"+string(rune('a'+trial)))
		if trial%2 == 1 {
			if err := os.MkdirAll(runDir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		args := []string{bin.replay, "--plan", planPath, "--url", srv.URL, "--output-dir", runDir, "--no-pin", "--no-gpu-telemetry", "--workers", "2", "--ui-type", "none"}
		codes, errs := startAll(t, args, args)
		winner, loser := 0, 1
		if codes[0] != 0 {
			winner, loser = 1, 0
		}
		if codes[winner] != 0 || codes[loser] != 2 {
			t.Fatalf("trial %d: exits %v, want one 0 and one 2\n%s\n%s", trial, codes, errs[0], errs[1])
		}
		if lines := strings.Split(strings.TrimSpace(errs[loser]), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "output-dir "+runDir) {
			t.Errorf("trial %d: the loser said %q; want one line naming the directory", trial, errs[loser])
		}
		m, reqs := readRaw(t, runDir, planPath)
		if m.Status != rawlog.StatusComplete || m.Counts.Planned != 200 || m.Counts.Completed != 200 {
			t.Fatalf("trial %d: run.json %s %+v", trial, m.Status, m.Counts)
		}
		for i, q := range reqs {
			if int(q.index) != i || q.status != 200 {
				t.Fatalf("trial %d: request %d: index %d status %d (logged twice, or by two runs?)", trial, i, q.index, q.status)
			}
		}
		entries, _ := os.ReadDir(runDir)
		for _, e := range entries {
			if n := e.Name(); n != "run.json" && n != "worker-000.rawlog" && n != "worker-001.rawlog" && n != "server_metrics.jsonl" {
				t.Errorf("trial %d: unexpected %s in the run directory", trial, n)
			}
		}
	}
}

// TestTwoProfilesOneOutputDir: two profiles given one --output-dir at once each get their own
// artifact directory (the name, then the name with -2) and both complete; neither writes
// into the other's.
func TestTwoProfilesOneOutputDir(t *testing.T) {
	srv := startMock(t, "--ttft", "1ms", "--itl", "0s")
	base := filepath.Join(t.TempDir(), "art")
	args := []string{bin.profile, "--model", "mock", "--tokenizer", "builtin", "--endpoint-type", "chat", "--url", srv.URL,
		"--isl", "16", "--osl", "4", "--concurrency", "2", "--request-count", "40", "--no-pin", "--ui-type", "none", "--output-dir", base}
	codes, errs := startAll(t, args, args)
	if codes[0] != 0 || codes[1] != 0 {
		t.Fatalf("exits %v\n%s\n%s", codes, errs[0], errs[1])
	}
	seen := map[string]bool{}
	for _, e := range errs {
		i := strings.Index(e, "profile: artifact directory ")
		if i < 0 {
			t.Fatalf("no artifact directory line:\n%s", e)
		}
		d, _, _ := strings.Cut(e[i+len("profile: artifact directory "):], "\n")
		seen[d] = true
	}
	if !seen[base] || !seen[base+"-2"] {
		t.Fatalf("artifact directories %v, want %s and %s-2", seen, base, base)
	}
	for d := range seen {
		m, err := rawlog.ReadManifest(d)
		if err != nil || m.Status != rawlog.StatusComplete || m.Counts.Completed != 40 {
			t.Errorf("%s: %v %+v", d, err, m)
		}
	}
}
