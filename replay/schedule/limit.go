package schedule

import "sync/atomic"

// A limit is a cap on how many of something a worker runs at once (units holding a
// concurrency slot, requests in prefill), with a pool of slots per phase: the warmup's opens
// from the run's start, the profile's from the profile's start, each slot at its own instant
// (the phase's ramp, Slots). What runs is counted once for both phases, so in the overlap of
// the two (an open-loop profile while warmup requests still run) a unit starts only while the
// total is under its own phase's open slots: the cap never adds up over phases.

// Phases index a limit's pools.
const (
	phaseWarmup  = 0
	phaseProfile = 1
)

// pool is one phase's slots of a limit.
type pool struct {
	open   []int64 // opening offsets from base, ascending; nil: no cap in the phase
	base   int64   // run-clock start of the phase; Never while unknown
	opened int     // slots open so far
}

func (p *pool) bounded() bool { return p.open != nil }

// advance opens the slots due by now.
func (p *pool) advance(now int64) {
	if p.base == Never {
		return
	}
	for p.opened < len(p.open) && p.open[p.opened] <= now-p.base {
		p.opened++
	}
}

// nextOpen is when the pool's next slot opens, or Never.
func (p *pool) nextOpen() int64 {
	if p.base == Never || p.opened >= len(p.open) {
		return Never
	}
	if p.open[p.opened] > Never-1-p.base {
		return Never
	}
	return p.base + p.open[p.opened]
}

// limit counts what runs against its phases' pools.
type limit struct {
	phase [2]pool
	used  int
	// gate is a cap on the profile phase set while the run lasts (Gate; < 0: none), nil
	// when the run has no gate.
	gate *atomic.Int64
}

// gated says whether the gate's cap holds phase ph back now.
func (l *limit) gated(ph int) bool {
	if ph != phaseProfile || l.gate == nil {
		return false
	}
	c := l.gate.Load()
	return c >= 0 && int64(l.used) >= c
}

// newLimit is a limit with the warmup's and the profile's slots (nil: no cap in that phase);
// the warmup's pool opens at the run's start, the profile's at profileBase.
func newLimit(warmup, profile []int64, profileBase int64) limit {
	return limit{phase: [2]pool{{open: warmup, base: 0}, {open: profile, base: profileBase}}}
}

// bounded says whether phase ph has a cap.
func (l *limit) bounded(ph int) bool { return l.phase[ph].bounded() }

// room says whether one more may start in phase ph at now.
func (l *limit) room(ph int, now int64) bool {
	if l.gated(ph) {
		return false
	}
	p := &l.phase[ph]
	if !p.bounded() {
		return true
	}
	p.advance(now)
	return l.used < p.opened
}

// hasRoom says whether one more may start in phase ph with the slots opened so far.
func (l *limit) hasRoom(ph int) bool {
	if l.gated(ph) {
		return false
	}
	p := &l.phase[ph]
	return !p.bounded() || l.used < p.opened
}

func (l *limit) take() { l.used++ }
func (l *limit) put()  { l.used-- }

// nextOpen is when a slot next opens in phase ph, or Never.
func (l *limit) nextOpen(ph int) int64 { return l.phase[ph].nextOpen() }
