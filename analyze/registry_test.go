package analyze

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/mmapds"
)

// Every built-in metric is computed somewhere: a record metric with one value per request by
// its per-request formula, a single value by its per-run formula; aliases, pooled and
// sampled metrics have their values from elsewhere and no formula.
func TestBuiltinsHaveFormulas(t *testing.T) {
	for _, d := range builtins.defs {
		req, run := builtins.perRequest[d.ID] != nil, builtins.perRun[d.ID] != nil
		var want string
		switch {
		case d.Kind != Record:
			want = "run"
		case d.Alias >= 0 || d.Sampling != PerRequest:
			want = "none"
		default:
			want = "request"
		}
		got := map[[2]bool]string{{true, false}: "request", {false, true}: "run", {false, false}: "none", {true, true}: "both"}[[2]bool{req, run}]
		if got != want {
			t.Errorf("%s: formula %s; want %s", d.Tag, got, want)
		}
		if d.Kind == Record && (d.div == 0 || d.Unit == "") {
			t.Errorf("%s: no unit or scale", d.Tag)
		}
	}
	if a := catalog[MVLLMInterTokenLatency]; a.Unit != "ms" || a.Sampling != PerEvent || !a.NeedsStream() {
		t.Errorf("an alias takes its target's unit, sampling and streaming: %+v", a)
	}
}

