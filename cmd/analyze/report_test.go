package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportHTML: analyze writes report.html into the run directory, --html elsewhere,
// --no-html none.
func TestReportHTML(t *testing.T) {
	dir := buildRun(t, 10, 0)
	if code, out, errs := runCmd(dir); code != 0 || !strings.Contains(out, "Report: "+filepath.Join(dir, "report.html")) {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil || !strings.Contains(string(page), `<script id="data" type="application/json">`) {
		t.Fatalf("report.html: %v", err)
	}
	other := filepath.Join(t.TempDir(), "r.html")
	if code, _, errs := runCmd("--html", other, dir); code != 0 {
		t.Fatalf("--html: exit %d %s", code, errs)
	}
	if _, err := os.Stat(other); err != nil {
		t.Error(err)
	}
	dir2 := buildRun(t, 10, 0)
	if code, out, errs := runCmd("--no-html", dir2); code != 0 || strings.Contains(out, "Report:") {
		t.Fatalf("--no-html: exit %d\n%s\n%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(dir2, "report.html")); !os.IsNotExist(err) {
		t.Errorf("--no-html wrote report.html (%v)", err)
	}
	if code, _, errs := runCmd("--html", filepath.Join(t.TempDir(), "no", "such", "dir", "r.html"), dir2); code != 2 || !strings.Contains(errs, "--html") {
		t.Errorf("--html into a missing directory: exit %d %q", code, errs)
	}
}

// fixtures are report's mock runs (report/testdata/mkfixtures.sh).
const fixtures = "../../report/testdata/runs"

// copyFixture copies a fixture run and its plan into a temporary folder, the plan where
// --plan finds it (run.json names the path it had when the run was made).
func copyFixture(t *testing.T, root, name, plan string) string {
	t.Helper()
	dst := filepath.Join(root, name)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(fixtures, name, "*"))
	if err != nil || len(files) == 0 {
		t.Fatal(err, files)
	}
	for _, f := range append(files, filepath.Join(fixtures, plan)) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		to := filepath.Join(dst, filepath.Base(f))
		if filepath.Ext(f) == ".json" && filepath.Base(f) == "run.json" {
			// Point run.json at the copied plan.
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			m["plan_path"] = filepath.Join(dst, plan)
			if b, err = json.MarshalIndent(m, "", "  "); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestCompareCommand: TTFT 20 ms against 25 ms is significant and, with
// --fail-on-regression, exits 1; two runs at 20 ms are not. The fixtures' mockllm failed 5%
// of the requests: --max-error-rate 0.1 allows them (TestCompareFailedRuns covers failures).
func TestCompareCommand(t *testing.T) {
	root := t.TempDir()
	a := copyFixture(t, root, "rate-a", "rate.llmplan")
	a2 := copyFixture(t, root, "rate-a2", "rate.llmplan")
	b := copyFixture(t, root, "rate-b", "rate.llmplan")
	out := filepath.Join(root, "cmp")
	code, stdout, stderr := runCmd("compare", "--max-error-rate", "0.1", "--output-dir", out, "--fail-on-regression", "time_to_first_token:10", a, b)
	if code != 1 || !strings.Contains(stderr, "REGRESSION: time_to_first_token p50 of rate-b") {
		t.Fatalf("20 vs 25 ms: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "time_to_first_token (ms) rate-b:") || !strings.Contains(stdout, "significant regression: +") ||
		!strings.Contains(stdout, "beyond the --fail-on-regression threshold of 10 %") {
		t.Errorf("stdout:\n%s", stdout)
	}
	var c struct {
		Version     int   `json:"compare_version"`
		Regressions []any `json:"regressions"`
	}
	j, err := os.ReadFile(filepath.Join(out, "compare.json"))
	if err != nil || json.Unmarshal(j, &c) != nil || c.Version != 1 || len(c.Regressions) != 1 {
		t.Errorf("compare.json: %v %+v", err, c)
	}
	if _, err := os.Stat(filepath.Join(out, "compare.html")); err != nil {
		t.Error(err)
	}
	code, stdout, stderr = runCmd("compare", "--max-error-rate", "0.1", "--output-dir", out, "--fail-on-regression", "time_to_first_token:10", "--no-html", a, a2)
	if code != 0 || strings.Contains(stdout, "significant regression") || !strings.Contains(stdout, "no significant change: ") {
		t.Errorf("20 vs 20 ms: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"compare", a}, "at least two run directories"},
		{[]string{"compare", "--fail-on-regression", "ttft", a, b}, "--fail-on-regression: regression \"ttft\""},
		{[]string{"compare", "--alpha", "2", a, b}, "--alpha 2"},
		{[]string{"compare", "--alpha", "nan", a, b}, "--alpha NaN: want a level between 0 and 1"}, // issue 24: NaN passed
		{[]string{"compare", "--min-effect", "inf", a, b}, "--min-effect +Inf: want a positive finite percentage"},
		{[]string{"compare", a, filepath.Join(root, "missing")}, "missing"},
	} {
		if code, _, stderr := runCmd(tc.args...); code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit %d %q, want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	// A folder of runs: its subfolders holding a run.json, by name.
	if code, stdout, stderr := runCmd("compare", "--max-error-rate", "0.1", "--output-dir", out, "--no-html", root); code != 0 || !strings.Contains(stdout, "Run rate-a2:") {
		t.Errorf("folder of runs: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
