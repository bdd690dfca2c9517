package profile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/export"
	"github.com/llmbench/llmbench/stats"
	"github.com/llmbench/llmbench/sweep"
)

// runsDir holds a point's repeats (AIPerf's multi-run layout); the aggregate files go beside
// it (aggregate_export.go).
const runsDir = "profile_runs"

// runner runs profile's points: one plan each, one run or several, and their aggregate.
type runner struct {
	opts Options
	// o is opts.Sweep; stdout and stderr are opts'.
	o              *SweepOptions
	stdout, stderr io.Writer
	started        bool // a run has started: later ones wait the cooldown first
	// sent says a replay ran (its exit status was not 2, replay's "nothing was run": bad
	// input, the preflight's refusal): the artifact directory then holds what it sent.
	sent bool
}

// runResult is one run of a point.
type runResult struct {
	label, dir string
	s          *analyze.Summary
	// replayCode is replay's exit status, code the run's (replay's, else analyze's).
	replayCode, code int
	// check is the run's validity (checkRun): it counts in the aggregate only when valid.
	check sweep.Run
}

// valid reports whether the run counts: it completed, at most --max-error-rate of its
// requests failed and its client kept the schedule.
func (r runResult) valid() bool { return r.check.Valid() }

// kinds maps analyze's problem kinds onto the sweep package's.
// Impossible server token counts make the run's token numbers invalid: a failed run.
var kinds = map[string]sweep.Kind{analyze.ProblemIncomplete: sweep.Failed, analyze.ProblemErrors: sweep.Errors, analyze.ProblemSchedule: sweep.Schedule,
	analyze.ProblemUsage: sweep.Failed}

// checkRun judges run: replay's and the analysis's exit status, then what analyze.Health
// finds in its summary at --max-error-rate (a crash, a worker that did not finish, failed
// requests above the bound, a schedule not kept unless --accept-schedule-miss).
func (r *runner) checkRun(run *runResult) {
	c := sweep.Run{Label: run.label}
	add := func(k sweep.Kind, text string) { c.Problems = append(c.Problems, sweep.Problem{Kind: k, Text: text}) }
	switch {
	case run.replayCode == 130:
		add(sweep.Interrupted, "interrupted (replay exited 130)")
	case run.replayCode != 0:
		add(sweep.Failed, fmt.Sprintf("replay exited %d", run.replayCode))
	case run.s == nil:
		add(sweep.Failed, fmt.Sprintf("the analysis failed (exit %d)", run.code))
	}
	if run.s != nil {
		for _, p := range analyze.Health(run.s, r.opts.MaxErrorRate) {
			if p.Kind == analyze.ProblemSchedule && r.opts.AcceptScheduleMiss {
				fmt.Fprintf(r.stderr, "profile: %s: %s; counted all the same (--accept-schedule-miss)\n", run.label, p.Text)
				continue
			}
			add(kinds[p.Kind], p.Text)
		}
	}
	run.check = c
}

// pointResult is everything one point measured.
type pointResult struct {
	point Point
	dir   string
	runs  []runResult
	code  int
	// metrics are the confidence statistics over the valid runs, by <tag>_<stat>; each
	// says over how many runs it was taken.
	metrics map[string]metricAgg
	// verdict says whether the point is valid (every run is: completed, errors within
	// --max-error-rate, schedule kept), which runs count and why the others do not.
	verdict sweep.Point
	valid   bool
	reasons []string
	// converged says why the repeats stopped early, "" when they did not.
	converged string
}

// metricAgg is one <tag>_<stat> over the runs.
type metricAgg struct {
	unit string
	c    stats.Confidence
}

// value is the mean of key over the runs, NaN when absent.
func (p *pointResult) value(key string) float64 {
	if m, ok := p.metrics[key]; ok {
		return m.c.Mean
	}
	return math.NaN()
}

// wait sleeps d between runs (never before the first), saying so.
func (r *runner) wait(d time.Duration) {
	if r.started && d > 0 {
		fmt.Fprintf(r.stderr, "profile: cooldown %v\n", d)
		time.Sleep(d)
	}
	r.started = true
}

