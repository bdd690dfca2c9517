package profile

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/export"
	"github.com/llmbench/llmbench/stats"
)

// fakePoint is a sweep point with the given means for its metrics.
func fakePoint(c float64, valid bool, means map[string]float64) *pointResult {
	p := &pointResult{point: Point{{Flag: "concurrency", Name: "concurrency", Value: c}}, valid: valid, metrics: map[string]metricAgg{}}
	for k, v := range means {
		p.metrics[k] = metricAgg{unit: "u", c: stats.Summarize([]float64{v}, 0.95)}
	}
	if !valid {
		p.reasons = []string{"run_0001: the client did not keep its schedule: dispatch lag"}
	}
	return p
}

// TestSweepAnalysis: the best point per objective and the Pareto set come from the valid
// points only; an invalid point with the best numbers never wins.
func TestSweepAnalysis(t *testing.T) {
	m := func(rps, ttft99, tok, tokUser float64) map[string]float64 {
		return map[string]float64{"request_throughput_avg": rps, "time_to_first_token_p99": ttft99, "request_latency_p99": ttft99 * 2,
			"output_token_throughput_avg": tok, "output_token_throughput_per_user_avg": tokUser}
	}
	points := []*pointResult{
		fakePoint(1, true, m(10, 20, 100, 50)),
		fakePoint(2, true, m(19, 21, 190, 48)),
		fakePoint(4, true, m(35, 30, 350, 44)),
		fakePoint(8, true, m(34, 60, 340, 40)),   // dominated by concurrency 4
		fakePoint(16, false, m(99, 10, 990, 99)), // best everywhere, but the client did not keep up
	}
	a := analyse(points)
	if want := []int{0, 1, 2}; !reflect.DeepEqual(a.pareto, want) {
		t.Errorf("pareto %v, want %v", a.pareto, want)
	}
	if a.axes[0].Key != "output_token_throughput_avg" || a.axes[1].Key != "output_token_throughput_per_user_avg" {
		t.Errorf("pareto axes %+v", a.axes)
	}
	want := map[string]int{"best_throughput": 4, "best_latency_p99": 1, "best_output_token_throughput": 4, "best_output_token_throughput_per_user": 1}
	for name, c := range want {
		b, ok := a.best[name]
		if !ok || b.Parameters["concurrency"] != c {
			t.Errorf("%s = %+v, want concurrency %d", name, b, c)
		}
	}
	if got := float64(a.best["best_latency_p99"].Metric); got != 20 {
		t.Errorf("best_latency_p99 metric %v, want 20 (TTFT p99 of concurrency 1)", got)
	}
	// Non-streaming: no TTFT and no per-user throughput; latency falls back, Pareto too.
	for _, p := range points {
		delete(p.metrics, "time_to_first_token_p99")
		delete(p.metrics, "output_token_throughput_per_user_avg")
	}
	a = analyse(points)
	if a.best["best_latency_p99"].Metric != 40 || a.axes[1].Key != "request_latency_p99" {
		t.Errorf("fallback: best %+v axes %+v", a.best["best_latency_p99"], a.axes)
	}
	// Every point invalid: no best, no Pareto set.
	for _, p := range points {
		p.valid = false
	}
	if a = analyse(points); len(a.best) != 0 || len(a.pareto) != 0 {
		t.Errorf("all invalid: best %v pareto %v", a.best, a.pareto)
	}
}

