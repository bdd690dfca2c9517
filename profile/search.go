package profile

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/sweep"
)

// probeMetrics are the metrics each probe's record carries (means over its runs).
var probeMetrics = append([]string{"time_to_first_token_p95", "inter_token_latency_p95", "request_latency_p99"}, headline...)

// search runs the --search: every probe a full point (plan, runs, verdict) in its own
// directory, then search_history.json and the sweep aggregate over the probes.
func (r *runner) search(dir string) int {
	o := r.o
	dim := o.Dimension
	name := strings.ReplaceAll(dim, "-", "_")
	var points []*pointResult
	var records []probeRecord
	code := 0
	probe := func(x float64) (sweep.Outcome, float64, string) {
		i := len(points)
		p := Point{{Flag: dim, Name: name, Value: x}}
		pdir, err := r.pointDir(dir, fmt.Sprintf("search_iter_%04d", i), p)
		if err != nil {
			r.say(err)
			code = worse(code, 2)
			return sweep.Abort, math.NaN(), sweep.ReasonRunFailed
		}
		fmt.Fprintf(r.stderr, "profile: search probe %d: %s=%s in %s\n", i, name, strconv.FormatFloat(x, 'f', -1, 64), pdir)
		pr := r.point(pdir, p)
		points = append(points, pr)
		out, obj, why, slas := r.judge(pr)
		rel, _ := filepath.Rel(dir, pr.dir)
		rec := probeRecord{Index: i, Values: params(p), Feasible: out == sweep.Pass, Outcome: [...]string{"pass", "fail", "abort"}[out],
			Reason: why, SLAResults: slas, Valid: pr.valid, InvalidReasons: nonNil(pr.reasons), Metrics: map[string]jnum{}, ArtifactDir: rel}
		if o.Search == SearchMaxGoodput {
			rec.ObjectiveValues = []jnum{jnum(obj)}
		}
		for _, k := range probeMetrics {
			if m, ok := pr.metrics[k]; ok {
				rec.Metrics[k] = jnum(m.c.Mean)
			}
		}
		records = append(records, rec)
		fmt.Fprintf(r.stderr, "profile: search probe %d: %s=%s %s%s\n", i, name, strconv.FormatFloat(x, 'f', -1, 64), rec.Outcome, reasonSuffix(why))
		if out == sweep.Abort {
			code = worse(code, pr.code)
		}
		return out, obj, why
	}
	var res sweep.SearchResult
	if o.Search == SearchMaxGoodput {
		res = sweep.MaxObjective(o.Bounds, probe)
	} else {
		res = sweep.MaxUnderSLA(o.Bounds, probe)
	}
	// A fail at or below a passing value (or the reverse) says the server is not monotone here.
	for i := range records {
		for j := range records {
			vi, vj := res.Probes[i].Value, res.Probes[j].Value
			if records[i].Outcome == "pass" && records[j].Outcome == "fail" && vi >= vj {
				records[i].NonMonotonic, records[j].NonMonotonic = true, true
			}
		}
	}
	if err := r.writeSearch(dir, res, records); err != nil {
		r.say(err)
		code = worse(code, 1)
	}
	if err := r.writeSweep(dir, points); err != nil {
		r.say(err)
		code = worse(code, 1)
	}
	fmt.Fprintln(r.stdout, searchLine(o, name, res))
	if !res.Found {
		return worse(code, 1)
	}
	return code
}

func reasonSuffix(why string) string {
	if why == "" {
		return ""
	}
	return " (" + why + ")"
}

