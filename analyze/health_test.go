package analyze

import (
	"strings"
	"testing"

	"github.com/llmbench/llmbench/rawlog"
)

// TestHealth: a run is whole and successful only when it completed, every worker finished,
// its failed requests are within the bound and its client kept the schedule; each way to
// fall short is one problem of its kind, said in one clause.
func TestHealth(t *testing.T) {
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
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := c.sc.build(t, t.TempDir())
			if c.edit != nil {
				c.edit(t, dir)
			}
			s, _ := analyseDir(t, Options{}, dir)
			var kinds, texts []string
			for _, p := range Health(s, c.max) {
				kinds = append(kinds, p.Kind)
				texts = append(texts, p.Text)
				if p.Text == "" || strings.Contains(p.Text, "\n") {
					t.Errorf("problem %+v: want one clause", p)
				}
			}
			if strings.Join(kinds, ",") != c.kinds || !strings.Contains(strings.Join(texts, "; "), c.text) {
				t.Errorf("Health = %q %q; want kinds %q, text ~ %q", kinds, texts, c.kinds, c.text)
			}
		})
	}
}

// TestHealthShards: a shard that crashed or was interrupted fails the whole run, named,
// even when the first shard completed.
func TestHealthShards(t *testing.T) {
	s := &Summary{RunStatus: rawlog.StatusComplete, runStatus: []string{rawlog.StatusComplete, rawlog.StatusRunning, rawlog.StatusInterrupted},
		RunDirs: []string{"run/shard-0", "run/shard-1", "run/shard-2"}, Counts: Counts{Profile: 10, Valid: 10},
		Shards: &ShardReport{Count: 4, Missing: []int{3}}}
	var texts []string
	for _, p := range Health(s, 0) {
		texts = append(texts, p.Text)
	}
	want := []string{`shard run/shard-1 crashed (run.json status is still "running"`, `shard run/shard-2 was interrupted`, "1 of 4 shards missing (index 3)"}
	got := strings.Join(texts, "\n")
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("Health lacks %q:\n%s", w, got)
		}
	}
	if len(texts) != 3 {
		t.Errorf("%d problems, want 3:\n%s", len(texts), got)
	}
}
