package report

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/analyze/output"
	"github.com/llmbench/llmbench/tokenizer"
)

// TestUserMetricEverywhere registers a synthetic metric at run time (no code anywhere
// names it) and finds it in every output: the console table, the AIPerf JSON and CSV, the
// run page's data, a gate, a goodput objective and `analyze compare`, with values equal to
// what the per-request records imply. rate-a's TTFT is about 20 ms, rate-b's 25 ms.
func TestUserMetricEverywhere(t *testing.T) {
	reg := analyze.NewRegistry()
	const name, desc = "ttft_x2", "twice the time to first token (a synthetic test metric)"
	if _, err := reg.Register(analyze.UserMetric{Name: name, Unit: "ms", Description: desc,
		Eval: func(v *analyze.RequestView) (float64, bool) {
			ttft, ok := v.Value(analyze.MTimeToFirstToken)
			return 2 * ttft, ok
		}}); err != nil {
		t.Fatal(err)
	}
	slos, err := reg.ParseGoodput(name + ":45") // 2 × 20 ms meets it, 2 × 25 ms does not
	if err != nil {
		t.Fatal(err)
	}
	analyse := func(run string) Run {
		tok, err := tokenizer.Builtin()
		if err != nil {
			t.Fatal(err)
		}
		recs := &Records{}
		s, err := analyze.Analyze(analyze.Options{RunDirs: []string{filepath.Join(fixtureRuns, run)},
			PlanPath: filepath.Join(fixtureRuns, fixturePlans[run]), Tokenizer: tok, TempDir: t.TempDir(),
			MaxScheduleLag: time.Millisecond, MaxWorkerCPU: 0.9, Metrics: reg, Goodput: slos}, recs)
		if err != nil {
			t.Fatal(err)
		}
		if err := recs.Close(); err != nil {
			t.Fatal(err)
		}
		return Run{Name: run, Summary: s, Records: recs}
	}
	a, b := analyse("rate-a"), analyse("rate-b")

	// The records: one value per valid request, twice its TTFT.
	vals, ttfts := a.Records.valuesOf(name, isOK), a.Records.values(FTTFT, isOK)
	if len(vals) == 0 || len(vals) != len(ttfts) {
		t.Fatalf("records: %d values for %d TTFTs", len(vals), len(ttfts))
	}
	sum := 0.0
	for i := range vals {
		if math.Abs(vals[i]-2*ttfts[i]) > 1e-3 {
			t.Fatalf("record %d: %s %v, TTFT %v", i, name, vals[i], ttfts[i])
		}
		sum += vals[i]
	}
	// good counts the valid requests of a run meeting the objective, by their records.
	good := func(r Run) (n int) {
		for _, v := range r.Records.valuesOf(name, isOK) {
			if v <= 45 {
				n++
			}
		}
		return n
	}
	res, ok := a.Summary.Result(name)
	if !ok || res.Stats == nil || res.Stats.Count != int64(len(vals)) || math.Abs(res.Stats.Avg-sum/float64(len(vals))) > 1e-3 || res.Skipped != 0 {
		t.Fatalf("result %+v; want %d values averaging %v", res, len(vals), sum/float64(len(vals)))
	}

	// Console, JSON, CSV.
	var console, js, csv bytes.Buffer
	if err := output.WriteConsole(&console, a.Summary); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(console.String(), "\n"+name+" (ms)") {
		t.Errorf("console has no %s row:\n%s", name, console.String())
	}
	if err := output.WriteAIPerfJSON(&js, a.Summary); err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	var block struct {
		Unit  string  `json:"unit"`
		Avg   float64 `json:"avg"`
		P99   float64 `json:"p99"`
		Count int64   `json:"count"`
	}
	if err := json.Unmarshal(doc[name], &block); err != nil || block.Unit != "ms" || block.Count != res.Stats.Count || block.Avg != res.Stats.Avg {
		t.Errorf("JSON block %s: %+v %v", doc[name], block, err)
	}
	if err := output.WriteAIPerfCSV(&csv, a.Summary); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(csv.String(), "\r\n"+name+" (ms),") {
		t.Errorf("CSV has no %s row", name)
	}

	// The run page's data: the table row, with the metric's description as its definition.
	page := BuildRun(RunInput{Summary: a.Summary, Records: a.Records})
	found := false
	for _, r := range page.Table {
		if r.Tag == name {
			found = true
			if r.Definition != desc || len(r.Cells) != 8 || r.Cells[0] != name+" (ms)" {
				t.Errorf("page row %+v", r)
			}
		}
	}
	if !found {
		t.Errorf("the run page has no %s row", name)
	}

	// A gate and goodput.
	g, err := reg.ParseGate(name + ".p99<1000")
	if err != nil {
		t.Fatal(err)
	}
	if r := analyze.EvaluateGates(a.Summary, []analyze.Gate{g})[0]; !r.OK || r.Actual != res.Stats.P[8] {
		t.Errorf("gate %+v; want PASS at p99 %v", r, res.Stats.P[8])
	}
	for _, r := range []Run{a, b} {
		if gr, _ := r.Summary.Result("good_request_count"); gr == nil || int(gr.Value) != good(r) {
			t.Errorf("%s good requests %+v; want %d", r.Name, gr, good(r))
		}
	}
	if good(a) <= good(b) || good(a) == 0 {
		t.Errorf("good requests: rate-a %d, rate-b %d; want more at 20 ms than at 25 ms", good(a), good(b))
	}

	// analyze compare: the metric is compared, 25 ms against 20 ms is a regression.
	th, err := ParseThresholdFor(reg, name+":10")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseThreshold(name + ":10"); err == nil {
		t.Error("the built-in thresholds know no user metric")
	}
	c, err := Compare([]Run{a, b}, CompareOptions{FailOn: []Threshold{th}, MaxErrorRate: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	d := diffOf(t, c, name)
	ttft := diffOf(t, c, "time_to_first_token")
	if !d.Significant || !d.Worse || !d.Regression || math.Abs(float64(d.MedianDiff)-2*float64(ttft.MedianDiff)) > 0.01 {
		t.Errorf("compare %s: %+v; want a significant regression of twice TTFT's %v", name, d, ttft.MedianDiff)
	}
	regressed := false
	for _, r := range c.Regressions {
		regressed = regressed || r.Metric == name
	}
	if !regressed {
		t.Errorf("no regression on %s: %+v", name, c.Regressions)
	}
}
