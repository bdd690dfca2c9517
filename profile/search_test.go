package profile

import (
	"math"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/stats"
	"github.com/llmbench/llmbench/sweep"
)

// summaryWith is a run summary whose TTFT p95 is ttft95 ms, with errors of requests failed.
func summaryWith(t *testing.T, ttft95 float64, errors, requests int64, kept bool) *analyze.Summary {
	t.Helper()
	def, ok := analyze.LookupMetric("time_to_first_token")
	gp, _ := analyze.LookupMetric("goodput")
	if !ok {
		t.Fatal("no time_to_first_token")
	}
	st := &analyze.Stats{Count: requests}
	st.P[7] = ttft95 // p95
	s := &analyze.Summary{Results: []analyze.Result{{MetricDef: def, Stats: st}, {MetricDef: gp, Value: ttft95 / 10}}}
	s.Counts.Profile, s.Counts.GateErrors, s.Counts.Valid = requests, errors, requests-errors
	s.RunStatus = "complete"
	s.Verdict = analyze.Verdict{Known: true, Kept: kept}
	if !kept {
		s.Verdict.Reasons = []string{"dispatch lag p99 9 ms over 1 ms"}
	}
	return s
}

// TestJudge: a probe passes when every run meets every SLA and the error bound; one whose
// requests failed beyond the bound fails; one that the client could not keep up with, or
// whose run failed, stops the search instead of counting as a failure.
func TestJudge(t *testing.T) {
	ttft, _ := sweep.ParseSLA("time_to_first_token:p95:le:25")
	g, err := analyze.ParseGate(ttft.String())
	if err != nil {
		t.Fatal(err)
	}
	o := &SweepOptions{SLAs: []SLAGate{{SLA: ttft, Gate: g}}, MaxErrorRate: 0.1, Level: 0.95, Search: SearchMaxConcurrency}
	r := &runner{o: o, opts: Options{Sweep: o, MaxErrorRate: ErrorBound(o.MaxErrorRate, 0, false)}}
	if r.opts.MaxErrorRate != 0.1 {
		t.Fatalf("--error-rate-sla 0.1 does not bound the probes: %v", r.opts.MaxErrorRate)
	}
	type run struct {
		ttft95       float64
		errors       int64
		kept, failed bool
	}
	cases := []struct {
		name   string
		runs   []run
		want   sweep.Outcome
		reason string
	}{
		{"pass", []run{{20, 0, true, false}, {24, 1, true, false}}, sweep.Pass, ""},
		{"one run over the SLA", []run{{20, 0, true, false}, {30, 0, true, false}}, sweep.Fail, "time_to_first_token.p95<=25: observed 25.00"},
		{"error rate", []run{{20, 2, true, false}}, sweep.Fail, "run: 2 of 10 profile requests failed (20.00%), above --max-error-rate 0.1"},
		{"client could not keep up", []run{{20, 0, true, false}, {90, 0, false, false}}, sweep.Abort, sweep.ReasonClientSchedule},
		{"run failed", []run{{20, 0, true, true}}, sweep.Abort, sweep.ReasonRunFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := &pointResult{}
			for i, rn := range c.runs {
				rr := runResult{label: "run", s: summaryWith(t, rn.ttft95, rn.errors, 10, rn.kept)}
				if rn.failed {
					rr.replayCode, rr.code = 1, 1
				}
				_ = i
				r.checkRun(&rr)
				p.runs = append(p.runs, rr)
			}
			p.finish(0.95)
			out, obj, why, slas := r.judge(p)
			if out != c.want || why != c.reason {
				t.Fatalf("judge = %v %q, want %v %q (slas %+v)", out, why, c.want, c.reason, slas)
			}
			// A probe whose requests failed has no valid run: no objective to offer.
			if c.want != sweep.Abort && (len(slas) != 2 || math.IsNaN(obj) != (c.name == "error rate")) {
				t.Errorf("sla results %+v, objective %v", slas, obj)
			}
		})
	}
	if !strings.Contains(searchLine(&SweepOptions{Search: SearchMaxConcurrency}, "concurrency", sweep.SearchResult{Reason: sweep.ReasonClientSchedule, FeasibleMax: 16, InfeasibleMin: math.NaN()}), "NO BOUNDARY (client_schedule_not_kept)") {
		t.Error("searchLine does not say there is no boundary")
	}
}

