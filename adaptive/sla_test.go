package adaptive

import (
	"math"
	"strings"
	"testing"
)

func TestParseSLA(t *testing.T) {
	cases := []struct {
		in   string
		want SLA
		err  string
	}{
		{in: "request_latency:p95:le:30000", want: SLA{"request_latency", "p95", "<=", 30000, "request_latency:p95"}},
		{in: "ttft:p95:lt:120", want: SLA{"ttft", "p95", "<", 120, "ttft:p95"}},
		{in: "goodput:avg:ge:20", want: SLA{"goodput", "avg", ">=", 20, "goodput:avg"}},
		{in: "error_rate:avg:gt:0.5", want: SLA{"error_rate", "avg", ">", 0.5, "error_rate:avg"}},
		{in: " TTFT : P95 : <= : 1e2 ", want: SLA{"ttft", "p95", "<=", 100, "ttft:p95"}},
		{in: "itl:p99:>=:5", want: SLA{"itl", "p99", ">=", 5, "itl:p99"}},
		{in: "ttft:p95:le", err: `adaptive-scale SLA "ttft:p95:le": want METRIC:STAT:OP:VALUE`},
		{in: "ttft:p95:eq:1", err: `operator "eq": want lt, le, gt or ge`},
		{in: "ttft:p95:le:fast", err: `threshold "fast" is not a number`},
		{in: "ttft:p95:le:NaN", err: `threshold "NaN" is not a number`},
		{in: ":p95:le:1", err: "with a metric and a statistic"},
	}
	for _, c := range cases {
		got, err := ParseSLA(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "\n") {
				t.Errorf("ParseSLA(%q) error %v, want one line with %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseSLA(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
			continue
		}
		back, err := ParseSLA(got.String())
		if err != nil || back != got {
			t.Errorf("ParseSLA(%q.String() = %q) = %+v, %v", c.in, got.String(), back, err)
		}
	}
}

func TestParseSLAsRefusesTwoBoundsOfOneSpelling(t *testing.T) {
	if _, err := ParseSLAs([]string{"ttft:p95:le:100", "TTFT:p95:le:200"}); err == nil || !strings.Contains(err.Error(), "already bounded") {
		t.Fatalf("error %v", err)
	}
	got, err := ParseSLAs([]string{"ttft:p95:le:100", "ttft:p99:le:200"})
	if err != nil || len(got) != 2 {
		t.Fatalf("%+v, %v", got, err)
	}
}

func TestHoldsAndMargin(t *testing.T) {
	cases := []struct {
		spec   string
		v      float64
		holds  bool
		margin float64
	}{
		{"ttft:p95:le:120", 90, true, 0.25},
		{"ttft:p95:le:120", 120, true, 0},
		{"ttft:p95:lt:120", 120, false, 0},
		{"ttft:p95:le:120", 150, false, -0.25},
		{"goodput:avg:ge:20", 25, true, 0.25},
		{"goodput:avg:gt:20", 20, false, 0},
		{"goodput:avg:ge:20", 10, false, -0.5},
		{"error_rate:avg:le:0", 0, true, 0},
		{"error_rate:avg:le:0", 0.25, false, -0.25},
		{"ttft:p95:le:120", math.NaN(), false, math.Inf(-1)},
	}
	for _, c := range cases {
		s, err := ParseSLA(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		if h, m := s.Holds(c.v), s.Margin(c.v); h != c.holds || math.Abs(m-c.margin) > 1e-12 && !(math.IsInf(m, -1) && math.IsInf(c.margin, -1)) {
			t.Errorf("%s at %v: holds %v margin %v, want %v %v", c.spec, c.v, h, m, c.holds, c.margin)
		}
	}
}