// point measures one point in dir: its plan, then --num-profile-runs runs (fewer when they
// converge or one is interrupted), then the aggregate. With one run the run directory is
// dir itself, as a plain profile run; with several they are dir/profile_runs/run_NNNN and
// the aggregate files go to dir/aggregate.
func (r *runner) point(dir string, p Point) *pointResult {
	pr := &pointResult{point: p, dir: dir}
	if _, err := r.opts.Stages.Apply(p); err != nil {
		r.say(err)
		pr.code = 2
		return pr
	}
	planPath, code := r.placePlan(dir)
	if code != 0 {
		pr.code = code
		return pr
	}
	for i := 1; i <= r.o.Runs; i++ {
		label, runDir := fmt.Sprintf("run_%04d", i), dir
		if i == 1 {
			r.wait(r.o.PointCooldown)
		} else {
			r.wait(r.o.Cooldown)
		}
		if r.o.Runs > 1 {
			runDir = filepath.Join(dir, runsDir, label)
			if err := os.MkdirAll(filepath.Dir(runDir), 0o755); err != nil {
				r.say(err)
				pr.code = 2
				return pr
			}
			fmt.Fprintf(r.stderr, "profile: run %d of %d in %s\n", i, r.o.Runs, runDir)
		}
		s, rc, code := r.runOnce(planPath, runDir)
		run := runResult{label: label, dir: runDir, s: s, replayCode: rc, code: code}
		r.checkRun(&run)
		pr.runs = append(pr.runs, run)
		if rc == 130 || rc == 2 {
			break
		}
		if why := r.convergence(pr, i); why != "" {
			pr.converged = why
			fmt.Fprintf(r.stderr, "profile: %s\n", why)
			break
		}
	}
	pr.finish(r.o.Level)
	if r.o.Runs > 1 {
		if err := r.writeAggregate(pr); err != nil {
			r.say(err)
			pr.code = worse(pr.code, 1)
		}
		// Repeats with a run that does not count fail: the aggregate is over fewer runs
		// than asked for, and the runs left out say why, one line each.
		if !pr.valid {
			for _, why := range pr.reasons {
				fmt.Fprintf(r.stderr, "profile: INVALID RUN %s\n", why)
			}
			fmt.Fprintf(r.stderr, "profile: %d of %d runs valid in %s: the aggregate is over those only\n", len(pr.verdict.ValidRuns), len(pr.runs), pr.dir)
			pr.code = worse(pr.code, 1)
		}
	}
	return pr
}

// convergence says, after run i, whether the repeats may stop: "" to go on.
func (r *runner) convergence(pr *pointResult, i int) string {
	cv := r.o.Convergence
	if cv == nil || i < stats.MinRunsForConvergence(r.o.Runs) || i >= r.o.Runs {
		return ""
	}
	var vals []float64
	for _, run := range pr.runs {
		if !run.valid() {
			continue
		}
		if m, ok := runMetrics(run.s)[cv.Key()]; ok {
			vals = append(vals, m.v)
		}
	}
	c := stats.Summarize(vals, r.o.Level)
	ok, v, err := stats.Converged(c, cv.Mode, cv.Threshold)
	if err != nil || !ok {
		return ""
	}
	return fmt.Sprintf("converged after %d of %d runs: %s %s %.4g <= %g", i, r.o.Runs, cv.Key(), cv.Mode, v, cv.Threshold)
}

// finish computes the point's validity, exit status and aggregate from its runs (checked
// by checkRun): the aggregate is over the valid runs only, so a run whose requests failed
// never feeds a mean, and every metric says over how many runs it was taken.
func (p *pointResult) finish(level float64) {
	checks := make([]sweep.Run, len(p.runs))
	for i, run := range p.runs {
		p.code = worse(p.code, run.code)
		checks[i] = run.check
	}
	p.verdict = sweep.JudgePoint(checks)
	p.valid, p.reasons = p.verdict.Valid, p.verdict.Reasons
	var per []map[string]float64
	units := map[string]string{}
	for _, i := range p.verdict.ValidRuns {
		m := map[string]float64{}
		for k, uv := range runMetrics(p.runs[i].s) {
			m[k] = uv.v
			units[k] = uv.unit
		}
		per = append(per, m)
	}
	agg := stats.Aggregate(per, level)
	p.metrics = make(map[string]metricAgg, len(agg))
	for k, c := range agg {
		p.metrics[k] = metricAgg{unit: units[k], c: c}
	}
}

