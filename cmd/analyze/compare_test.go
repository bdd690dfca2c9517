package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/rawlog"
)

// namedRun is buildRun's run moved to root/name, so a comparison's runs have their names.
func namedRun(t *testing.T, root, name string, n, errEvery int, edit func(m *rawlog.Manifest)) string {
	t.Helper()
	src := buildRun(t, n, errEvery)
	dst := filepath.Join(root, name)
	if err := os.Rename(src, dst); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		m, err := rawlog.ReadManifest(dst)
		if err != nil {
			t.Fatal(err)
		}
		edit(m)
		if err := rawlog.WriteManifest(dst, m); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestCompareFailedRuns: a comparison that holds a failed run (every request failed, some
// beyond --max-error-rate, a crash, an interruption), the baseline too, exits 1 with one
// line saying which run and why, lists it as a regression in compare.json, and never
// prints "Differences" with nothing under it. Failures within the user's bound pass.
func TestCompareFailedRuns(t *testing.T) {
	root := t.TempDir()
	good := namedRun(t, root, "good", 20, 0, nil)
	good2 := namedRun(t, root, "good2", 20, 0, nil)
	allFailed := namedRun(t, root, "all-failed", 20, 1, nil)
	someFailed := namedRun(t, root, "some-failed", 20, 10, nil)
	crashed := namedRun(t, root, "crashed", 20, 0, func(m *rawlog.Manifest) { m.Status = rawlog.StatusRunning })
	interrupted := namedRun(t, root, "interrupted", 20, 0, func(m *rawlog.Manifest) { m.Status = rawlog.StatusInterrupted })
	short := namedRun(t, root, "short", 10, 0, nil)
	cases := []struct {
		name   string
		args   []string
		code   int
		stderr string // substring of the one REGRESSION line
		stdout string // substring
	}{
		{"every request of the candidate failed", []string{"--fail-on-regression", "time_to_first_token:10", good, allFailed}, 1,
			"REGRESSION: run all-failed (candidate) failed: 20 of 20 profile requests failed (100.00%", "all-failed: not compared: no successful request"},
		{"without --fail-on-regression too", []string{good, allFailed}, 1, "run all-failed (candidate) failed", "WARNING: run all-failed FAILED"},
		{"every request of the baseline failed", []string{allFailed, good}, 1,
			"REGRESSION: run all-failed (baseline) failed: 20 of 20 profile requests failed", "  none: the baseline all-failed has no successful request"},
		{"failures beyond --max-error-rate", []string{good, someFailed}, 1, "run some-failed (candidate) failed: 2 of 20 profile requests failed (10.00%", ""},
		{"failures within --max-error-rate", []string{"--max-error-rate", "0.1", good, someFailed}, 0, "", "time_to_first_token (ms) some-failed: p50"},
		{"a crashed candidate", []string{good, crashed}, 1, `run crashed (candidate) failed: the run crashed (run.json status is still "running"`,
			"the runs did not all complete (run.json status: good complete, crashed running)"},
		{"an interrupted candidate", []string{good, interrupted}, 1, `the run was interrupted (run.json status "interrupted")`, ""},
		{"different bodies are said", []string{good, short}, 0, "", "the runs sent different request bodies"},
		{"two good runs", []string{good, good2}, 0, "", "time_to_first_token (ms) good2: p50"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "cmp")
			code, stdout, stderr := runCmd(append([]string{"compare", "--output-dir", out}, c.args...)...)
			if code != c.code || !strings.Contains(stderr, c.stderr) || !strings.Contains(stdout, c.stdout) {
				t.Fatalf("exit %d (want %d)\nstdout:\n%s\nstderr:\n%s\nwant stderr ~ %q, stdout ~ %q", code, c.code, stdout, stderr, c.stderr, c.stdout)
			}
			if c.code == 1 && strings.Count(stderr, "REGRESSION") != 1 {
				t.Errorf("want one REGRESSION line:\n%s", stderr)
			}
			if i := strings.Index(stdout, "Differences against"); i < 0 || !strings.HasPrefix(strings.SplitN(stdout[i:], "\n", 3)[1], "  ") {
				t.Errorf("\"Differences\" without a line under it:\n%s", stdout)
			}
			var doc struct {
				Regressions []struct{ Kind, Run, Reason string }
				Runs        []struct{ Problems []string }
			}
			b, err := os.ReadFile(filepath.Join(out, "compare.json"))
			if err != nil || json.Unmarshal(b, &doc) != nil {
				t.Fatalf("compare.json: %v", err)
			}
			if (len(doc.Regressions) > 0) != (c.code == 1) || (c.code == 1 && doc.Regressions[0].Kind != "failed_run") {
				t.Errorf("regressions %+v", doc.Regressions)
			}
		})
	}
	// Bad bounds are bad input.
	for _, args := range [][]string{{"--max-error-rate", "2"}, {"--max-error-rate", "nan"}, {"--max-completed-drop", "0"}} {
		if code, _, stderr := runCmd(append(append([]string{"compare"}, args...), good, good2)...); code != 2 || !strings.Contains(stderr, args[0]) {
			t.Errorf("%v: exit %d %q", args, code, stderr)
		}
	}
}
