package driver

import (
	"github.com/llmbench/llmbench/replay/schedule"
)

// Units holds what a transport keeps of each unit (a session's chained turns, or a graph's
// unit) while it runs: T is its sticky connection and its live history. States are recycled
// through a free list, so a run makes one per unit in flight at most. Not safe for
// concurrent use: the event loop calls it from its one goroutine, the net client under its
// dispatcher's lock.
type Units[T any] struct {
	running  []*T // by unit, nil when it does not run
	free     []*T
	stopSeen bool
}

// NewUnits makes room for n units.
func NewUnits[T any](n int) *Units[T] { return &Units[T]{running: make([]*T, n)} }

// Of returns the state of rel's unit: a recycled (or new) one when rel is its entry.
func (us *Units[T]) Of(rel schedule.Release) *T {
	if !rel.Entry {
		return us.running[rel.Unit]
	}
	var st *T
	if n := len(us.free); n > 0 {
		st, us.free = us.free[n-1], us.free[:n-1]
	} else {
		st = new(T)
	}
	us.running[rel.Unit] = st
	return st
}

// Drop forgets unit u's state and returns it, for the caller to release what it holds (its
// sticky connection) before the state is reused by a later Of.
func (us *Units[T]) Drop(u int32) *T {
	st := us.running[u]
	us.running[u] = nil
	us.free = append(us.free, st)
	return st
}

// Stopped is the stop protocol on the scheduler's side, the same for both transports: the
// first time the run is stopping (stopping) or s stopped by itself (the duration's end), s
// is told to release nothing more, and every unit that is over then is dropped (drop
// releases its state, then Drop recycles it). It says whether s releases nothing more.
func (us *Units[T]) Stopped(s *schedule.Scheduler, stopping bool, drop func(u int32)) bool {
	if !us.stopSeen && (stopping || s.Stopped() != schedule.Running) {
		us.stopSeen = true
		s.Stop()
		for u, st := range us.running {
			if st != nil && s.UnitOver(int32(u)) {
				drop(int32(u))
			}
		}
	}
	return us.stopSeen
}
