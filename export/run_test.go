package export

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/analyze/judge"
	"github.com/llmbench/llmbench/report"
	"github.com/llmbench/llmbench/tokenizer"
)

// fixtures are report's mock runs (report/testdata/mkfixtures.sh).
const fixtures = "../report/testdata/runs"

// copyFixture copies a fixture run and its plan into root, run.json pointed at the copy.
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
		if filepath.Base(f) == "run.json" {
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			m["plan_path"] = filepath.Join(dst, plan)
			if b, err = json.MarshalIndent(m, "", "  "); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dst, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func builtin(string) (*tokenizer.Tokenizer, error) { return tokenizer.Builtin() }

// options are Run's options for dir with analyze's defaults.
func options(dir string, stdout, stderr *bytes.Buffer) Options {
	return Options{RunDirs: []string{dir}, Analysis: analyze.Options{MaxScheduleLag: 1e12, MaxWorkerCPU: 1e3}, ExportPrefix: DefaultExportPrefix,
		Level: LevelRecords, MaxErrorRate: 0.1, LoadTokenizer: builtin, Stdout: stdout, Stderr: stderr}
}

// TestRunExitStatus: Run writes the exports and the page into the run directory and
// returns the summary; a gate that does not hold is ExitGate and its line says FAIL; Quiet
// prints nothing but the failure, on stderr.
func TestRunExitStatus(t *testing.T) {
	dir := copyFixture(t, t.TempDir(), "rate-a", "rate.llmplan")
	pass, err := judge.ParseGate("request_latency.p99<100000")
	if err != nil {
		t.Fatal(err)
	}
	fail, err := judge.ParseGate("request_latency.p99<0.001")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		gates []judge.Gate
		quiet bool
		code  int
	}{
		{"gates hold", []judge.Gate{pass}, false, ExitOK},
		{"a gate fails", []judge.Gate{pass, fail}, false, ExitGate},
		{"quiet", []judge.Gate{fail}, true, ExitGate},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			o := options(dir, &out, &errb)
			o.Gates, o.Quiet = c.gates, c.quiet
			s, code := Run(o)
			if code != c.code || s == nil {
				t.Fatalf("exit %d (want %d), summary %v\nstdout:\n%s\nstderr:\n%s", code, c.code, s != nil, out.String(), errb.String())
			}
			for _, f := range []string{"profile_export_aiperf.json", "profile_export_aiperf.csv", "profile_export.jsonl", FileReport} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Error(err)
				}
			}
			failLine := "Gate request_latency.p99<0.001: FAIL"
			switch {
			case c.quiet && (out.Len() != 0 || !strings.Contains(errb.String(), failLine)):
				t.Errorf("quiet: stdout %q, stderr %q", out.String(), errb.String())
			case !c.quiet && c.code == ExitGate && !strings.Contains(out.String(), failLine):
				t.Errorf("stdout lacks %q:\n%s", failLine, out.String())
			case !c.quiet && !strings.Contains(out.String(), "Exports in "+dir):
				t.Errorf("stdout:\n%s", out.String())
			}
		})
	}
}

// TestRunNeverReplacesInputs: an output path that is an input of the analysis (the plan, a
// run's own file) is bad input before anything is written, and the output folder Run made
// for it is removed.
func TestRunNeverReplacesInputs(t *testing.T) {
	root := t.TempDir()
	dir := copyFixture(t, root, "rate-a", "rate.llmplan")
	for _, c := range []struct {
		name, html, want string
	}{
		{"a run's own file", filepath.Join(dir, "run.json"), "run.json is the name of a run's own file"},
		{"the plan", filepath.Join(dir, "rate.llmplan"), "an input of this analysis"},
		// Files this analysis does not read, but that hold a plan or a raw log by their
		// bytes (a copied run's own plan, a log kept under another name): never replaced.
		{"another plan", spare(t, root, filepath.Join(dir, "rate.llmplan"), "plan.llmplan"), "holds a plan"},
		{"a renamed raw log", spare(t, root, filepath.Join(dir, "worker-000.rawlog"), "w0.bak"), "holds a raw log"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			o := options(dir, &out, &errb)
			o.OutputDir, o.HTML = filepath.Join(root, "new", "out"), c.html
			o.Analysis.PlanPath = filepath.Join(dir, "rate.llmplan")
			if s, code := Run(o); code != ExitBadInput || s != nil || !strings.Contains(errb.String(), c.want) || strings.Count(errb.String(), "\n") != 1 {
				t.Fatalf("exit %d, stderr %q: want %d and one line with %q", code, errb.String(), ExitBadInput, c.want)
			}
			if _, err := os.Stat(filepath.Join(root, "new")); !os.IsNotExist(err) {
				t.Errorf("the output folder was left behind: %v", err)
			}
		})
	}
}

