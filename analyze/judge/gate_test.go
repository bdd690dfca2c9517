package judge

import (
	"strings"
	"testing"

	"github.com/llmbench/llmbench/analyze"
)

func TestParseGate(t *testing.T) {
	cases := []struct {
		in        string
		tag, stat string
		op        string
		value     float64
		err       string
	}{
		{in: "time_to_first_token.p99<400", tag: "time_to_first_token", stat: "p99", op: "<", value: 400},
		{in: " inter_token_latency.p50 <= 5.3 ", tag: "inter_token_latency", stat: "p50", op: "<=", value: 5.3},
		{in: "request_latency.p99.9>=1e3", tag: "request_latency", stat: "p99.9", op: ">=", value: 1000},
		{in: "request_latency.p99_9<1", tag: "request_latency", stat: "p99.9", op: "<", value: 1},
		{in: "output_token_throughput>1000", tag: "output_token_throughput", stat: "avg", op: ">", value: 1000},
		{in: "request_throughput.avg==2", tag: "request_throughput", stat: "avg", op: "==", value: 2},
		{in: "time_to_first_token.mean<3", tag: "time_to_first_token", stat: "avg", op: "<", value: 3},
		{in: "schedule_lag.max<1", tag: "schedule_lag", stat: "max", op: "<", value: 1},
		{in: "time_to_first_token.p99", err: "no comparison"},
		{in: "time_to_first_tokn.p99<4", err: `unknown metric "time_to_first_tokn"`},
		{in: "time_to_first_token.p98<4", err: `unknown statistic "p98"`},
		{in: "time_to_first_token<4", err: "name a statistic"},
		{in: "request_count.p99<4", err: "single value"},
		{in: "time_to_first_token.p99<fast", err: "not a finite number"},
		{in: "time_to_first_token.p99<nan", err: `"nan" is not a finite number`},
		{in: "time_to_first_token.p99<+Inf", err: `"+Inf" is not a finite number`},
		{in: "time_to_frist_token.p99<4", err: `unknown metric "time_to_frist_token" (did you mean time_to_first_token? see docs/metrics.md`},
		{in: "time_to_first_token.p9<4", err: `unknown statistic "p9" (did you mean p1? one of`},
		{in: "server.generation_tokns.rate>1", err: `(did you mean server.generation_tokens?`},
		{in: "gpu.powr.avg<1", err: `(did you mean gpu.power?`},
		{in: "<4", err: "no metric"},
	}
	for _, c := range cases {
		g, err := ParseGate(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "--gate") {
				t.Errorf("ParseGate(%q) error %v; want one naming --gate with %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseGate(%q): %v", c.in, err)
			continue
		}
		if g.Metric.Tag != c.tag || g.Stat != c.stat || g.Op != c.op || g.Value != c.value {
			t.Errorf("ParseGate(%q) = %s %s %s %v", c.in, g.Metric.Tag, g.Stat, g.Op, g.Value)
		}
	}
}

func TestEvaluateGates(t *testing.T) {
	ttft, _ := analyze.LookupMetric("time_to_first_token")
	rt, _ := analyze.LookupMetric("request_throughput")
	s := &analyze.Summary{Results: []analyze.Result{
		{MetricDef: ttft, Stats: &analyze.Stats{Count: 3, Avg: 20, Max: 30, P: [10]float64{8: 25, 9: 29}}},
		{MetricDef: rt, Value: 12.5},
	}}
	cases := []struct {
		gate    string
		ok      bool
		missing bool
	}{
		{"time_to_first_token.p99<26", true, false},
		{"time_to_first_token.p99<25", false, false},
		{"time_to_first_token.p99<=25", true, false},
		{"time_to_first_token.p99.9>28", true, false},
		{"time_to_first_token.max==30", true, false},
		{"time_to_first_token.count>=3", true, false},
		{"request_throughput>=12.5", true, false},
		{"request_throughput>13", false, false},
		{"inter_token_latency.p99<5", false, true},
	}
	for _, c := range cases {
		g, err := ParseGate(c.gate)
		if err != nil {
			t.Fatal(err)
		}
		r := EvaluateGates(s, []Gate{g})[0]
		if r.OK != c.ok || r.Missing != c.missing {
			t.Errorf("%s: ok %v missing %v (actual %v); want ok %v missing %v", c.gate, r.OK, r.Missing, r.Actual, c.ok, c.missing)
		}
	}
}

