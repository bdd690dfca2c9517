package validate

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench/llmbench/analyze/benchclaim"
	"github.com/llmbench/llmbench/replay"
	"github.com/llmbench/llmbench/tokenizer"
)

// TestMain makes the test binary act as replay's worker when started as one, so the
// validation replays in-process.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == replay.WorkerArg {
		os.Exit(replay.WorkerMain(os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

// TestBefore: the validation replays the plan's bounded share against the mock, and its
// file is written only once the run locks its directory, with the outcome in one line;
// an output directory that holds a run already is refused before anything is sent.
func TestBefore(t *testing.T) {
	dir := t.TempDir()
	plan := filepath.Join(dir, "p.plan")
	writePlan(t, plan, 6, 1, 0, 4)
	runDir := filepath.Join(dir, "run")
	ro := &replay.Options{Plan: plan, URLs: []string{"http://127.0.0.1:1"}, OutputDir: runDir, Workers: 1, NoPin: true,
		RequestTimeout: 10 * time.Second, GracePeriod: time.Second, GPUSampleInterval: -1, NoServerMetrics: true, Client: replay.ClientNet}
	var stderr bytes.Buffer
	o := Options{TTFT: 2 * time.Millisecond, ITL: time.Millisecond, Requests: 4, Duration: 5 * time.Second, Tokenizers: tokenizer.LoadOptions{}}
	if err := Before(o, ro, &stderr); err != nil {
		t.Fatalf("Before: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "generator validation: replaying 4 profile requests (at most 5s) against a mock server (TTFT 2ms, ITL 1ms)") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	path := filepath.Join(runDir, benchclaim.GeneratorValidationName)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the file was written before the run locked the directory: %v", err)
	}
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if ro.DirLocked == nil {
		t.Fatal("no DirLocked hook")
	}
	if err := ro.DirLocked(runDir); err != nil {
		t.Fatal(err)
	}
	g, err := benchclaim.ReadGeneratorValidation(path)
	if err != nil {
		t.Fatal(err)
	}
	if g.Bound.Requests != 4 || g.Workers != 1 || g.Mock.TTFTMs != 2 || g.Figures[benchclaim.FigRequests] != 4 {
		t.Errorf("validation %+v", g)
	}
	if !strings.Contains(stderr.String(), "generator validation ") || !strings.Contains(stderr.String(), ": "+path) {
		t.Errorf("no outcome line naming %s:\n%s", path, stderr.String())
	}

	// A directory holding a run: refused, nothing replayed.
	if err := os.WriteFile(filepath.Join(runDir, "run.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	ro2 := *ro
	ro2.DirLocked = nil
	if err := Before(o, &ro2, &stderr); err == nil || strings.Contains(stderr.String(), "replaying") {
		t.Errorf("a directory holding a run: %v, stderr %q", err, stderr.String())
	}
}
