package judge

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/rawlog"
)

// The kinds of Problem, the ways a run can fall short of a whole, successful measurement.
const (
	// ProblemIncomplete: the run did not complete whole: it crashed or was interrupted, a
	// worker did not finish, a shard or log is missing or damaged, or nothing was measured.
	ProblemIncomplete = "incomplete"
	// ProblemErrors: more profile requests failed than the user's bound allows.
	ProblemErrors = "errors"
	// ProblemSchedule: the client did not keep its schedule (Verdict), so the numbers
	// describe the client.
	ProblemSchedule = "schedule"
	// ProblemUsage: the token counts, and so the token throughputs, rest on server counts
	// that are negative or beyond what the responses' text could encode (analyze/usage.go).
	ProblemUsage = "usage"
)

// Problem is one reason a run's numbers are not a whole, successful measurement of the
// server: what a sweep point, a repeat, a search probe or a comparison must not pass.
type Problem struct {
	// Kind is ProblemIncomplete, ProblemErrors, ProblemUsage or ProblemSchedule.
	Kind string
	// Text says what, as one clause for a one-line message, e.g. "17 of 20 profile
	// requests failed (85.00%, most: http 500 ×17), above --max-error-rate 0".
	Text string
}

// Health lists what is wrong with the analysed run s, incomplete first, then errors, then
// the schedule; none when the run completed, every worker, shard and log is whole, at most
// maxErrorRate of its profile requests failed (analyze.CheckErrorRate, the --max-error-rate gate) and
// the client kept its schedule. It is the one rule the multi-run verdicts (profile's sweeps,
// repeats and searches, analyze compare) judge a run by.
func Health(s *analyze.Summary, maxErrorRate float64) []Problem {
	var out []Problem
	incomplete := func(format string, args ...any) {
		out = append(out, Problem{Kind: ProblemIncomplete, Text: fmt.Sprintf(format, args...)})
	}
	statuses := s.RunStatuses()
	for i, status := range statuses {
		run := "the run"
		if len(statuses) > 1 && i < len(s.RunDirs) {
			run = "shard " + s.RunDirs[i]
		}
		switch status {
		case rawlog.StatusComplete:
		case rawlog.StatusRunning:
			incomplete("%s crashed (run.json status is still %q: replay's coordinator died before the run ended)", run, status)
		case rawlog.StatusInterrupted:
			incomplete("%s was interrupted (run.json status %q)", run, status)
		case rawlog.StatusUnknown, "":
			incomplete("%s's run.json was rebuilt from the logs (status %q), so whether it completed is not known", run, rawlog.StatusUnknown)
		default:
			incomplete("%s did not complete (run.json status %q)", run, status)
		}
	}
	var workers []string
	runs := map[int]bool{}
	for _, w := range s.Workers {
		runs[w.Run] = true
	}
	for _, w := range s.Workers {
		if w.Status == rawlog.StatusComplete || (w.Status == rawlog.StatusInterrupted && s.WasCancelled) {
			continue
		}
		name := "worker " + strconv.Itoa(w.Worker)
		if len(runs) > 1 {
			name = fmt.Sprintf("shard run %d worker %d", w.Run, w.Worker)
		}
		status := w.Status
		if status == "" {
			status = "no status"
		}
		workers = append(workers, name+" ("+status+")")
	}
	if len(workers) > 0 {
		incomplete("%s did not finish cleanly: %s", plural(len(workers), "worker"), strings.Join(workers, ", "))
	}
	if sh := s.Shards; sh != nil && len(sh.Missing) > 0 {
		idx := make([]string, len(sh.Missing))
		for i, m := range sh.Missing {
			idx[i] = strconv.Itoa(m)
		}
		incomplete("%d of %d shards missing (index %s)", len(sh.Missing), sh.Count, strings.Join(idx, ", "))
	}
	if len(s.Damaged) > 0 {
		incomplete("damaged logs, the results leave out what they held: %s", strings.Join(s.Damaged, ", "))
	}
	if s.Counts.Profile == 0 {
		incomplete("no profile request was measured")
	}
	if e := analyze.CheckErrorRate(s, maxErrorRate); !e.OK {
		most := ""
		if len(s.Errors) > 0 {
			top := s.Errors[0]
			kind := top.Kind
			if code := strconv.Itoa(top.Code); top.Code > 0 && !strings.Contains(kind, code) {
				kind += " " + code
			}
			most = fmt.Sprintf(", most: %s ×%d", kind, top.Count)
		}
		out = append(out, Problem{Kind: ProblemErrors, Text: fmt.Sprintf("%d of %d profile requests failed (%s%%%s), above --max-error-rate %s",
			e.Errors, e.Total, strconv.FormatFloat(e.Rate*100, 'f', 2, 64), most, strconv.FormatFloat(maxErrorRate, 'g', -1, 64))})
	}
	if u := s.Usage; u.Rests && u.Bad() {
		out = append(out, Problem{Kind: ProblemUsage, Text: "invalid server token counts: " + u.String()})
	}
	if v := s.Verdict; v.Known && !v.Kept {
		why := strings.Join(v.Reasons, "; ")
		if why == "" {
			why = "see the verdict"
		}
		out = append(out, Problem{Kind: ProblemSchedule, Text: "the client did not keep its schedule: " + why})
	}
	return out
}

// plural is "1 worker" or "3 workers".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