// searchLine says the search's answer in one line.
func searchLine(o *SweepOptions, name string, res sweep.SearchResult) string {
	num := func(v float64) string {
		if math.IsNaN(v) {
			return "none"
		}
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	what := "boundary"
	if o.Search == SearchMaxGoodput {
		what = "highest goodput at"
	}
	if !res.Found {
		passed := false
		var firstFail *sweep.Probe
		for i, p := range res.Probes {
			passed = passed || p.Outcome == sweep.Pass
			if p.Outcome != sweep.Pass && (firstFail == nil || p.Value < firstFail.Value) {
				firstFail = &res.Probes[i]
			}
		}
		if !passed && firstFail != nil {
			return fmt.Sprintf("Search %s: NO BOUNDARY: no probe passed (%s) after %d probes; %s=%s %s: %s", o.Search, res.Reason, len(res.Probes),
				name, num(firstFail.Value), [...]string{"passed", "failed", "aborted"}[firstFail.Outcome], firstFail.Reason)
		}
		return fmt.Sprintf("Search %s: NO BOUNDARY (%s) after %d probes; last passing %s=%s, first failing %s", o.Search, res.Reason, len(res.Probes), name, num(res.FeasibleMax), num(res.InfeasibleMin))
	}
	bracket := fmt.Sprintf("passing %s, failing %s", num(res.FeasibleMax), num(res.InfeasibleMin))
	if o.Search == SearchMaxGoodput {
		bracket = fmt.Sprintf("between %s and %s", num(res.FeasibleMax), num(res.InfeasibleMin))
	}
	return fmt.Sprintf("Search %s: %s %s=%s (%s; %s after %d probes, precision %s)", o.Search, what, name, num(res.Boundary),
		bracket, res.Reason, len(res.Probes), strconv.FormatFloat(o.Bounds.Precision, 'f', -1, 64))
}

// judge decides a probe from its runs' checks (sweep.Precheck): Abort when a run failed,
// did not complete or was interrupted, or the client did not keep its schedule (the probe
// then measured the client); Fail when a run's failed requests exceed the error bound
// (searchErrorBound); else Pass when every run met every SLA, else Fail with the first SLA
// that did not hold; a max-goodput probe whose goodput is 0 (no request met every SLO)
// fails too. objective is the mean goodput over the valid runs.
func (r *runner) judge(pr *pointResult) (sweep.Outcome, float64, string, []slaResult) {
	slas := []slaResult{}
	obj := pr.value("goodput_avg")
	checks := make([]sweep.Run, len(pr.runs))
	for i, run := range pr.runs {
		checks[i] = run.check
	}
	pre, preWhy, decided := sweep.Precheck(checks)
	if decided && pre == sweep.Abort {
		return pre, obj, preWhy, slas
	}
	out, why := sweep.Pass, ""
	for _, g := range r.o.SLAs {
		ok, sum, n := true, 0.0, 0
		for _, run := range pr.runs {
			res := analyze.EvaluateGates(run.s, []analyze.Gate{g.Gate})[0]
			ok = ok && res.OK && !res.Missing
			if !res.Missing {
				sum += res.Actual
				n++
			}
		}
		observed := math.NaN()
		if n > 0 {
			observed = sum / float64(n)
		}
		slas = append(slas, slaResult{g.SLA.String(), jnum(observed), ok})
		switch {
		case ok || out != sweep.Pass:
		case n < len(pr.runs):
			out, why = sweep.Fail, fmt.Sprintf("%s: not evaluable: %d of %d runs have no %s values", g.SLA, len(pr.runs)-n, len(pr.runs), g.Gate.Metric.Tag)
		default:
			out, why = sweep.Fail, fmt.Sprintf("%s: observed %s", g.SLA, fmtNum(observed, 2))
		}
	}
	// The error bound holds in every search: failed requests never pass a probe. Precheck
	// has judged it (analyze.Health at this bound); the row records it in the history.
	bound := r.opts.MaxErrorRate
	ok, sum := true, 0.0
	for _, run := range pr.runs {
		e := analyze.CheckErrorRate(run.s, bound)
		ok = ok && e.OK
		sum += e.Rate
	}
	sla := "error_rate<=" + strconv.FormatFloat(bound, 'g', -1, 64)
	observed := sum / float64(len(pr.runs))
	slas = append(slas, slaResult{sla, jnum(observed), ok})
	if decided { // failed requests above the bound: the run's own account says how many
		return pre, obj, preWhy, slas
	}
	if r.o.Search == SearchMaxGoodput && math.IsNaN(obj) {
		return sweep.Fail, obj, "no goodput measured", slas
	}
	if r.o.Search == SearchMaxGoodput && !(obj > 0) {
		// Nothing to maximise: a search where no probe had a good request has no answer.
		return sweep.Fail, obj, "goodput 0: no request met every --goodput SLO", slas
	}
	return out, obj, why, slas
}
