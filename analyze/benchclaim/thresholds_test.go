package benchclaim

import (
	"strings"
	"testing"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/analyze/judge"
)

func mustGate(t *testing.T, expr string) judge.Gate {
	t.Helper()
	g, err := judge.ParseGate(expr)
	if err != nil {
		// server.* and gpu.* gates come with the server metrics: stand one in by its expression.
		return judge.Gate{Expr: expr, Metric: analyze.MetricDef{Tag: strings.SplitN(expr, ".", 2)[0]}}
	}
	return g
}

// TestClaimThresholds covers each branch of the claim's thresholds part.
func TestClaimThresholds(t *testing.T) {
	agreed := func(exprs ...string) *judge.GatesFile {
		f := &judge.GatesFile{Version: 1, Path: "gates.yaml"}
		for _, e := range exprs {
			f.Gates = append(f.Gates, judge.AgreedGate{Gate: e, Owner: "o", Reason: "r"})
		}
		return f
	}
	ttft, kv, gpu := "time_to_first_token.p99<400", "server.kv_cache_usage.max<0.9", "gpu.utilization.avg>50"
	rate := "request_throughput>1"
	cases := []struct {
		name   string
		gates  []string
		file   *judge.GatesFile
		status string
		want   string
	}{
		{"no gates", nil, nil, analyze.StatusNotValidated, "thresholds not validated: no gates"},
		{"latency without context", []string{ttft}, agreed(ttft), analyze.StatusNotValidated, "thresholds not validated: TTFT gate has no KV-cache/GPU context"},
		{"latency with KV context, unagreed", []string{ttft, kv}, nil, analyze.StatusNotValidated, "the gates are not agreed"},
		{"one gate not in the file", []string{ttft, kv}, agreed(ttft), analyze.StatusNotValidated, kv + " is not in gates.yaml"},
		{"agreed with KV context", []string{ttft, kv}, agreed(ttft, kv), analyze.StatusValidated, "2 gates agreed in gates.yaml, latency gates paired with 1 capacity gates"},
		{"agreed with GPU context", []string{ttft, gpu}, agreed(gpu, ttft), analyze.StatusValidated, "2 gates agreed"},
		{"agreed, no latency gate", []string{rate}, agreed(rate), analyze.StatusValidated, "1 gates agreed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var gates []judge.Gate
			for _, e := range c.gates {
				gates = append(gates, mustGate(t, e))
			}
			p := Evaluate(&analyze.Summary{}, Options{Gates: gates, Agreed: c.file}).Thresholds
			if p.Status != c.status || !strings.Contains(p.Evidence, c.want) {
				t.Errorf("got %s: %s; want %s containing %q", p.Status, p.Evidence, c.status, c.want)
			}
		})
	}
}
