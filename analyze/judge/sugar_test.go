package judge

import (
	"math"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/analyze/internal/analyzetest"
)

func TestSplitComparison(t *testing.T) {
	cases := []struct {
		in, lhs, op, rhs string
		ok               bool
	}{
		{in: "a.p99<4", lhs: "a.p99", op: "<", rhs: "4", ok: true},
		{in: " a.p99 <= 4 ", lhs: "a.p99", op: "<=", rhs: "4", ok: true},
		{in: "a>=-1e3", lhs: "a", op: ">=", rhs: "-1e3", ok: true},
		{in: "a==b", lhs: "a", op: "==", rhs: "b", ok: true},
		{in: "a=>4", lhs: "a=", op: ">", rhs: "4", ok: true}, // "=>" is no operator: > is the first
		{in: "a<4<5", lhs: "a", op: "<", rhs: "4<5", ok: true},
		{in: "<4", lhs: "", op: "<", rhs: "4", ok: true},
		{in: "a=4", ok: false},
		{in: "", ok: false},
	}
	for _, c := range cases {
		lhs, op, rhs, ok := splitComparison(c.in)
		if ok != c.ok || (ok && (lhs != c.lhs || op != c.op || rhs != c.rhs)) {
			t.Errorf("splitComparison(%q) = %q %q %q %v; want %q %q %q %v", c.in, lhs, op, rhs, ok, c.lhs, c.op, c.rhs, c.ok)
		}
	}
}

func TestSplitRef(t *testing.T) {
	cases := []struct {
		in   string
		want ref
	}{
		{"time_to_first_token", ref{name: "time_to_first_token"}},
		{"time_to_first_token.p99", ref{name: "time_to_first_token", stat: "p99", hasStat: true}},
		{"request_latency.p99.9", ref{name: "request_latency", stat: "p99.9", hasStat: true}},
		{"time_to_first_token.", ref{name: "time_to_first_token", hasStat: true}},
		{"server.kv_cache_usage.p99", ref{name: "server.kv_cache_usage", stat: "p99", hasStat: true}},
		{"server.kv_cache_usage", ref{name: "server.kv_cache_usage"}},
		{"server.kv_cache_usage.p99.9", ref{name: "server.kv_cache_usage", stat: "p99.9", hasStat: true}},
		{"gpu.power.avg", ref{name: "gpu.power", stat: "avg", hasStat: true}},
		{"server.", ref{name: "server."}},
		{"server", ref{name: "server"}},
		{"", ref{}},
	}
	for _, c := range cases {
		if got := splitRef(c.in); got != c.want {
			t.Errorf("splitRef(%q) = %+v; want %+v", c.in, got, c.want)
		}
	}
}