// worse is the exit status that says more of two: interrupted, bad input, failed, ok.
func worse(a, b int) int {
	rank := func(c int) int {
		switch c {
		case 0:
			return 0
		case 130:
			return 3
		case 2:
			return 2
		}
		return 1
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

type unitValue struct {
	v    float64
	unit string
}

// runMetrics flattens a run's results into <tag>_<stat> → value, AIPerf's aggregate keys
// (analyze.AggregateKeys).
func runMetrics(s *analyze.Summary) map[string]unitValue {
	out := map[string]unitValue{}
	for k, kv := range analyze.AggregateKeys(s) {
		out[k] = unitValue{kv.V, kv.Unit}
	}
	return out
}

// runCounts are the labels of a point's valid runs and its runs that do not count, with
// why (a run that completed but whose requests failed beyond --max-error-rate is one).
func (p *pointResult) runCounts() (ok []string, failed []failedRun) {
	failed = []failedRun{}
	for _, run := range p.runs {
		if run.valid() {
			ok = append(ok, run.label)
			continue
		}
		why := run.check.Reason()
		why = strings.TrimPrefix(why, run.label+": ")
		if run.code != 0 {
			why = fmt.Sprintf("exit %d: %s", run.code, why)
		}
		failed = append(failed, failedRun{run.label, why})
	}
	return ok, failed
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// pooled reads the per-request values of every successful run (its profile_export.jsonl:
// analyze's per-request metrics, failed requests left out) and computes the statistics of
// all of them together, percentiles by stats.PercentileSorted (analyze's definition). note
// says what was missing.
func (r *runner) pooled(p *pointResult) (map[string]pooledMetric, string) {
	all := map[string][]float64{}
	units := map[string]string{}
	per := map[string][]perRun{}
	var missing []string
	for _, run := range p.runs {
		if !run.valid() {
			continue
		}
		path := filepath.Join(run.dir, r.opts.ExportPrefix+export.SuffixRecords)
		vals, err := readRecordValues(path, units)
		if err != nil {
			missing = append(missing, err.Error())
			continue
		}
		for _, k := range sortedKeys(vals) {
			v := vals[k]
			all[k] = append(all[k], v...)
			per[k] = append(per[k], perRun{run.label, jnum(stats.Mean(v)), len(v)})
		}
	}
	out := map[string]pooledMetric{}
	for k, v := range all {
		slices.Sort(v)
		n := len(v)
		m := stats.Mean(v)
		std := stats.SampleStd(v, m)
		pc := func(q float64) jnum { return jnum(stats.PercentileSorted(v, q)) }
		out[k] = pooledMetric{Combined: pooledStats{jnum(m), jnum(std), pc(50), pc(90), pc(95), pc(99), n}, PerRun: per[k], Unit: units[k]}
	}
	note := ""
	if len(missing) > 0 {
		note = "left out (no per-request records; --export-level records writes them): " + strings.Join(missing, "; ")
	}
	return out, note
}

// record is what the pooled analysis reads of one profile_export.jsonl line.
type record struct {
	Metadata struct {
		Phase string `json:"benchmark_phase"`
	} `json:"metadata"`
	Metrics map[string]struct {
		Value json.RawMessage `json:"value"`
		Unit  string          `json:"unit"`
	} `json:"metrics"`
	Error json.RawMessage `json:"error"`
}

// readRecordValues reads the single-valued metrics of the valid profiling records of path
// (lists such as inter_chunk_latency are left out), by tag; units receives each tag's unit.
func readRecordValues(path string, units map[string]string) (map[string][]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string][]float64{}
	br := bufio.NewReader(f)
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(b)) > 0 {
			var rec record
			if jerr := json.Unmarshal(b, &rec); jerr != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, line, jerr)
			}
			if rec.Metadata.Phase == "profiling" && (len(rec.Error) == 0 || string(rec.Error) == "null") {
				for tag, m := range rec.Metrics {
					var v float64
					if json.Unmarshal(m.Value, &v) == nil {
						out[tag] = append(out[tag], v)
						units[tag] = m.Unit
					}
				}
			}
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
}