// spare copies src to root/other/name and returns its path.
func spare(t *testing.T, root, src, name string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, "other", name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCompare: two runs of one plan at 20 and 25 ms TTFT; a 10% regression threshold fails
// the comparison, saying so on stderr, and compare.json and compare.html are written.
func TestCompare(t *testing.T) {
	root := t.TempDir()
	a := copyFixture(t, root, "rate-a", "rate.llmplan")
	b := copyFixture(t, root, "rate-b", "rate.llmplan")
	th, err := report.ParseThreshold("time_to_first_token:10")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "cmp")
	var stdout, stderr bytes.Buffer
	code := Compare(CompareOptions{Dirs: []string{a, b}, OutputDir: out, LoadTokenizer: builtin, Stdout: &stdout, Stderr: &stderr,
		Compare: report.CompareOptions{Alpha: 0.05, MinEffectPct: report.DefaultMinEffectPct, MaxErrorRate: 0.1,
			MaxCompletedDropPct: report.DefaultMaxCompletedDropPct, FailOn: []report.Threshold{th}}})
	if code != ExitGate || !strings.Contains(stderr.String(), "analyze compare: REGRESSION: time_to_first_token p50 of rate-b") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	for _, f := range []string{FileCompareJSON, FileCompareHTML} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
}

// TestRunIncompleteFails: a run that did not complete whole (run.json says it failed, was
// interrupted or is still running, a worker did not finish) fails the analysis even when
// every request it logged succeeded and every gate holds, and one line on stderr says why:
// its numbers cover only part of what was planned (judge.Health, the rule the multi-run
// verdicts use). A whole run still passes.
func TestRunIncompleteFails(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(m map[string]any)
		want string // on stderr; "" for a pass
	}{
		{"complete", func(map[string]any) {}, ""},
		{"failed, a worker killed after its last request", func(m map[string]any) {
			m["status"] = "failed"
			m["workers"].([]any)[1].(map[string]any)["status"] = "killed"
		}, `analyze: RUN INCOMPLETE: the run did not complete (run.json status "failed")`},
		{"interrupted", func(m map[string]any) { m["status"] = "interrupted" }, `analyze: RUN INCOMPLETE: the run was interrupted`},
		{"coordinator died", func(m map[string]any) { m["status"] = "running" }, `analyze: RUN INCOMPLETE: the run crashed`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyFixture(t, t.TempDir(), "rate-a", "rate.llmplan")
			path := filepath.Join(dir, "run.json")
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			c.edit(m)
			if b, err = json.MarshalIndent(m, "", "  "); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			var out, errb bytes.Buffer
			o := options(dir, &out, &errb)
			o.MaxErrorRate = 1 // the user's bound allows every request to fail: still not a whole run
			_, code := Run(o)
			want := ExitOK
			if c.want != "" {
				want = ExitGate
			}
			if code != want || !strings.Contains(errb.String(), c.want) || (c.want == "" && strings.Contains(errb.String(), "INCOMPLETE")) {
				t.Fatalf("exit %d (want %d), stderr %q (want %q)", code, want, errb.String(), c.want)
			}
			if c.want != "" && strings.Count(errb.String(), "RUN INCOMPLETE") != 1 {
				t.Errorf("want one line: %q", errb.String())
			}
		})
	}
}