func TestSweepCSV(t *testing.T) {
	points := []*pointResult{
		fakePoint(1, true, map[string]float64{"request_throughput_avg": 10, "request_latency_p99": 20}),
		fakePoint(2, false, map[string]float64{"request_throughput_avg": 19.5, "request_latency_p99": 21}),
	}
	a := analyse(points)
	doc := sweepJSON{AggregationType: "sweep", Best: a.best, NumProfileRuns: 2, NumSuccessfulRuns: 2,
		Metadata: sweepMeta{SweepParameters: sweepParams(points), NumCombinations: 2}}
	for _, i := range a.pareto {
		doc.Pareto = append(doc.Pareto, params(points[i].point))
	}
	for _, p := range points {
		c := combination{Parameters: params(p.point), Metrics: map[string]confidenceJSON{}, Valid: p.valid}
		for k, m := range p.metrics {
			c.Metrics[k] = toJSON(m)
		}
		doc.PerCombination = append(doc.PerCombination, c)
	}
	var b bytes.Buffer
	if err := writeSweepCSV(&b, doc, points); err != nil {
		t.Fatal(err)
	}
	want := `concurrency,valid,request_latency_p99_mean,request_latency_p99_std,request_latency_p99_min,request_latency_p99_max,request_latency_p99_cv,request_throughput_avg_mean,request_throughput_avg_std,request_throughput_avg_min,request_throughput_avg_max,request_throughput_avg_cv
1,true,20.00,0.00,20.00,20.00,0.0000,10.00,0.00,10.00,10.00,0.0000
2,false,21.00,0.00,21.00,21.00,0.0000,19.50,0.00,19.50,19.50,0.0000

Best Configurations
Configuration,concurrency,Metric,Unit
Best Latency P99,1,20.00,u
Best Throughput,1,10.00,u

Pareto Optimal Points
concurrency
1

Metadata
Field,Value
Aggregation Type,sweep
Sweep Parameters,concurrency
Number of Combinations,2
Number of Profile Runs,2
Number of Successful Runs,2
`
	if b.String() != want {
		t.Errorf("CSV:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestPooledRecords: the pooled analysis reads every valid profiling record's single values
// (lists, errors and warmup left out).
func TestPooledRecords(t *testing.T) {
	dir := t.TempDir()
	lines := []string{
		`{"metadata":{"benchmark_phase":"profiling"},"metrics":{"time_to_first_token":{"value":10.0,"unit":"ms"},"inter_chunk_latency":{"value":[1,2],"unit":"ms"}},"error":null}`,
		`{"metadata":{"benchmark_phase":"profiling"},"metrics":{"time_to_first_token":{"value":30.0,"unit":"ms"}},"error":null}`,
		`{"metadata":{"benchmark_phase":"profiling"},"metrics":{"time_to_first_token":{"value":999,"unit":"ms"}},"error":{"code":500,"type":"http","message":"x"}}`,
		`{"metadata":{"benchmark_phase":"warmup"},"metrics":{"time_to_first_token":{"value":999,"unit":"ms"}},"error":null}`,
	}
	for i, run := range []string{"run_0001", "run_0002"} {
		d := filepath.Join(dir, run)
		os.MkdirAll(d, 0o755)
		body := strings.Join(lines, "\n")
		if i == 1 {
			body = strings.ReplaceAll(body, "30.0", "50.0")
		}
		if err := os.WriteFile(filepath.Join(d, "profile_export.jsonl"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := &runner{opts: Options{ExportPrefix: export.DefaultExportPrefix}}
	p := &pointResult{runs: []runResult{
		{label: "run_0001", dir: filepath.Join(dir, "run_0001"), s: fakeSummary()},
		{label: "run_0002", dir: filepath.Join(dir, "run_0002"), s: fakeSummary()},
	}}
	got, note := r.pooled(p)
	if note != "" {
		t.Fatal(note)
	}
	m := got["time_to_first_token"]
	// 10, 30, 10, 50: mean 25, sample std √(1100/3), numpy p50 20, p90 44 (30 + 0.7·20).
	if m.Combined.Count != 4 || m.Combined.Mean != 25 || math.Abs(float64(m.Combined.Std)-math.Sqrt(1100.0/3)) > 1e-12 ||
		m.Combined.P50 != 20 || math.Abs(float64(m.Combined.P90)-44) > 1e-12 || m.Unit != "ms" {
		t.Errorf("pooled %+v", m)
	}
	if len(m.PerRun) != 2 || m.PerRun[0].Mean != 20 || m.PerRun[1].Mean != 30 || m.PerRun[1].Count != 2 {
		t.Errorf("per run %+v", m.PerRun)
	}
	if _, ok := got["inter_chunk_latency"]; ok {
		t.Error("a list metric was pooled")
	}
}

func TestWorse(t *testing.T) {
	for _, c := range [][3]int{{0, 1, 1}, {1, 0, 1}, {1, 2, 2}, {2, 130, 130}, {130, 1, 130}, {0, 0, 0}} {
		if got := worse(c[0], c[1]); got != c[2] {
			t.Errorf("worse(%d, %d) = %d, want %d", c[0], c[1], got, c[2])
		}
	}
}

func fakeSummary() *analyze.Summary { return &analyze.Summary{} }