func TestParseGoodput(t *testing.T) {
	slos, err := ParseGoodput("time_to_first_token:400 inter_token_latency:20,output_token_throughput_per_user=50")
	if err != nil {
		t.Fatal(err)
	}
	if len(slos) != 3 || slos[0].Metric.Tag != "time_to_first_token" || slos[0].Threshold != 400 ||
		slos[2].Metric.Tag != "output_token_throughput_per_user" || !slos[2].Metric.LargerIsBetter {
		t.Fatalf("%+v", slos)
	}
	// The directions, as the objectives run (analyze's TestSLODirections checks them on values).
	if slos[0].Met == nil || slos[2].Met == nil || objectiveSource(slos[0].Metric, slos[0].Threshold) != "time_to_first_token <= 400.0" ||
		objectiveSource(slos[2].Metric, slos[2].Threshold) != "output_token_throughput_per_user >= 50.0" {
		t.Fatal("SLO directions wrong")
	}
	for in, want := range map[string]string{
		"":                                    "no objectives",
		"time_to_first_token":                 "metric_tag:value",
		"ttft:400":                            "unknown metric",
		"request_throughput:4":                "no single value per request",
		"inter_chunk_latency:4":               "no single value per request",
		"time_to_first_token:x":               "not a positive finite number (ms)",
		"time_to_first_token:nan":             `threshold "nan" is not a positive finite number`,
		"time_to_first_token:-5":              `threshold "-5" is not a positive finite number`,
		"time_to_first_token:0":               `threshold "0" is not a positive finite number`,
		"time_to_first_token:inf":             `threshold "inf" is not a positive finite number`,
		"time_to_frist_token:4":               "did you mean time_to_first_token?",
		"request_latency:1 request_latency:2": "given twice",
	} {
		if _, err := ParseGoodput(in); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--goodput") {
			t.Errorf("ParseGoodput(%q) error %v; want %q", in, err, want)
		}
	}
}

func TestServerGates(t *testing.T) {
	s := &analyze.Summary{ServerMetrics: []analyze.ServerMetric{
		{Name: "server.kv_cache_usage", Kind: "gauge", Max: 0.95, Avg: 0.5, Present: true},
		{Name: "server.preemptions", Kind: "counter", Rate: 2, Present: true},
		{Name: "gpu.utilization", Kind: "gauge", Avg: 0.85, Present: true},
	}, ServerSeries: []analyze.ServerMetricSeries{{Name: "server.kv_cache_usage"}}}
	for _, c := range []struct {
		expr    string
		ok      bool
		missing string
	}{
		{"server.kv_cache_usage.max<0.9", false, ""},
		{"server.kv_cache_usage.avg<0.9", true, ""},
		{"gpu.utilization.avg>0.8", true, ""},
		{"server.preemptions.rate<=1", false, ""},
		{"server.requests_waiting.max<4", false, "the scraped endpoints expose none of its families"},
		{"gpu.power.max<700", false, "no GPU telemetry"},
	} {
		g, err := ParseGate(c.expr)
		if err != nil {
			t.Fatalf("%s: %v", c.expr, err)
		}
		r := EvaluateGates(s, []Gate{g})[0]
		if r.OK != c.ok || r.Missing != (c.missing != "") || !strings.Contains(r.Why, c.missing) {
			t.Errorf("%s: %+v", c.expr, r)
		}
	}
	for _, c := range []struct{ expr, want string }{
		{"server.kv_cache.max<1", `unknown server metric "server.kv_cache"`},
		{"server.preemptions.max<1", "server.preemptions is a counter; its statistics are rate"},
		{"server.server_ttft.max<1", "server.server_ttft is a histogram; its statistics are avg, p50, p99"},
		{"gpu.utilisation.avg>1", `unknown server metric "gpu.utilisation"`},
	} {
		if _, err := ParseGate(c.expr); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.expr, err, c.want)
		}
	}
}

// TestGateOnUserMetric: a gate on a user metric parses against the registry it was
// registered on and is evaluated on the summary's statistics of it, like a built-in's.
func TestGateOnUserMetric(t *testing.T) {
	r := analyze.NewRegistry()
	d, err := r.Register(analyze.UserMetric{Name: "even_ttft_x2", Unit: "ms", Eval: func(*analyze.RequestView) (float64, bool) { return 0, false }})
	if err != nil {
		t.Fatal(err)
	}
	s := &analyze.Summary{Results: []analyze.Result{{MetricDef: d, Stats: &analyze.Stats{Count: 14, Min: 40, Max: 41.2, Avg: 40.6}}}}
	for gate, pass := range map[string]bool{"even_ttft_x2.max<100": true, "even_ttft_x2.min>100": false, "even_ttft_x2.count==14": true,
		"even_ttft_x2.avg>=40.6": true} {
		g, err := ParseGateOf(r, gate)
		if err != nil {
			t.Fatal(err)
		}
		if got := EvaluateGates(s, []Gate{g})[0]; got.Missing || got.OK != pass {
			t.Errorf("gate %s: %+v; want ok %v", gate, got, pass)
		}
	}
	if g, _ := ParseGateOf(r, "even_ttft_x2.p99.9<5"); g.Source() != `even_ttft_x2["p99.9"] < 5.0` {
		t.Errorf("gate runs as %q", g.Source())
	}
}
