package replay

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/llmbench/llmbench/rawlog"
)

// TestCheckOutputDir: a directory can take a new run when it is absent, empty or holds no
// run file; one holding any run file (a crashed run's included) is refused, naming it.
func TestCheckOutputDir(t *testing.T) {
	write := func(dir, name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	manifest := func(status string) string {
		return `{"format_version":1,"plan_hash":"` + strings.Repeat("ab", 32) + `","status":"` + status + `"}`
	}
	for _, c := range []struct {
		name  string
		files map[string]string
		want  string // "" = accepted
	}{
		{"absent", nil, ""},
		{"empty", map[string]string{}, ""},
		{"unrelated files and a profile's plan", map[string]string{"notes.txt": "x", "plan.llmplan": "x", "profile_export_aiperf.json": "{}"}, ""},
		{"crashed run", map[string]string{rawlog.ManifestName: manifest(rawlog.StatusRunning), "worker-000.rawlog": ""}, "status running: a run still running, or one that crashed"},
		{"finished run", map[string]string{rawlog.ManifestName: manifest(rawlog.StatusComplete)}, "status complete"},
		{"damaged run.json", map[string]string{rawlog.ManifestName: "{"}, "run.json, unreadable"},
		{"logs without run.json", map[string]string{"worker-001.rawlog": "", "worker-000.rawlog": ""}, "(worker-000.rawlog, worker-001.rawlog, without run.json)"},
		{"recovery log", map[string]string{"worker-003.recovered.rawlog": ""}, "worker-003.recovered.rawlog"},
		{"server metrics only", map[string]string{"server_metrics.jsonl": ""}, "server_metrics.jsonl"},
		{"telemetry only", map[string]string{TelemetryLogName: ""}, TelemetryLogName},
		{"a crash while run.json was rewritten", map[string]string{rawlog.ManifestName + ".tmp": ""}, "run.json.tmp"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			if c.files != nil {
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				for n, b := range c.files {
					write(dir, n, b)
				}
			}
			err := checkOutputDir(dir)
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "already holds a run") || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v; want it refused with %q", err, c.want)
			}
		})
	}
	f := filepath.Join(t.TempDir(), "file")
	write(filepath.Dir(f), "file", "x")
	if err := checkOutputDir(f); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("a file as output-dir: %v", err)
	}
}

// TestLockRunDirOnce: of several replays locking one directory at the same moment, exactly
// one gets it; the others fail having written nothing (the directory holds the winner's
// run.json alone), whether or not the directory existed before.
func TestLockRunDirOnce(t *testing.T) {
	plan := singleTurn(8, job{N: 1}, nil).write(t, t.TempDir())
	for _, exists := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "shared", "run")
		if exists {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		const n = 8
		rs := make([]*Replay, n)
		for i := range rs {
			o := testOptions(t, plan, "http://127.0.0.1:1")
			o.OutputDir = dir
			r, err := New(o)
			if err != nil {
				t.Fatal(err)
			}
			defer r.plan.Close()
			rs[i] = r
		}
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, r := range rs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs[i] = r.lockRunDir()
			}()
		}
		close(start)
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !strings.Contains(err.Error(), "another run took it") && !strings.Contains(err.Error(), "already holds a run"):
				t.Errorf("exists=%v: loser's error %v", exists, err)
			}
		}
		if won != 1 {
			t.Fatalf("exists=%v: %d replays locked the directory, want 1: %v", exists, won, errs)
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 || entries[0].Name() != rawlog.ManifestName {
			t.Fatalf("exists=%v: the directory holds %v, want the winner's run.json alone", exists, entries)
		}
		if m, err := rawlog.ReadManifest(dir); err != nil || m.Status != rawlog.StatusRunning {
			t.Fatalf("exists=%v: the winner's run.json: %v %+v", exists, err, m)
		}
	}
}