func TestRegisterRejects(t *testing.T) {
	ok := func(*RequestView) (float64, bool) { return 1, true }
	r := NewRegistry()
	if _, err := r.Register(UserMetric{Name: "mine", Eval: ok}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		m    UserMetric
		want string
	}{
		{UserMetric{Name: "mine", Eval: ok}, `metric "mine" is defined twice`},
		{UserMetric{Name: "time_to_first_token", Eval: ok}, "is a built-in metric"},
		{UserMetric{Name: "", Eval: ok}, "want a lower-case letter"},
		{UserMetric{Name: "Mine", Eval: ok}, "want a lower-case letter"},
		{UserMetric{Name: "9lives", Eval: ok}, "want a lower-case letter"},
		{UserMetric{Name: "a.b", Eval: ok}, "want a lower-case letter"},
		{UserMetric{Name: "a-b", Eval: ok}, "want a lower-case letter"},
		{UserMetric{Name: strings.Repeat("a", 65), Eval: ok}, "at most 64"},
		{UserMetric{Name: "server", Eval: ok}, "reserved"},
		{UserMetric{Name: "gpu", Eval: ok}, "reserved"},
		{UserMetric{Name: "nil_eval"}, "has no evaluator"},
		{UserMetric{Name: "bad_unit", Unit: "m\ns", Eval: ok}, "control character"},
	}
	for _, c := range cases {
		if _, err := r.Register(c.m); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Register(%q) error %v; want %q", c.m.Name, err, c.want)
		}
	}
	full := NewRegistry()
	for i := 0; i < MaxUserMetrics; i++ {
		if _, err := full.Register(UserMetric{Name: fmt.Sprintf("m%d", i), Eval: ok}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := full.Register(UserMetric{Name: "one_more", Eval: ok}); err == nil || !strings.Contains(err.Error(), "more than 256") {
		t.Errorf("metric %d: %v", MaxUserMetrics+1, err)
	}
	if _, err := (*Registry)(nil).Register(UserMetric{Name: "x", Eval: ok}); err == nil {
		t.Error("registered on the built-in registry")
	}
	// The built-ins stay as they were: a new registry does not share its additions.
	if _, found := NewRegistry().Lookup("mine"); found {
		t.Error("a user metric leaked into another registry")
	}
	if _, found := LookupMetric("mine"); found {
		t.Error("a user metric leaked into the built-ins")
	}
	if d, _ := r.Lookup("mine"); d.ID != numMetrics || !d.User || !d.Console || d.Kind != Record || d.Origin != OriginUser {
		t.Errorf("user metric definition %+v", d)
	}
}

// A user metric registered at run time is computed per request and reported like a built-in
// one: console, JSON (AIPerf's block, extra_stats with the skipped count), CSV, JSONL, time
// slices, a gate and a goodput objective; a request without a value is skipped and counted.
func TestUserMetricInAnalyzeOutputs(t *testing.T) {
	sc := scenario{n: 30, workers: 2, ttft: 20 * ms, itl: 5 * ms, tokens: 6, concurrency: 3, streaming: true, errEvery: 10}
	r := NewRegistry()
	// Twice the TTFT, for even sessions only: the odd ones are skipped.
	if _, err := r.Register(UserMetric{Name: "even_ttft_x2", Unit: "ms", Description: "2 × TTFT of even sessions",
		Eval: func(v *RequestView) (float64, bool) {
			ttft, ok := v.Value(MTimeToFirstToken)
			return 2 * ttft, ok && v.Session()%2 == 0
		}}); err != nil {
		t.Fatal(err)
	}
	slos := objectives(r, "even_ttft_x2:40.6")
	s, rec := analyseDir(t, Options{Metrics: r, Goodput: slos, SliceDuration: 200 * time.Millisecond}, sc.build(t, t.TempDir()))
	// What the records say, independently: each valid even request's TTFT.
	var want []float64
	odd, goodWant := 0, 0
	for _, line := range bytes.Split(bytes.TrimSpace(rec), []byte("\n")) {
		var j struct {
			Metadata struct {
				Session int `json:"session_num"`
			} `json:"metadata"`
			Metrics map[string]struct {
				Value any `json:"value"`
			} `json:"metrics"`
			Error any `json:"error"`
		}
		if err := json.Unmarshal(line, &j); err != nil {
			t.Fatal(err)
		}
		if j.Error != nil {
			if _, has := j.Metrics["even_ttft_x2"]; has {
				t.Errorf("a failed request has the user metric: %s", line)
			}
			continue
		}
		ttft := j.Metrics["time_to_first_token"].Value.(float64)
		v, has := j.Metrics["even_ttft_x2"]
		switch {
		case j.Metadata.Session%2 == 1:
			odd++
			if has {
				t.Errorf("odd session has the user metric: %s", line)
			}
		case !has || math.Abs(v.Value.(float64)-2*ttft) > 1e-9:
			t.Errorf("even session: even_ttft_x2 %v; want %v", v.Value, 2*ttft)
		default:
			want = append(want, 2*ttft)
			if 2*ttft <= 40.6 {
				goodWant++
			}
		}
	}
	res, ok := s.Result("even_ttft_x2")
	if !ok || res.Stats == nil || res.Stats.Count != int64(len(want)) || res.Skipped != int64(odd) || odd == 0 {
		t.Fatalf("result %+v; want %d values, %d skipped", res, len(want), odd)
	}
	sum := 0.0
	for _, v := range want {
		sum += v
	}
	if math.Abs(res.Stats.Avg-sum/float64(len(want))) > 1e-9 || !res.User || res.Unit != "ms" {
		t.Errorf("avg %v; want %v", res.Stats.Avg, sum/float64(len(want)))
	}
	if good, _ := s.Result("good_request_count"); good == nil || int(good.Value) != goodWant || goodWant == 0 || goodWant == len(want) {
		t.Errorf("good requests %+v; want %d (of %d)", good, goodWant, len(want))
	}
	if !hasNote(s, fmt.Sprintf("metric even_ttft_x2: %d of %d requests had no value", odd, s.Counts.Valid)) {
		t.Errorf("no skipped note: %q", s.Notes)
	}
	out := outputs(t, s, rec)
	if c := string(out["console"]); !strings.Contains(c, "even_ttft_x2 (ms)") {
		t.Errorf("console has no row:\n%s", c)
	}
	var doc map[string]any
	if err := json.Unmarshal(out["json"], &doc); err != nil {
		t.Fatal(err)
	}
	block, _ := doc["even_ttft_x2"].(map[string]any)
	for _, k := range []string{"unit", "avg", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "min", "max", "std", "count", "sum"} {
		if _, ok := block[k]; !ok {
			t.Errorf("JSON block has no %s: %v", k, block)
		}
	}
	if len(block) != 16 || block["count"].(float64) != float64(len(want)) {
		t.Errorf("JSON block %v: want AIPerf's 16 keys", block)
	}
	extra := doc["llmbench"].(map[string]any)["extra_stats"].(map[string]any)["even_ttft_x2"].(map[string]any)
	if extra["skipped"].(float64) != float64(odd) {
		t.Errorf("extra_stats %v; want skipped %d", extra, odd)
	}
	if _, ok := doc["llmbench"].(map[string]any)["extra_stats"].(map[string]any)["time_to_first_token"].(map[string]any)["skipped"]; ok {
		t.Error("a built-in metric has a skipped count")
	}
	if c := string(out["csv"]); !strings.Contains(c, "\r\neven_ttft_x2 (ms),") {
		t.Errorf("CSV has no row:\n%s", c)
	}
	if c := string(out["timeslices.csv"]); !strings.Contains(c, ",even_ttft_x2,ms,p50,") {
		t.Errorf("time slices CSV has no row:\n%s", c)
	}
	// The gates on it (analyze/judge's TestGateOnUserMetric parses and evaluates them) see
	// these statistics.
	if r, ok := s.Result("even_ttft_x2"); !ok || r.Stats == nil || !(r.Stats.Max < 100) || r.Stats.Min > 100 || r.Stats.Count != int64(len(want)) {
		t.Errorf("even_ttft_x2 statistics %+v; want max < 100, min ≤ 100, count %d", r, len(want))
	}
}

// Goodput objectives must be of the registry the analysis runs with: a user metric's id
// means nothing in another registry.
func TestGoodputFromAnotherRegistry(t *testing.T) {
	r := testRegistry(t)
	slos := objectives(r, "first_gap_ms:5")
	sc := scenario{n: 4, workers: 1, ttft: 20 * ms, itl: 5 * ms, tokens: 6, concurrency: 1, streaming: true}
	_, err := Analyze(Options{RunDirs: []string{sc.build(t, t.TempDir())}, Goodput: slos, Tokenizer: wordCounter{}, TempDir: t.TempDir()}, nil)
	if err == nil || !strings.Contains(err.Error(), "--goodput first_gap_ms:5: the metric is not in the registry") {
		t.Errorf("error %v", err)
	}
}

// Evaluating user metrics allocates nothing per request: a processor with one allocates as
// often as one with the built-ins alone (the test tokenizer's string conversions).
func TestUserMetricNoAllocs(t *testing.T) {
	ep, _ := endpoint.Lookup("chat")
	q := request(0, 0, streamReads(0, 20*ms, 5*ms, 6, 0, 100)...)
	rec := mmapds.Record{Phase: mmapds.PhaseProfile, ISL: 100, OSL: 6}
	allocs := func(r *Registry) (float64, *processor) {
		p := newProcessor(requestConfig{ep: ep, tokens: true, tok: wordCounter{}, reg: r})
		p.compute(q, &rec, 10)
		return testing.AllocsPerRun(100, func() { p.compute(q, &rec, 10) }), p
	}
	r := testRegistry(t)
	base, _ := allocs(nil)
	with, p := allocs(r)
	if with != base {
		t.Errorf("%v allocations per request with a user metric, %v without", with, base)
	}
	if d, _ := r.Lookup("first_gap_ms"); !p.m.Has[d.ID] || p.m.Values[d.ID] != 5.0 {
		t.Errorf("first_gap_ms = %v (set %v); want 5 ms", p.m.Values[d.ID], p.m.Has[d.ID])
	}
}
