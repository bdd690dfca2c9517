package analyze

import (
	"testing"

	"github.com/llmbench/llmbench/rawlog"
)

// Hooks for the external tests (package analyze_test) that judge analysed runs with
// analyze/judge and analyze/benchclaim: they import analyze, so analyze's own tests cannot
// import them, and their tests cannot reach the synthetic runs built here.

// HealthCase is one of TestHealth's runs (judgement_test.go), built and analysed: the bound
// it is judged at, its problems' kinds in order and a substring of their texts.
type HealthCase struct {
	Name    string
	Summary *Summary
	Max     float64
	Kinds   string
	Text    string
}

// HealthCases builds and analyses TestHealth's runs.
func HealthCases(t *testing.T) []HealthCase {
	base := scenario{n: 16, workers: 2, ttft: 20 * ms, itl: 5 * ms, tokens: 4, concurrency: 4, streaming: true, cpuPct: 10}
	manifest := func(edit func(*rawlog.Manifest)) func(*testing.T, string) {
		return func(t *testing.T, dir string) {
			m, err := rawlog.ReadManifest(dir)
			if err != nil {
				t.Fatal(err)
			}
			edit(m)
			if err := rawlog.WriteManifest(dir, m); err != nil {
				t.Fatal(err)
			}
		}
	}
	cases := []struct {
		name  string
		sc    scenario
		edit  func(*testing.T, string)
		max   float64
		kinds string // the problems' kinds, in order
		text  string // a substring of their texts
	}{
		{"whole", base, nil, 0, "", ""},
		{"errors beyond the bound", func() scenario { s := base; s.errEvery = 4; return s }(), nil, 0, "errors",
			"4 of 16 profile requests failed (25.00%, most: http_500 ×4), above --max-error-rate 0"},
		{"errors within the bound", func() scenario { s := base; s.errEvery = 4; return s }(), nil, 0.25, "", ""},
		{"every request failed", func() scenario { s := base; s.errEvery = 1; return s }(), nil, 0.5, "errors", "16 of 16 profile requests failed (100.00%"},
		{"crashed", base, manifest(func(m *rawlog.Manifest) { m.Status = rawlog.StatusRunning }), 0, "incomplete", `the run crashed (run.json status is still "running"`},
		{"interrupted", base, manifest(func(m *rawlog.Manifest) { m.Status = rawlog.StatusInterrupted }), 0, "incomplete", `the run was interrupted`},
		{"failed", base, manifest(func(m *rawlog.Manifest) { m.Status = rawlog.StatusFailed }), 0, "incomplete", `the run did not complete (run.json status "failed")`},
		{"run.json rebuilt from the logs", base, manifest(func(m *rawlog.Manifest) { m.Status = rawlog.StatusUnknown }), 0, "incomplete", "the run's run.json was rebuilt from the logs"},
		{"a worker died", base, func(t *testing.T, dir string) { killWorker(t, dir, 1, 2, 1) }, 1, "incomplete,incomplete", "1 worker did not finish cleanly: worker 1 (no footer)"},
		{"schedule not kept", func() scenario { s := base; s.lag = 50 * ms; return s }(), nil, 0, "schedule", "the client did not keep its schedule: "},
	}
	var out []HealthCase
	for _, c := range cases {
		dir := c.sc.build(t, t.TempDir())
		if c.edit != nil {
			c.edit(t, dir)
		}
		s, _ := analyseDir(t, Options{}, dir)
		out = append(out, HealthCase{Name: c.name, Summary: s, Max: c.max, Kinds: c.kinds, Text: c.text})
	}
	return out
}

// WithRunStatuses sets the runs' run.json statuses of a summary made by hand, the first
// run's first, as the analysis of several shards does.
func WithRunStatuses(s *Summary, statuses []string) *Summary {
	s.runStatus = statuses
	return s
}

// ShapeCase is one of TestValidateShapeRun's runs (shape_run_test.go), built and analysed:
// its directory, and whether its plan has send instants for the fidelity check.
type ShapeCase struct {
	Name     string
	RunDir   string
	Summary  *Summary
	Fidelity bool
}

// ShapeCases builds and analyses TestValidateShapeRun's runs: one at a rate, one closed loop.
func ShapeCases(t *testing.T) []ShapeCase {
	var out []ShapeCase
	for _, c := range []struct {
		name     string
		sc       scenario
		fidelity bool
	}{
		{"rate", scenario{n: 40, ttft: 20 * ms, itl: 5 * ms, tokens: 8, rate: 50, streaming: true}, true},
		{"closed loop", scenario{n: 40, ttft: 20 * ms, itl: 5 * ms, tokens: 8, concurrency: 4, streaming: true}, false},
	} {
		run := c.sc.build(t, t.TempDir())
		s, err := Analyze(Options{RunDirs: []string{run}, Tokenizer: wordCounter{}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ShapeCase{Name: c.name, RunDir: run, Summary: s, Fidelity: c.fidelity})
	}
	return out
}
