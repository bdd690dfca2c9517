package replay

import (
	"fmt"
	"time"
)

// progressLoop rewrites one status line on opts.Progress four times a second: requests sent,
// done and errored, the completion rate, elapsed time and an estimate of what is left. With
// opts.ProgressEvery it writes that line whole once per period instead (a log, off a
// terminal). Its writes and the notices' never interleave (they may share a writer).
func (r *Replay) progressLoop(procs []*proc, start time.Time, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	out := r.opts.Progress
	if out == nil {
		return
	}
	total := int64(r.plan.Len())
	// A plan sized by duration holds more requests than the run will send (the schedule stops
	// at the duration): its end, not its count, says what is left.
	duration := time.Duration(r.plan.Meta().DurationNs)
	period, inPlace := 250*time.Millisecond, r.opts.ProgressEvery <= 0
	if !inPlace {
		period = r.opts.ProgressEvery
	}
	t := time.NewTicker(period)
	defer t.Stop()
	last := ""
	for {
		select {
		case <-stop:
			if last != "" && inPlace {
				r.noticeMu.Lock()
				fmt.Fprint(out, "\r\033[K")
				r.noticeMu.Unlock()
			}
			return
		case <-t.C:
		}
		sent, dn, errs := procCounts(procs)
		last = progressLine(sent, dn, errs, total, duration, time.Since(start))
		r.noticeMu.Lock()
		if inPlace {
			fmt.Fprint(out, "\r"+last+"\033[K")
		} else {
			fmt.Fprintln(out, last)
		}
		r.noticeMu.Unlock()
	}
}

// procCounts sums the workers' last reported counts: requests sent, done and errored.
func procCounts(procs []*proc) (sent, done, errs int64) {
	for _, p := range procs {
		sent += p.sent.Load()
		done += p.done.Load()
		errs += p.errs.Load()
	}
	return sent, done, errs
}

// progressLine formats the status line. duration > 0 is a plan sized by time: the line says
// what is left of the duration (from the run's start; a warmup before it adds to it) instead
// of the plan's request count.
func progressLine(sent, done, errs, total int64, duration, elapsed time.Duration) string {
	if elapsed < 0 {
		return fmt.Sprintf("replay: starting in %v", (-elapsed).Round(time.Millisecond))
	}
	rate := 0.0
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(done) / s
	}
	if duration > 0 {
		return fmt.Sprintf("replay: sent %d  done %d  errors %d  %.1f req/s  %s elapsed  ETA %s (duration %s)",
			sent, done, errs, rate, clock(elapsed), clock(max(duration-elapsed, 0)), clock(duration))
	}
	eta := "--:--"
	if rate > 0 && total >= done {
		eta = clock(time.Duration(float64(total-done) / rate * float64(time.Second)))
	}
	return fmt.Sprintf("replay: sent %d/%d  done %d  errors %d  %.1f req/s  %s elapsed  ETA %s",
		sent, total, done, errs, rate, clock(elapsed), eta)
}

func clock(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%02d:%02d", s/60, s%60)
}
