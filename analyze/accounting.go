package analyze

import (
	"math"
	"strings"

	"github.com/llmbench/llmbench/mmapds"
)

// The plan's accounting: every planned profile request is valid, failed, never due, or
// missing from the logs, and a missing one was either lost in flight or never sent.

// unseenRequest is a planned profile request no log holds, and why.
type unseenRequest struct {
	idx int
	err *requestError // kind lost or not_sent
	// group is its group (--group-by) when grouped.
	group   string
	grouped bool
}

// account counts the plan by phase, and the profile requests no log holds, which it
// returns (their records are written last) and adds to the errors. When the run
// directories cover the whole plan, unseen records are found by index; otherwise each
// worker's planned count is compared with its log. An unseen request is lost (in flight
// when its worker died, or its log is missing or damaged) unless every log was read to its
// end and none has its Sent record: then it was never sent (the worker, or the
// coordinator that would have recovered it, stopped first) and counts as not_sent. Only
// logs with Sent records tell that: when a log short of its planned requests has none,
// unseen requests stay lost.
func (a *analysis) account(s *Summary, parts []*logAnalysis, mg *merged) ([]unseenRequest, error) {
	in, all, perJob := a.in, mg.all, mg.perJob
	var unseen []unseenRequest
	tellsSent := func(i int) bool {
		p := parts[i]
		return !p.missing && p.damaged == "" && p.inFlight != nil
	}
	wholeLogs := true
	inFlight := map[uint32]struct{}{}
	for i, p := range parts {
		// A log holding all its planned requests holds none of the unseen ones.
		if job := in.jobs[i]; !job.Telemetry && !job.Recovery && p.seen < int64(job.Planned) {
			wholeLogs = wholeLogs && tellsSent(i)
		}
		for i := range p.inFlight {
			inFlight[i] = struct{}{}
		}
	}
	neverSent := &requestError{Kind: "not_sent", Message: "never sent: no record and no Sent record in its worker's log (the worker or the coordinator stopped first)"}
	lost := &requestError{Kind: "lost", Message: "no record in any log: in flight when its worker died"}
	var neverSentN int64
	for i := 0; i < in.plan.Len(); i++ {
		rec, _, _ := in.plan.Record(i)
		if rec.Phase == mmapds.PhaseProfile {
			s.Counts.Profile++
		} else {
			s.Counts.Warmup++
		}
	}
	s.Counts.Planned = int64(in.plan.Len())
	if in.planned == in.plan.Len() {
		// --where and --group-by judge an unseen request by what the plan says of it.
		var uc *unseenChooser
		var sel selected
		if a.selecting() {
			uc = a.unseenChooser()
		}
		for i := 0; i < in.plan.Len(); i++ {
			if a.seen.has(i) {
				continue
			}
			rec, _, _ := in.plan.Record(i)
			if rec.Phase != mmapds.PhaseProfile {
				continue
			}
			u := unseenRequest{idx: i, err: lost}
			if _, sent := inFlight[uint32(i)]; !sent && wholeLogs {
				u.err = neverSent
			}
			if uc != nil {
				c := uc.choose(&rec, u.err)
				g, err := sel.tally(a, c)
				if err != nil {
					return nil, err
				}
				if !c.keep {
					continue
				}
				u.group, u.grouped = c.group, c.grouped
				if g != nil {
					g.addError(u.err, uint32(i), 1)
					g.gateErrors++
				}
			}
			if u.err == lost {
				s.Counts.Lost++
			}
			unseen = append(unseen, u)
		}
		// The profile requests counted from the plan are the selected ones.
		if err := mg.sel.merge(a, &sel, mg.groups); err != nil {
			return nil, err
		}
		s.Counts.Profile -= mg.sel.excluded
	} else {
		seenProfile := all.valid + all.errors + all.notDue
		for i, job := range in.jobs {
			if job.Telemetry || int64(job.Planned) <= perJob[i] {
				continue
			}
			missing := int64(job.Planned) - perJob[i]
			if p := parts[i]; tellsSent(i) {
				never := max(missing-int64(len(p.inFlight)), 0)
				neverSentN += never
				missing -= never
			}
			s.Counts.Lost += missing
		}
		// Only the shards given were planned for these workers: count the profile requests
		// they planned, not the whole plan.
		s.Counts.Profile = seenProfile + s.Counts.Lost + neverSentN
		s.Counts.Warmup = s.Counts.WarmupSeen
	}
	for _, u := range unseen {
		all.addError(u.err, uint32(u.idx), 1)
		all.gateErrors++
	}
	if neverSentN > 0 {
		all.addError(neverSent, math.MaxUint32, neverSentN)
		all.gateErrors += neverSentN
	}
	if len(unseen) == 0 && s.Counts.Lost > 0 {
		all.addError(&requestError{Kind: "lost", Message: "planned for a worker but missing from its log"}, math.MaxUint32, s.Counts.Lost)
		all.gateErrors += s.Counts.Lost
	}
	if err := a.settleCounts(s, all); err != nil {
		return nil, err
	}
	return unseen, nil
}

// settleCounts takes the counts of requests from the merged logs, and refuses an analysis
// with nothing to analyse.
func (a *analysis) settleCounts(s *Summary, all *collector) error {
	s.Counts.NotDue = all.notDue
	s.Counts.Profile -= all.notDue
	s.Counts.Valid, s.Counts.Errors, s.Counts.GateErrors = all.valid, all.errors, all.gateErrors
	s.Counts.Sent = all.sent
	if ns := all.errs["not_sent"]; ns != nil {
		s.Counts.NotSent = ns.Count
	}
	if w := a.opts.Where; w != nil && (s.Counts.Profile == 0 || s.Counts.Valid+s.Counts.Errors == 0) {
		return inputErr("--where %s: selects none of the profile requests, so there is nothing to analyse", w.Expr)
	}
	if s.Counts.Profile == 0 {
		return inputErr("%s: the plan has no profile-phase requests to analyse", a.in.planPath)
	}
	if s.Counts.Valid+s.Counts.Errors == 0 {
		if len(s.Damaged) > 0 {
			return inputErr("no profile requests found in the logs of %s; damaged: %s", strings.Join(s.RunDirs, ", "), strings.Join(s.Damaged, ", "))
		}
		return inputErr("no profile requests found in the logs of %s", strings.Join(s.RunDirs, ", "))
	}
	return nil
}