// TestConvergence: the repeats stop once the metric's successful runs agree, after min(3, N)
// runs; a failed run (no summary) is left out, not a crash.
func TestConvergence(t *testing.T) {
	g, err := analyze.ParseGate("time_to_first_token.p95>=0")
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{o: &SweepOptions{Runs: 5, Level: 0.95, Convergence: &Convergence{Gate: g, Mode: stats.ModeCV, Threshold: 0.05}}}
	p := &pointResult{}
	add := func(ttft float64, failed bool) {
		rr := runResult{label: "run", s: summaryWith(t, ttft, 0, 10, true)}
		if failed {
			rr.s, rr.replayCode, rr.code = nil, 1, 1
		}
		r.checkRun(&rr)
		p.runs = append(p.runs, rr)
	}
	add(100, false)
	add(0, true)
	if why := r.convergence(p, 2); why != "" {
		t.Fatalf("converged after 2 runs: %s", why)
	}
	add(101, false)
	if why := r.convergence(p, 3); !strings.Contains(why, "converged after 3 of 5 runs: time_to_first_token_p95 cv 0.007036 <= 0.05") {
		t.Fatalf("after 3 runs: %q", why)
	}
	add(200, false) // CV now far above 5%
	if why := r.convergence(p, 4); why != "" {
		t.Fatalf("converged with a spread: %s", why)
	}
}

// TestJudgeGoodput: a max-goodput probe whose goodput is 0 (no request met every --goodput
// SLO) fails, so a search in which none did says there is no answer (exit 1) instead of
// naming the "highest goodput" among zeros; a probe with goodput passes with it as the
// objective.
func TestJudgeGoodput(t *testing.T) {
	o := &SweepOptions{MaxErrorRate: -1, Level: 0.95, Search: SearchMaxGoodput}
	r := &runner{o: o, opts: Options{Sweep: o}}
	for _, c := range []struct {
		name    string
		goodput float64 // summaryWith's goodput is ttft95 / 10
		want    sweep.Outcome
		reason  string
	}{
		{"goodput", 2, sweep.Pass, ""},
		{"no request met the SLOs", 0, sweep.Fail, "goodput 0: no request met every --goodput SLO"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &pointResult{}
			rr := runResult{label: "run", s: summaryWith(t, c.goodput*10, 0, 10, true)}
			r.checkRun(&rr)
			p.runs = append(p.runs, rr)
			p.finish(0.95)
			out, obj, why, _ := r.judge(p)
			if out != c.want || why != c.reason || obj != c.goodput {
				t.Fatalf("judge = %v %v %q, want %v %v %q", out, obj, why, c.want, c.goodput, c.reason)
			}
		})
	}
	// Every probe at goodput 0: no answer.
	res := sweep.MaxObjective(sweep.SearchOptions{Min: 1, Max: 8, Integer: true, Precision: 0.05}, func(float64) (sweep.Outcome, float64, string) {
		p := &pointResult{}
		rr := runResult{label: "run", s: summaryWith(t, 0, 0, 10, true)}
		r.checkRun(&rr)
		p.runs = append(p.runs, rr)
		p.finish(0.95)
		out, obj, why, _ := r.judge(p)
		return out, obj, why
	})
	if line := searchLine(o, "concurrency", res); res.Found || !strings.Contains(line, "NO BOUNDARY: no probe passed") || !strings.Contains(line, "goodput 0") {
		t.Errorf("found %v: %s", res.Found, line)
	}
}

// TestAcceptScheduleMiss: analyze's --accept-schedule-miss reaches the run's validity: a
// run whose client did not keep its schedule is invalid by default and counts, said on
// stderr, when the miss is accepted; failed requests above the bound still make it invalid.
func TestAcceptScheduleMiss(t *testing.T) {
	for _, c := range []struct {
		name         string
		accept       bool
		errors       int64
		valid, notes bool
	}{
		{"by default", false, 0, false, false},
		{"accepted", true, 0, true, true},
		{"accepted, errors above the bound", true, 3, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stderr strings.Builder
			o := &SweepOptions{Level: 0.95}
			r := &runner{o: o, opts: Options{Sweep: o, AcceptScheduleMiss: c.accept}, stderr: &stderr}
			rr := runResult{label: "run_0001", s: summaryWith(t, 20, c.errors, 10, false)}
			r.checkRun(&rr)
			if rr.valid() != c.valid {
				t.Errorf("valid = %v, want %v (%s)", rr.valid(), c.valid, rr.check.Reason())
			}
			if rr.check.Has(sweep.Schedule) == c.accept {
				t.Errorf("schedule problem counted = %v with accept %v", rr.check.Has(sweep.Schedule), c.accept)
			}
			if got := strings.Contains(stderr.String(), "counted all the same (--accept-schedule-miss)"); got != c.notes {
				t.Errorf("stderr %q: says the miss was accepted = %v, want %v", stderr.String(), got, c.notes)
			}
		})
	}
}
