package analyze_test

import (
	"strings"
	"testing"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/analyze/judge"
	"github.com/llmbench/llmbench/rawlog"
)

// TestHealth: a run is whole and successful only when it completed, every worker finished,
// its failed requests are within the bound and its client kept the schedule; each way to
// fall short is one problem of its kind, said in one clause. The runs are analyze's
// synthetic ones (export_test.go); judge.Health judges them.
func TestHealth(t *testing.T) {
	for _, c := range analyze.HealthCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			var kinds, texts []string
			for _, p := range judge.Health(c.Summary, c.Max) {
				kinds = append(kinds, p.Kind)
				texts = append(texts, p.Text)
				if p.Text == "" || strings.Contains(p.Text, "\n") {
					t.Errorf("problem %+v: want one clause", p)
				}
			}
			if strings.Join(kinds, ",") != c.Kinds || !strings.Contains(strings.Join(texts, "; "), c.Text) {
				t.Errorf("Health = %q %q; want kinds %q, text ~ %q", kinds, texts, c.Kinds, c.Text)
			}
		})
	}
}

// TestHealthShards: a shard that crashed or was interrupted fails the whole run, named,
// even when the first shard completed.
func TestHealthShards(t *testing.T) {
	s := analyze.WithRunStatuses(&analyze.Summary{RunStatus: rawlog.StatusComplete,
		RunDirs: []string{"run/shard-0", "run/shard-1", "run/shard-2"}, Counts: analyze.Counts{Profile: 10, Valid: 10},
		Shards: &analyze.ShardReport{Count: 4, Missing: []int{3}}}, []string{rawlog.StatusComplete, rawlog.StatusRunning, rawlog.StatusInterrupted})
	var texts []string
	for _, p := range judge.Health(s, 0) {
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
