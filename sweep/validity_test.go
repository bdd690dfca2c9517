package sweep

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

// errs is a run whose requests failed beyond the bound.
func errs(label string) Run {
	return Run{Label: label, Problems: []Problem{{Errors, "17 of 20 profile requests failed (85.00%), above --max-error-rate 0"}}}
}

// TestJudgePoint: a point is valid only when it ran and every run is; the reasons say,
// one line per run, which runs do not count and why, and the aggregate is over the others.
func TestJudgePoint(t *testing.T) {
	ok := Run{Label: "run_0001"}
	cases := []struct {
		name      string
		runs      []Run
		valid     bool
		validRuns []int
		line      string
	}{
		{"one good run", []Run{ok}, true, []int{0}, ""},
		{"no run", nil, false, nil, "no run was made"},
		{"85% and 100% errors", []Run{ok, errs("run_0002"), {Label: "run_0003", Problems: []Problem{{Errors, "20 of 20 failed"}, {Schedule, "lag"}}}}, false, []int{0},
			"1 of 3 runs valid: run_0002: 17 of 20 profile requests failed (85.00%), above --max-error-rate 0; run_0003: 20 of 20 failed; lag"},
		{"a crashed run", []Run{{Label: "run_0001", Problems: []Problem{{Failed, "replay exited 1"}}}}, false, nil, "run_0001: replay exited 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := JudgePoint(c.runs)
			if p.Valid != c.valid || !reflect.DeepEqual(p.ValidRuns, c.validRuns) || p.Line(len(c.runs)) != c.line {
				t.Errorf("JudgePoint = %+v, line %q; want valid %v runs %v line %q", p, p.Line(len(c.runs)), c.valid, c.validRuns, c.line)
			}
		})
	}
}

// TestPrecheck: a probe with an interrupted, failed or client-limited run aborts the
// search; one whose requests failed beyond the bound fails it (the server failed, so more
// load is not better); otherwise its SLAs decide.
func TestPrecheck(t *testing.T) {
	sched := Run{Label: "run_0002", Problems: []Problem{{Schedule, "lag"}}}
	cases := []struct {
		name    string
		runs    []Run
		out     Outcome
		reason  string
		decided bool
	}{
		{"clean", []Run{{Label: "run_0001"}}, Pass, "", false},
		{"errors fail", []Run{{Label: "run_0001"}, errs("run_0002")}, Fail, "run_0002: 17 of 20 profile requests failed (85.00%), above --max-error-rate 0", true},
		{"schedule before errors", []Run{errs("run_0001"), sched}, Abort, ReasonClientSchedule, true},
		{"failed before schedule", []Run{sched, {Label: "r", Problems: []Problem{{Failed, "replay exited 1"}}}}, Abort, ReasonRunFailed, true},
		{"interrupted first", []Run{{Label: "r", Problems: []Problem{{Failed, "x"}, {Interrupted, "y"}}}}, Abort, ReasonInterrupted, true},
		{"no run", nil, Abort, ReasonRunFailed, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, reason, decided := Precheck(c.runs)
			if out != c.out || reason != c.reason || decided != c.decided {
				t.Errorf("Precheck = %v %q %v, want %v %q %v", out, reason, decided, c.out, c.reason, c.decided)
			}
		})
	}
}

// TestBestPointsAndPareto: invalid points never win, whatever their numbers, and a point
// lacking a metric (no successful request had it) neither wins on it nor stops the others
// from being compared on it.
func TestBestPointsAndPareto(t *testing.T) {
	best := []Objective{
		{Name: "best_throughput", Key: "rps", Maximize: true},
		{Name: "best_latency_p99", Key: "ttft_p99"},
		{Name: "best_latency_p99", Key: "e2e_p99"},
	}
	axes := [][2]Objective{{{Key: "tok", Maximize: true}, {Key: "tok_user", Maximize: true}}, {{Key: "rps", Maximize: true}, {Key: "e2e_p99"}}}
	values := []map[string]float64{
		{"rps": 10, "ttft_p99": 20, "e2e_p99": 40, "tok": 100, "tok_user": 50},
		{"rps": 0}, // every request failed: only the counts are left
		{"rps": 99, "ttft_p99": 1, "e2e_p99": 2, "tok": 999, "tok_user": 99}, // invalid: best everywhere
		{"rps": 19, "ttft_p99": 30, "e2e_p99": 60, "tok": 190, "tok_user": 45},
	}
	cases := []struct {
		name   string
		valid  []bool
		best   map[string]int
		pareto []int
		axis   string
	}{
		{"the failed point is invalid", []bool{true, false, false, true}, map[string]int{"best_throughput": 3, "best_latency_p99": 0}, []int{0, 3}, "tok"},
		{"the failed point counts but lacks TTFT", []bool{true, true, false, true}, map[string]int{"best_throughput": 3, "best_latency_p99": 0}, []int{0, 3}, "tok"},
		{"only the failed point is valid", []bool{false, true, false, false}, map[string]int{"best_throughput": 1}, nil, ""},
		{"none valid", []bool{false, false, false, false}, map[string]int{}, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := map[string]int{}
			for name, ch := range BestPoints(values, c.valid, best) {
				got[name] = ch.Point
				if ch.Value != values[ch.Point][ch.Objective.Key] {
					t.Errorf("%s: value %v, point %d has %v", name, ch.Value, ch.Point, values[ch.Point][ch.Objective.Key])
				}
			}
			if !reflect.DeepEqual(got, c.best) {
				t.Errorf("best %v, want %v", got, c.best)
			}
			front, on := ParetoFront(values, c.valid, axes)
			axis := ""
			if len(on) > 0 {
				axis = on[0].Key
			}
			if !reflect.DeepEqual(front, c.pareto) || axis != c.axis {
				t.Errorf("pareto %v on %q, want %v on %q", front, axis, c.pareto, c.axis)
			}
		})
	}
	// Without token metrics the Pareto falls back to requests/s against latency.
	noTok := []map[string]float64{{"rps": 10, "e2e_p99": 40}, {"rps": 19, "e2e_p99": 60}, {"rps": 9, "e2e_p99": 50}}
	if front, on := ParetoFront(noTok, nil, axes); !reflect.DeepEqual(front, []int{0, 1}) || on[0].Key != "rps" {
		t.Errorf("fallback pareto %v on %+v", front, on)
	}
}

// TestMaxObjectiveNoPass: a goodput search in which no probe passes finds nothing and says
// so, instead of a "peak".
func TestMaxObjectiveNoPass(t *testing.T) {
	for _, max := range []float64{64, 1} {
		r := MaxObjective(SearchOptions{Min: 1, Max: max, Integer: true, Precision: 0.05}, func(float64) (Outcome, float64, string) {
			return Fail, math.NaN(), "run_0001: 4 of 8 profile requests failed"
		})
		if r.Found || r.Reason != ReasonGoodputNoPass || !strings.Contains(r.Probes[0].Reason, "failed") {
			t.Errorf("max %v: %+v", max, r)
		}
	}
}
