package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// snapshot is every file under dir and its bytes.
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		out[path] = b
		return nil
	})
	return out
}

// TestOutputsNeverReplaceInputs: analyze refuses (exit 2, one line) any output that would
// replace an input of the analysis — a run's own file by its name, wherever it is, the plan,
// a --plan file — and writes nothing then: the run directory is byte for byte as it was, and
// no export appears. An --html whose directory is missing is refused before anything is
// written, and an --output-dir created for an input analyze refuses is removed again.
func TestOutputsNeverReplaceInputs(t *testing.T) {
	dir := buildRun(t, 5, 0)
	plan := filepath.Join(dir, "plan.plan")
	elsewhere := t.TempDir()
	otherPlan := filepath.Join(elsewhere, "copy.plan")
	b, _ := os.ReadFile(plan)
	os.WriteFile(otherPlan, b, 0o644)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"--html over run.json", []string{"--html", filepath.Join(dir, "run.json")}, "run.json is the name of a run's own file"},
		{"--html over a worker log", []string{"--html", filepath.Join(dir, "worker-000.rawlog")}, "worker-000.rawlog is the name of a run's own file"},
		{"--html over another run's run.json", []string{"--html", filepath.Join(elsewhere, "run.json")}, "run.json is the name of a run's own file"},
		{"--html named like a recovery log", []string{"--html", filepath.Join(elsewhere, "worker-001.recovered.rawlog")}, "is the name of a run's own file"},
		{"a prefix that names server_metrics.jsonl", []string{"--profile-export-prefix", "server_metrics"}, "server_metrics.jsonl is the name of a run's own file"},
		{"--html over the run's plan", []string{"--html", plan}, "that is the plan of the run, an input of this analysis"},
		{"--html over the run's plan, spelled otherwise", []string{"--html", filepath.Join(dir, ".", "..", filepath.Base(dir), "plan.plan")}, "an input of this analysis"},
		{"--html over --plan", []string{"--plan", otherPlan, "--html", otherPlan}, "that is the --plan file"},
		{"--html is a directory", []string{"--html", elsewhere}, "is a directory"},
		{"--html in a missing directory", []string{"--html", filepath.Join(elsewhere, "no", "such", "r.html")}, "does not exist"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := snapshot(t, dir)
			otherBefore := snapshot(t, elsewhere)
			code, _, stderr := runCmd(append(c.args, dir)...)
			if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
				t.Fatalf("exit %d, stderr %q; want exit 2 and one line with %q", code, stderr, c.want)
			}
			after := snapshot(t, dir)
			if len(after) != len(before) {
				t.Errorf("files in the run directory: %d before, %d after", len(before), len(after))
			}
			for p, b := range before {
				if !bytes.Equal(after[p], b) {
					t.Errorf("%s changed", p)
				}
			}
			if got := snapshot(t, elsewhere); len(got) != len(otherBefore) {
				t.Errorf("files elsewhere: %d before, %d after", len(otherBefore), len(got))
			}
		})
	}
	// An --output-dir made for a run analyze then refuses is not left behind.
	out := filepath.Join(t.TempDir(), "new", "nested")
	empty := t.TempDir()
	if code, _, stderr := runCmd("--output-dir", out, empty); code != 2 {
		t.Fatalf("an empty run directory: exit %d %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Dir(out)); !os.IsNotExist(err) {
		t.Errorf("the refused analysis left %s behind (%v)", filepath.Dir(out), err)
	}
	// And the outputs are still written where they belong.
	if code, _, stderr := runCmd("--html", filepath.Join(elsewhere, "r.html"), dir); code != 0 {
		t.Fatalf("exit %d %s", code, stderr)
	}
}
