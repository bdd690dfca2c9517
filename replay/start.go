package replay

import (
	"errors"
	"time"
)

// StartSource decides when a run starts: the wall-clock instant of the plan's t = 0, which
// the coordinator sends to its workers. It is asked once, when every worker is ready (plan
// mapped, CPU pinned, calibrated, nothing connected). Today's sources are "now" (a lead of
// Options.StartDelay after that moment) and a fixed instant shared by every shard
// (Options.StartAt, --start-at); and a rendezvous of shards (Options.Rendezvous,
// --rendezvous), where the last one to get ready releases them all.
type StartSource interface {
	// StartInstant returns the start instant; ready is when every worker got ready. An error
	// fails the run before anything is sent. stop is closed when the run is interrupted: a
	// source that waits then returns ErrStartStopped, and the run ends interrupted with
	// nothing sent.
	StartInstant(ready time.Time, stop <-chan struct{}) (time.Time, error)
}

// ErrStartStopped is what a StartSource returns when the run was interrupted while it waited.
var ErrStartStopped = errors.New("interrupted before the start")

// startAfter starts a run its duration after the workers are ready.
type startAfter time.Duration

func (d startAfter) StartInstant(ready time.Time, _ <-chan struct{}) (time.Time, error) {
	return ready.Add(time.Duration(d)), nil
}

// startAt starts a run at a fixed instant, refused when it passed more than lateGap (the
// plan's first gap) before the workers got ready: this shard would send late.
type startAt struct {
	at      time.Time
	lateGap time.Duration
}

func (s startAt) StartInstant(ready time.Time, _ <-chan struct{}) (time.Time, error) {
	if err := checkLateStart(s.at, ready, s.lateGap); err != nil {
		return time.Time{}, err
	}
	return s.at, nil
}

// startSource is the run's StartSource: Options.Start, else the rendezvous of the shards
// (start_rendezvous.go), else the fixed StartAt, else "now".
func (r *Replay) startSource() StartSource {
	switch {
	case r.opts.Start != nil:
		return r.opts.Start
	case r.opts.Rendezvous != "":
		return rendezvousStart{r}
	case !r.opts.StartAt.IsZero():
		return startAt{at: r.opts.StartAt, lateGap: r.lateGap}
	}
	return startAfter(r.opts.StartDelay)
}