func TestResolve(t *testing.T) {
	r := analyzetest.Registry(t)
	all := scopeMetrics | scopeServer
	cases := []struct {
		name  string
		sc    scope
		found bool
		kind  string // server kind, "" for a registry metric
		stats int    // how many statistics (0: a single value)
	}{
		{"time_to_first_token", all, true, "", len(analyze.StatNames)},
		{"request_count", all, true, "", 0},
		{"first_gap_ms", all, true, "", len(analyze.StatNames)}, // a user metric resolves like a built-in
		{"first_gap_ms", scopePerRequest, true, "", len(analyze.StatNames)},
		{"inter_chunk_latency", scopePerRequest, false, "", 0}, // several values per request
		{"vllm_inter_token_latency", scopePerRequest, false, "", 0},
		{"genai_perf_time_to_first_token", scopePerRequest, true, "", len(analyze.StatNames)},
		{"request_count", scopePerRequest, false, "", 0},
		{"server.kv_cache_usage", all, true, "gauge", 5},
		{"server.generation_tokens", all, true, "counter", 1},
		{"server.server_ttft", all, true, "histogram", 3},
		{"server.prefix_cache_hit_rate", all, true, "ratio", 1},
		{"gpu.power", all, true, "gauge", 5},
		{"server.kv_cache_usage", scopeMetrics, false, "", 0},
		{"server.nope", all, false, "", 0},
		{"nope", all, false, "", 0},
		{"", all, false, "", 0},
	}
	for _, c := range cases {
		tg, ok := resolve(r, c.name, c.sc)
		if ok != c.found || (ok && (tg.kind != c.kind || len(tg.stats()) != c.stats)) {
			t.Errorf("resolve(%q, %d) = %+v %v; want found %v kind %q with %d statistics", c.name, c.sc, tg, ok, c.found, c.kind, c.stats)
		}
	}
	if n := names(r, scopePerRequest); !contains(n, "first_gap_ms") || contains(n, "inter_chunk_latency") || contains(n, "server.kv_cache_usage") {
		t.Errorf("per-request names %v", n)
	}
	if n := names(r, scopeMetrics|scopeServer); !contains(n, "first_gap_ms") || !contains(n, "server.kv_cache_usage") || !contains(n, "gpu.power") {
		t.Errorf("gate names %v", n)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestStatistic(t *testing.T) {
	dist, _ := resolve(nil, "time_to_first_token", scopeMetrics)
	gauge, _ := resolve(nil, "server.kv_cache_usage", scopeServer)
	counter, _ := resolve(nil, "server.generation_tokens", scopeServer)
	cases := []struct {
		t        target
		in, want string
		ok       bool
	}{
		{dist, "p99", "p99", true},
		{dist, "mean", "avg", true},
		{dist, "p99_9", "p99.9", true},
		{dist, "p999", "p99.9", true},
		{dist, "p99.9", "p99.9", true},
		{dist, "count", "count", true},
		{dist, "p98", "p98", false},
		{dist, "rate", "rate", false},
		{gauge, "mean", "avg", true},
		{gauge, "p50", "p50", true},
		{gauge, "p99_9", "p99_9", false},
		{gauge, "rate", "rate", false},
		{counter, "rate", "rate", true},
		{counter, "avg", "avg", false},
	}
	for _, c := range cases {
		got, ok := c.t.statistic(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("%s.statistic(%q) = %q %v; want %q %v", c.t.def.Tag, c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestParseFiniteAndPairs(t *testing.T) {
	for in, want := range map[string]bool{"4": true, "-4.5": true, "1e3": true, "0x10": false, "0x1p4": true, "nan": false, "NaN": false,
		"inf": false, "+Inf": false, "-inf": false, "1e400": false, "": false, "4ms": false, " 4": false} {
		if _, ok := parseFinite(in); ok != want {
			t.Errorf("parseFinite(%q) ok %v; want %v", in, ok, want)
		}
	}
	pairs := []struct {
		in, name, value string
		ok              bool
	}{
		{"a:1", "a", "1", true}, {"a=1", "a", "1", true}, {"a:1:2", "a", "1:2", true}, {"a=b:1", "a=b", "1", true},
		{"a", "", "", false}, {"a:", "", "", false}, {":1", "", "", false}, {"=1", "", "", false},
	}
	for _, c := range pairs {
		name, value, ok := cutPair(c.in)
		if ok != c.ok || (ok && (name != c.name || value != c.value)) {
			t.Errorf("cutPair(%q) = %q %q %v; want %q %q %v", c.in, name, value, ok, c.name, c.value, c.ok)
		}
	}
	if got := splitList(" a:1,b:2\tc:3 ,, "); len(got) != 3 || got[2] != "c:3" {
		t.Errorf("splitList: %q", got)
	}
}

// The gate and goodput syntaxes over a registry with a user metric: it is named, checked
// and suggested like a built-in one.
func TestParseWithUserMetric(t *testing.T) {
	r := analyzetest.Registry(t)
	gates := []struct {
		in, tag, stat, err string
	}{
		{in: "first_gap_ms.p99<5", tag: "first_gap_ms", stat: "p99"},
		{in: "first_gap_ms.mean<=5", tag: "first_gap_ms", stat: "avg"},
		{in: "first_gap_ms<5", err: "first_gap_ms is a distribution; name a statistic"},
		{in: "first_gap_ms.p98<5", err: `unknown statistic "p98"`},
		{in: "first_gap_mss.p99<5", err: `unknown metric "first_gap_mss" (did you mean first_gap_ms?`},
		{in: "time_to_first_token.p99<4", tag: "time_to_first_token", stat: "p99"},
		{in: "server.kv_cache_usage.p99<0.9", tag: "server.kv_cache_usage", stat: "p99"},
	}
	for _, c := range gates {
		g, err := ParseGateOf(r, c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("ParseGate(%q) error %v; want %q", c.in, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("ParseGate(%q): %v", c.in, err)
		case c.err == "" && (g.Metric.Tag != c.tag || g.Stat != c.stat):
			t.Errorf("ParseGate(%q) = %s.%s", c.in, g.Metric.Tag, g.Stat)
		}
	}
	if _, err := ParseGate("first_gap_ms.p99<5"); err == nil || !strings.Contains(err.Error(), "unknown metric") {
		t.Errorf("the built-ins alone know no user metric: %v", err)
	}
	slos, err := ParseGoodputOf(r, "first_gap_ms:5 time_to_first_token:400")
	if err != nil || len(slos) != 2 || slos[0].Metric.Tag != "first_gap_ms" || !has(r, slos[0].Metric) {
		t.Fatalf("ParseGoodput: %+v %v", slos, err)
	}
	if _, err := ParseGoodputOf(r, "first_gap_m:5"); err == nil || !strings.Contains(err.Error(), "did you mean first_gap_ms?") || !strings.Contains(err.Error(), "first_gap_ms") {
		t.Errorf("goodput typo: %v", err)
	}
	f, err := ParseGatesFileOf(r, []byte("version: 1\ngates:\n  - gate: first_gap_ms.p50<5\n    owner: me\n    reason: why\n"), "g.yaml")
	if err != nil || f.Gates[0].Parsed.Metric.Tag != "first_gap_ms" {
		t.Errorf("gates file: %+v %v", f, err)
	}
	if _, err := ParseGatesFile([]byte("version: 1\ngates:\n  - gate: first_gap_ms.p50<5\n    owner: me\n    reason: why\n"), "g.yaml"); err == nil ||
		!strings.Contains(err.Error(), "--gates g.yaml line 3") {
		t.Errorf("gates file without the metric: %v", err)
	}
}

// A server gate without a statistic, or with a distribution's p99.9, says which statistics
// the metric has. Before the one parser it said the server metric "server" (or
// "server.kv_cache_usage.p99") was unknown.
func TestParseServerGateStatistics(t *testing.T) {
	for in, want := range map[string]string{
		"server.kv_cache_usage<0.9":       "server.kv_cache_usage is a gauge; its statistics are avg, min, max, p50, p99",
		"server.kv_cache_usage.p99.9<0.9": "server.kv_cache_usage is a gauge; its statistics are avg, min, max, p50, p99",
		"gpu.power<400":                   "gpu.power is a gauge; its statistics are avg, min, max, p50, p99",
		"server.generation_tokens>1":      "server.generation_tokens is a counter; its statistics are rate",
	} {
		if _, err := ParseGate(in); err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "--gate ") {
			t.Errorf("ParseGate(%q) error %v; want %q", in, err, want)
		}
	}
}

// has reports whether d is r's metric of its id (not one of another registry).
func has(r *analyze.Registry, d analyze.MetricDef) bool {
	x, ok := r.Lookup(d.Tag)
	return ok && x.ID == d.ID
}

// FuzzParseExpressions: any text given to --gate or --goodput parses, against a registry with
// a user metric, to what the grammar allows, or to an error naming the flag; never a panic.
func FuzzParseExpressions(f *testing.F) {
	for _, s := range []string{"time_to_first_token.p99<400", "first_gap_ms.p99.9>=1e3", "server.kv_cache_usage.max<0.9",
		"gpu.power<4", "request_count==3", "time_to_first_token:400 first_gap_ms=5", "a<b<c", "server.", ".<", ":", "\x00<1"} {
		f.Add(s)
	}
	r := analyze.NewRegistry()
	if _, err := r.Register(analyze.UserMetric{Name: "first_gap_ms", Eval: func(*analyze.RequestView) (float64, bool) { return 0, false }}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if g, err := ParseGateOf(r, s); err != nil {
			if !strings.HasPrefix(err.Error(), "--gate ") {
				t.Fatalf("gate error does not name the flag: %v", err)
			}
		} else {
			tg, ok := resolve(r, g.Metric.Tag, scopeMetrics|scopeServer)
			if st, has := tg.statistic(g.Stat); !ok || (tg.stats() != nil && (!has || st != g.Stat)) || math.IsNaN(g.Value) || math.IsInf(g.Value, 0) {
				t.Fatalf("accepted %q as %+v", s, g)
			}
		}
		if slos, err := ParseGoodputOf(r, s); err != nil {
			if !strings.HasPrefix(err.Error(), "--goodput") {
				t.Fatalf("goodput error does not name the flag: %v", err)
			}
		} else {
			for _, o := range slos {
				if !o.Metric.OneValue() || !(o.Threshold > 0) || math.IsInf(o.Threshold, 0) || !has(r, o.Metric) {
					t.Fatalf("accepted %q as %+v", s, o)
				}
			}
		}
	})
}
