package sweep

import (
	"fmt"
	"strings"
)

// Kind is why a run does not count.
type Kind int

// The kinds of Problem, in the order a probe judges them.
const (
	// Interrupted: the run was interrupted (Ctrl-C).
	Interrupted Kind = iota + 1
	// Failed: the run failed or did not complete whole (replay's or analyze's failure, a
	// crash, a worker or shard that did not finish, a damaged log, nothing measured).
	Failed
	// Schedule: the client did not keep its schedule; the numbers describe the client.
	Schedule
	// Errors: more requests failed than the user's bound (--max-error-rate) allows.
	Errors
)

// Why a probe stopped a search, or failed, before its SLAs were looked at: the probe's
// reason (search_history.json) and the search's convergence reason when it stops it.
const (
	ReasonClientSchedule = "client_schedule_not_kept" // the client could not keep up: the numbers describe it, not the server
	ReasonRunFailed      = "run_failed"               // a run failed or did not complete
	ReasonInterrupted    = "interrupted"              // a run was interrupted
)

// Problem is one reason a run does not count.
type Problem struct {
	Kind Kind
	// Text says what, as one clause: "17 of 20 profile requests failed (85.00%), above
	// --max-error-rate 0".
	Text string
}

// Run is one run of a point as its validity is judged: its label (run_0002) and what is
// wrong with it. A run is valid when nothing is: it completed, at most the user's bound of
// its requests failed and its client kept the schedule.
type Run struct {
	Label    string
	Problems []Problem
}

// Valid reports whether the run counts: nothing is wrong with it.
func (r Run) Valid() bool { return len(r.Problems) == 0 }

// Has reports whether one of the run's problems is of kind k.
func (r Run) Has(k Kind) bool {
	for _, p := range r.Problems {
		if p.Kind == k {
			return true
		}
	}
	return false
}

// Reason is the run's problems in one line, after its label: "run_0002: 17 of 20 profile
// requests failed (85.00%), above --max-error-rate 0"; "" for a valid run.
func (r Run) Reason() string {
	if r.Valid() {
		return ""
	}
	texts := make([]string, len(r.Problems))
	for i, p := range r.Problems {
		texts[i] = p.Text
	}
	return r.Label + ": " + strings.Join(texts, "; ")
}

// Point is the verdict on one point (a sweep point, a repeated run, a search probe) from
// its runs.
type Point struct {
	// Valid: the point ran and every run counts. An invalid point is never a best
	// configuration nor on the Pareto set, and fails a sweep or repeat.
	Valid bool
	// ValidRuns are the indices of the runs that count, in order: the aggregates are over
	// these runs only.
	ValidRuns []int
	// Reasons say why the point is invalid, one line per run that does not count (Run.Reason).
	Reasons []string
}

// JudgePoint judges a point by its runs: valid when there is at least one run and every
// run is valid.
func JudgePoint(runs []Run) Point {
	p := Point{Valid: len(runs) > 0}
	if len(runs) == 0 {
		p.Reasons = []string{"no run was made"}
	}
	for i, r := range runs {
		if r.Valid() {
			p.ValidRuns = append(p.ValidRuns, i)
			continue
		}
		p.Valid = false
		p.Reasons = append(p.Reasons, r.Reason())
	}
	return p
}

// Line is the point's verdict in one line for the console: "" when valid, else the
// reasons joined, with how many runs count when it repeats.
func (p Point) Line(runs int) string {
	if p.Valid {
		return ""
	}
	line := strings.Join(p.Reasons, "; ")
	if runs > 1 {
		line = fmt.Sprintf("%d of %d runs valid: %s", len(p.ValidRuns), runs, line)
	}
	return line
}

// Precheck decides a search probe from its runs before its SLAs are looked at. An
// interrupted, failed or client-limited run makes the probe Abort (the search stops there:
// the client, not the server, would set the answer), with ReasonInterrupted, ReasonRunFailed
// or ReasonClientSchedule; failed requests above the bound make it Fail, with the first such
// run's reason; decided is false when every run is fit to be judged on its SLAs.
func Precheck(runs []Run) (out Outcome, reason string, decided bool) {
	if len(runs) == 0 {
		return Abort, ReasonRunFailed, true
	}
	for _, k := range []struct {
		kind   Kind
		reason string
	}{{Interrupted, ReasonInterrupted}, {Failed, ReasonRunFailed}, {Schedule, ReasonClientSchedule}} {
		for _, r := range runs {
			if r.Has(k.kind) {
				return Abort, k.reason, true
			}
		}
	}
	for _, r := range runs {
		if r.Has(Errors) {
			return Fail, r.Reason(), true
		}
	}
	return Pass, "", false
}
