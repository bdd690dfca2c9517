package profile

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/export"
	"github.com/llmbench/llmbench/report"
)

// tokenStages are fakeStages whose runs also have output tokens/s and tokens/s per user
// (mean and median, by concurrency), the Pareto's axes.
type tokenStages struct {
	*fakeStages
	tps, userAvg, userP50 map[int]float64
}

func (f *tokenStages) Analyze(planPath, runDir string) (*analyze.Summary, int) {
	s, code := f.fakeStages.Analyze(planPath, runDir)
	c := f.at.Concurrency
	tps, _ := analyze.LookupMetric("output_token_throughput")
	user, _ := analyze.LookupMetric("output_token_throughput_per_user")
	st := &analyze.Stats{Count: 10, Avg: f.userAvg[c]}
	st.P[4] = f.userP50[c]
	s.Results = append(s.Results, analyze.Result{MetricDef: tps, Value: f.tps[c]}, analyze.Result{MetricDef: user, Stats: st})
	s.Concurrency = c
	return s, code
}

// TestSweepPageEqualsJSON: sweep.html draws the values of profile_export_aiperf_sweep.json:
// each point's means, the Pareto set and the best configurations. The fixture's
// concurrency 2 is on the Pareto set by the median per-user speed but not by the mean (the
// JSON's axis): the page once said {1, 2, 4, 16} where the JSON said {1, 4, 16}.
func TestSweepPageEqualsJSON(t *testing.T) {
	f := &tokenStages{fakeStages: &fakeStages{outcome: func(c, _ int) outcome { return outcome{ttft95: 10 * float64(c)} }},
		tps:     map[int]float64{1: 100, 2: 150, 4: 300, 16: 900},
		userAvg: map[int]float64{1: 100, 2: 70, 4: 75, 16: 56},
		userP50: map[int]float64{1: 100, 2: 80, 4: 75, 16: 56}}
	f.t = t
	dir, err := NewDir(filepath.Join(t.TempDir(), "artifacts", "m-openai-chat-concurrency_sweep"))
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := Run(dir, Options{Sweep: &SweepOptions{Points: []Point{point(1), point(2), point(4), point(16)}, Runs: 1, Level: 0.95},
		ExportPrefix: export.DefaultExportPrefix, Stages: f, Stdout: &out, Stderr: &errb})
	stdout, stderr := out.String(), errb.String()
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var doc struct {
		Points []struct {
			Parameters map[string]float64 `json:"parameters"`
			Metrics    map[string]struct {
				Mean *float64 `json:"mean"`
			} `json:"metrics"`
			Pareto bool `json:"pareto_optimal"`
		} `json:"per_combination_metrics"`
		Best map[string]struct {
			Parameters map[string]float64
			Metric     float64
			Unit       string
		} `json:"best_configurations"`
		Metadata struct {
			Objectives []string `json:"pareto_objectives"`
		} `json:"metadata"`
	}
	readDoc(t, filepath.Join(dir, "aggregate", "profile_export_aiperf_sweep.json"), &doc)
	html, err := os.ReadFile(filepath.Join(dir, "aggregate", sweepHTML))
	if err != nil {
		t.Fatal(err)
	}
	data, err := report.PageData(html)
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Sweep report.Sweep `json:"sweep"`
	}
	if err := json.Unmarshal(data, &page); err != nil {
		t.Fatalf("sweep.html data: %v", err)
	}
	sw := page.Sweep
	if len(sw.Points) != len(doc.Points) {
		t.Fatalf("page: %d points, JSON %d", len(sw.Points), len(doc.Points))
	}
	var pagePareto, jsonPareto []float64
	for i, p := range sw.Points {
		j := doc.Points[i]
		if p.Value != j.Parameters["concurrency"] {
			t.Errorf("point %d: page concurrency %g, JSON %g", i, p.Value, j.Parameters["concurrency"])
		}
		for key, got := range map[string]report.Number{"output_token_throughput_avg": p.OutputTPS,
			"output_token_throughput_per_user_avg": p.TPSUserAvg, "time_to_first_token_p99": p.TTFTP99, "request_throughput_avg": p.RequestThroughput} {
			want := math.NaN()
			if m, ok := j.Metrics[key]; ok && m.Mean != nil {
				want = *m.Mean
			}
			if !(float64(got) == want || math.IsNaN(float64(got)) && math.IsNaN(want)) {
				t.Errorf("point %g: %s page %v, JSON %v", p.Value, key, got, want)
			}
		}
		if p.Pareto {
			pagePareto = append(pagePareto, p.Value)
		}
		if j.Pareto {
			jsonPareto = append(jsonPareto, j.Parameters["concurrency"])
		}
	}
	if want := []float64{1, 4, 16}; !equalFloats(jsonPareto, want) || !equalFloats(pagePareto, jsonPareto) {
		t.Errorf("Pareto set: page %v, JSON %v, want %v", pagePareto, jsonPareto, want)
	}
	if !equalStrings(sw.ParetoObjectives, doc.Metadata.Objectives) {
		t.Errorf("Pareto objectives: page %v, JSON %v", sw.ParetoObjectives, doc.Metadata.Objectives)
	}
	if len(sw.Best) != len(doc.Best) {
		t.Errorf("best configurations: page %+v, JSON %+v", sw.Best, doc.Best)
	}
	for _, b := range sw.Best {
		j, ok := doc.Best[b.Name]
		if !ok || j.Parameters["concurrency"] != b.Value || j.Metric != float64(b.Result) || j.Unit != b.Unit {
			t.Errorf("best %s: page %+v, JSON %+v", b.Name, b, j)
		}
	}
	for _, w := range []string{"the runs used different plans", "different request bodies"} {
		if strings.Contains(string(data), w) {
			t.Errorf("the page warns %q on a sweep of one plan's bodies", w)
		}
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
