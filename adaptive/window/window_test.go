package window

import (
	"math"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/adaptive"
	"github.com/llmbench/llmbench/analyze"
)

func criteria(t *testing.T, reg *analyze.Registry, specs ...string) *Criteria {
	t.Helper()
	slas, err := adaptive.ParseSLAs(specs)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Resolve(slas, reg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestResolve(t *testing.T) {
	reg := analyze.NewRegistry()
	if _, err := reg.Register(analyze.UserMetric{Name: "third_event_ms", Unit: "ms",
		Eval: func(*analyze.RequestView) (float64, bool) { return 1, true }}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		spec      string
		tag, stat string
		kind      Kind
		stream    bool
		err       string
	}{
		{spec: "ttft:p95:le:120", tag: "time_to_first_token", stat: "p95", kind: Distribution, stream: true},
		{spec: "time_to_first_token:p99:le:120", tag: "time_to_first_token", stat: "p99", kind: Distribution, stream: true},
		{spec: "ttft_ms:mean:le:120", tag: "time_to_first_token", stat: "avg", kind: Distribution, stream: true},
		{spec: "itl:p95:le:10", tag: "inter_token_latency", stat: "p95", kind: Distribution, stream: true},
		{spec: "tpot:p50:le:10", tag: "inter_token_latency", stat: "p50", kind: Distribution, stream: true},
		{spec: "request_latency:p99_9:le:10", tag: "request_latency", stat: "p99.9", kind: Distribution},
		{spec: "third_event_ms:max:le:10", tag: "third_event_ms", stat: "max", kind: Distribution},
		{spec: "error_rate:avg:le:0.01", tag: "error_rate", stat: "avg", kind: ErrorRate},
		{spec: "request_error_rate:max:le:0.01", tag: "error_rate", stat: "max", kind: ErrorRate},
		{spec: "throughput:avg:ge:3", tag: "request_throughput", stat: "avg", kind: RequestThroughput},
		{spec: "request_success_rate:avg:ge:0.9", tag: "success_rate", stat: "avg", kind: SuccessRate},
		{spec: "cancellation_rate:min:le:0.1", tag: "cancellation_rate", stat: "min", kind: CancellationRate},
		{spec: "output_token_throughput:avg:ge:100", tag: "output_token_throughput", stat: "avg", kind: OutputTokenThroughput},
		{spec: "time_to_frist_token:p95:le:1", err: `no metric "time_to_frist_token": did you mean time_to_first_token?`},
		{spec: "ttft:p42:le:1", err: `statistic "p42": want one of avg, min, max`},
		{spec: "error_rate:p95:le:1", err: "error_rate is one value per window: its statistic is avg, min or max"},
		{spec: "benchmark_duration:avg:le:1", err: "benchmark_duration is not a per-request metric"},
		{spec: "inter_chunk_latency:avg:le:1", err: "inter_chunk_latency is not a per-request metric"},
		{spec: "goodput:avg:ge:1", err: "goodput counts the requests that meet the per-request SLAs, and there is none"},
	}
	for _, c := range cases {
		sla, err := adaptive.ParseSLA(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Resolve([]adaptive.SLA{sla}, reg)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), c.spec) {
				t.Errorf("%s: error %v, want %q", c.spec, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.spec, err)
			continue
		}
		cr := got.List()[0]
		if cr.Tag != c.tag || cr.Stat != c.stat || cr.Kind != c.kind || cr.NeedsStream != c.stream || cr.Spelling != sla.Spelling {
			t.Errorf("%s: %+v", c.spec, cr)
		}
	}
	if _, err := Resolve([]adaptive.SLA{{Metric: "goodput", Stat: "avg", Op: ">=", Threshold: 1, Spelling: "goodput:avg"},
		{Metric: "ttft", Stat: "p95", Op: "<=", Threshold: 1, Spelling: "ttft:p95"}}, nil); err != nil {
		t.Errorf("goodput with a per-request SLA: %v", err)
	}
}

// rec is a test record: sent and ended at seconds, a TTFT (NaN: none) and its outcome.
func rec(start, end, ttft float64, outcome string) Record {
	return Record{StartNs: int64(start * 1e9), EndNs: int64(end * 1e9), Valid: outcome == "ok", Cancelled: outcome == "cancelled",
		OutputTokens: map[bool]float64{true: 100}[outcome == "ok"], Values: []float64{ttft}}
}

// window is the hand-computed window of TestJudge: [1 s, 3 s), 2 s long. Inside it five
// successful requests with TTFT 10, 20, 30, 40, 50 ms and 100 output tokens each, one
// failed, one cancelled; one request sent inside and ended after it, one sent before and
// ended inside it (straddling); two outside.
var window = []Record{
	rec(1.0, 1.5, 10, "ok"), rec(1.1, 1.6, 20, "ok"), rec(1.2, 1.7, 30, "ok"), rec(1.3, 1.8, 40, "ok"), rec(1.4, 2.9, 50, "ok"),
	rec(1.5, 1.9, math.NaN(), "failed"), rec(1.6, 2.0, math.NaN(), "cancelled"),
	rec(2.5, 3.5, 5, "ok"), rec(0.5, 1.2, 1000, "ok"),
	rec(0.1, 0.4, 1000, "ok"), rec(3.0, 3.1, 1000, "ok"),
}

// TestJudge checks a window's values against hand-computed ones: numpy's linear p95 of
// 10..50 is 40 + 0.8·10 = 48, the population std sqrt(200).
func TestJudge(t *testing.T) {
	b := Bounds{StartNs: 1e9, EndNs: 3e9}
	cases := []struct {
		ttftSpec string // the criterion whose per-request values the records carry
		others   []string
		values   []float64
		passed   []bool
		ok       bool
		binding  string
	}{
		{"ttft:p95:le:35", []string{"goodput:avg:ge:1", "goodput_ratio:avg:ge:0.5", "error_rate:avg:le:0.2"},
			[]float64{48, 1.5, 3.0 / 7, 1.0 / 7}, []bool{false, true, false, true}, false, "ttft:p95"},
		{"ttft:p95:le:60", []string{"error_rate:avg:le:0.2", "success_rate:avg:ge:0.5", "cancellation_rate:avg:le:0.5"},
			[]float64{48, 1.0 / 7, 5.0 / 7, 1.0 / 7}, []bool{true, true, true, true}, true, "ttft:p95"},
		{"ttft:avg:le:31", []string{"request_throughput:avg:ge:2", "output_token_throughput:avg:ge:240"},
			[]float64{30, 2.5, 250}, []bool{true, true, true}, true, "ttft:avg"},
		{"ttft:std:le:15", []string{"ttft:p50:le:30", "ttft:min:gt:10", "ttft:max:ge:50", "ttft:count:ge:5"},
			[]float64{math.Sqrt(200), 30, 10, 50, 5}, []bool{true, true, false, true, true}, false, "ttft:min"},
	}
	for _, c := range cases {
		cr := criteria(t, nil, append([]string{c.ttftSpec}, c.others...)...)
		recs := make([]Record, len(window))
		for i, r := range window {
			r.Values = make([]float64, len(c.values))
			for j := range r.Values {
				r.Values[j] = math.NaN()
				if cr.List()[j].Kind == Distribution {
					r.Values[j] = window[i].Values[0]
				}
			}
			recs[i] = r
		}
		v := cr.Judge(recs, b)
		if v.Completed != 7 || v.Succeeded != 5 || v.Straddling != 2 {
			t.Errorf("%s: completed %d succeeded %d straddling %d, want 7 5 2", c.ttftSpec, v.Completed, v.Succeeded, v.Straddling)
		}
		for i, want := range c.values {
			got := v.Values[i]
			if math.Abs(got.Value-want) > 1e-9*math.Abs(want) || got.Passed != c.passed[i] {
				t.Errorf("%s: %s = %v passed %v, want %v %v", c.ttftSpec, got.Criterion.Spelling, got.Value, got.Passed, want, c.passed[i])
			}
		}
		if v.Passed != c.ok || v.Binding != c.binding {
			t.Errorf("%s: passed %v binding %q, want %v %q", c.ttftSpec, v.Passed, v.Binding, c.ok, c.binding)
		}
		if sv := v.SLAValues(); len(sv) != len(c.values) || sv[c.binding] != v.Values[indexOf(v, c.binding)].Value {
			t.Errorf("%s: sla_values %v", c.ttftSpec, sv)
		}
	}
}

func indexOf(v Verdict, spelling string) int {
	for i, x := range v.Values {
		if x.Criterion.Spelling == spelling {
			return i
		}
	}
	return -1
}

// TestJudgeMissingValuesFail: a window without a value of a metric (no streaming, no
// request at all) fails that SLA, leaves it out of sla_values and binds on it.
func TestJudgeMissingValuesFail(t *testing.T) {
	c := criteria(t, nil, "itl:p95:le:1000", "error_rate:avg:le:1")
	recs := []Record{{StartNs: 1, EndNs: 2, Valid: true, Values: []float64{math.NaN(), math.NaN()}}}
	v := c.Judge(recs, Bounds{0, 10})
	if v.Passed || v.Binding != "itl:p95" || !math.IsNaN(v.Values[0].Value) || v.Values[0].Samples != 0 || !v.Values[1].Passed {
		t.Errorf("%+v", v)
	}
	if _, ok := v.SLAValues()["itl:p95"]; ok {
		t.Error("a missing value is in sla_values")
	}
	empty := c.Judge(nil, Bounds{0, 10})
	if empty.Passed || empty.Completed != 0 || !math.IsNaN(empty.Values[1].Value) {
		t.Errorf("empty window: %+v", empty)
	}
}

// JudgeStarted judges every request sent in the window, however late it ended, and counts
// those sent before it apart.
func TestJudgeStarted(t *testing.T) {
	sla, err := adaptive.ParseSLA("request_latency:max:le:1000")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Resolve([]adaptive.SLA{sla}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := func(start, end int64, latency float64) Record {
		return Record{StartNs: start, EndNs: end, Valid: true, Values: []float64{latency}}
	}
	records := []Record{
		rec(50, 150, 100),    // sent before: straddling
		rec(100, 200, 100),   // inside
		rec(900, 2100, 1200), // sent inside, ended after the window: judged
		rec(1000, 1100, 100), // sent at the end: outside
	}
	v := c.JudgeStarted(records, Bounds{StartNs: 100, EndNs: 1000})
	if v.Completed != 2 || v.Straddling != 1 || v.Passed || v.Values[0].Value != 1200 {
		t.Fatalf("%+v", v)
	}
}
