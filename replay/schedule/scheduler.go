package schedule

import (
	"errors"
	"math"
)

// Never is an instant that never comes: NextWake's answer when only an Ended call can
// release anything, and AbortAt's when nothing is to be cut.
const Never int64 = math.MaxInt64

// Config is what a Scheduler needs besides the graph.
type Config struct {
	// Slots are the opening instants of the worker's concurrency slots (Slots), as offsets
	// from the profile's start (its ramp); empty means no concurrency bound (then the graph
	// must have no closed-loop unit).
	Slots []int64
	// WarmupSlots are the warmup's, as offsets from the run's start (--warmup-concurrency and
	// its ramp); nil means Slots.
	WarmupSlots []int64
	// PrefillSlots and WarmupPrefillSlots cap the requests in prefill (released, and neither
	// Prefilled nor Ended yet: sent, no first byte back) in the profile and in the warmup,
	// opening likewise (--prefill-concurrency and its ramps); empty means no cap. A request
	// waits for a prefill slot after its unit got its concurrency slot.
	PrefillSlots, WarmupPrefillSlots []int64
	// DurationNs > 0 sizes the run by time: no request starts after the profile start plus
	// DurationNs.
	DurationNs int64
	// ProfileStartNs is the profile's first planned instant over the whole plan (0 for a
	// closed loop); ProfileOpen says that some profile record has one. A closed-loop profile
	// (ProfileOpen false) behind this worker's closed-loop warmup starts when that warmup has
	// ended instead.
	ProfileStartNs int64
	ProfileOpen    bool
	// GraceNs is how long requests may still run after the duration before they are cut
	// (AbortAt); < 0: forever.
	GraceNs int64
	// Gate, when not nil, holds part of the profile back while the run lasts (gate.go:
	// in-run adaptive scale). The scheduler only reads it.
	Gate *Gate
}

// Release is a node the transport may send now.
type Release struct {
	Node  int32 // the node (Graph.Node)
	Unit  int32 // its unit
	Index int32 // its plan record
	// Ready is when it could first be sent (the record's ReadyNs): its fixed instant, the
	// instant its last parent's end plus think time allowed, or, for a unit that had to wait
	// for a slot, when it got one.
	Ready int64
	// Entry says that the node is its unit's entry: the unit starts with it.
	Entry bool
	// Prefill says that the node holds a prefill slot until the transport calls Prefilled
	// (its response's first byte after the head) or Ended.
	Prefill bool
}

// StopReason says why a Scheduler releases nothing more.
type StopReason uint8

const (
	// Running: not stopped.
	Running StopReason = iota
	// Cancelled: Stop was called (an interruption, a failure).
	Cancelled
	// DurationElapsed: the benchmark duration is over.
	DurationElapsed
)

// unit states
const (
	unitIdle uint8 = iota
	unitRunning
	unitOver
)

type unitState struct {
	left     int32 // nodes not ended or skipped
	inflight int32
	state    uint8
}

// timed is a released node waiting for its instant.
type timed struct {
	at   int64
	node int32
}

// Scheduler decides, for one worker, which of its graph's nodes may be sent when. It is not
// safe for concurrent use; it allocates nothing per request once its timer heap has grown to
// the run's largest number of simultaneously waiting nodes.
type Scheduler struct {
	g   *Graph
	cfg Config

	open, closed         []int32
	openNext, closedNext int
	openBlocked          bool // the due open-loop unit found no free slot
	// queueFreed is when a blocked open-loop unit last got its slot: a unit whose instant
	// came before that waited behind it, so it is ready when it gets its own slot.
	queueFreed int64
	// heapBlocked says a due released node found no prefill slot: until nothing due is left
	// in the heap, what it releases is ready when it gets its slot.
	heapBlocked bool

	slots     limit  // units holding a concurrency slot (limit.go)
	prefill   limit  // requests in prefill
	inPrefill []bool // per node: holds a prefill slot

	roots   [][]int32 // per unit: its roots other than the entry (nil for most)
	waiting []int32   // per node: parents not ended yet
	readyAt []int64   // per node: latest parent end plus think time so far
	blocker []int32   // per node: the plan record of the failed node that skips it, or -1
	units   []unitState
	heap    []timed

	warmupLeft  int   // closed-loop warmup units not over
	afterWarmup bool  // the duration counts from the end of the warmup
	until       int64 // last instant a request may start; Never while unknown or unbounded
	abortAt     int64
	abortFired  bool

	inflight  int
	remaining int // nodes not ended or skipped
	skipped   int
	// thinned counts the nodes of the open-loop units the gate thinned out (thinnedUnit).
	thinned     int
	thinnedUnit []bool
	stopped     StopReason
}

// New returns a scheduler of g's nodes under c. g must be complete: the scheduler keeps it.
func New(g *Graph, c Config) (*Scheduler, error) {
	if err := g.check(); err != nil {
		return nil, err
	}
	g.buildChildren()
	s := &Scheduler{g: g, cfg: c, until: Never, abortAt: Never, remaining: len(g.nodes), queueFreed: math.MinInt64}
	s.open, s.closed = g.order()
	warmSlots := c.WarmupSlots
	if warmSlots == nil {
		warmSlots = c.Slots
	}
	if len(s.closed) > 0 {
		for _, u := range s.closed {
			if ws := g.units[u].Warmup; ws && len(warmSlots) == 0 || !ws && len(c.Slots) == 0 {
				return nil, errClosedUnbounded
			}
		}
	}
	s.waiting = make([]int32, len(g.nodes))
	s.readyAt = make([]int64, len(g.nodes))
	s.blocker = make([]int32, len(g.nodes))
	for i := range g.nodes {
		s.waiting[i] = int32(len(g.Parents(int32(i))))
		s.readyAt[i] = g.nodes[i].At
		s.blocker[i] = -1
	}
	for _, r := range g.roots {
		if s.roots == nil {
			s.roots = make([][]int32, len(g.units))
		}
		s.roots[g.nodes[r].unit] = append(s.roots[g.nodes[r].unit], r)
	}
	s.units = make([]unitState, len(g.units))
	for u := range g.units {
		s.units[u].left = g.units[u].nodes
		if g.units[u].Warmup && g.nodes[g.units[u].entry].At < 0 {
			s.warmupLeft++
		}
	}
	if c.DurationNs > 0 {
		s.afterWarmup = !c.ProfileOpen && s.warmupLeft > 0
		if !s.afterWarmup {
			s.until = c.ProfileStartNs + c.DurationNs
		}
	}
	// The profile's pools open at its start: its first planned instant, the end of this
	// worker's closed-loop warmup (maybeOver), or the run's start.
	profileBase := int64(0)
	switch {
	case c.ProfileOpen || s.openProfile():
		profileBase = max(c.ProfileStartNs, 0)
	case s.warmupLeft > 0:
		profileBase = Never
	}
	s.slots = newLimit(orNil(warmSlots), orNil(c.Slots), profileBase)
	s.prefill = newLimit(orNil(c.WarmupPrefillSlots), orNil(c.PrefillSlots), profileBase)
	if c.Gate != nil {
		s.slots.gate, s.prefill.gate = &c.Gate.conc, &c.Gate.prefill
		s.thinnedUnit = make([]bool, len(g.units))
	}
	s.inPrefill = make([]bool, len(g.nodes))
	return s, nil
}

// openProfile says whether some profile unit is open loop (has a fixed instant).
func (s *Scheduler) openProfile() bool {
	for _, u := range s.open {
		if !s.g.units[u].Warmup {
			return true
		}
	}
	return false
}

// orNil is nil for an empty list: no cap.
func orNil(l []int64) []int64 {
	if len(l) == 0 {
		return nil
	}
	return l
}

// phaseOf is the limits' phase of unit u.
func (s *Scheduler) phaseOf(u int32) int {
	if s.g.units[u].Warmup {
		return phaseWarmup
	}
	return phaseProfile
}

// errClosedUnbounded is a closed loop without concurrency.
var errClosedUnbounded = errors.New("schedule: closed-loop units (no fixed instant) need concurrency slots, and there are none")

// Due returns a node that may be sent at now, if any; call it until it says no. Nodes whose
// instant passed come first (a late wake-up sends them at once, at their own instants), then
// the open-loop units in instant order, then the closed-loop ones. A unit takes a slot as its
// entry is released. Once now is past the duration's end, or nothing is due after it, the
// scheduler stops itself (Stopped says DurationElapsed).
func (s *Scheduler) Due(now int64) (Release, bool) {
	if s.stopped != Running {
		return Release{}, false
	}
	if len(s.heap) > 0 && s.heap[0].at <= now {
		t := s.heap[0]
		if t.at > s.until {
			s.stopFor(DurationElapsed)
			return Release{}, false
		}
		if s.prefill.room(s.phaseOf(s.g.nodes[t.node].unit), now) {
			s.pop()
			ready := t.at
			if s.heapBlocked {
				// Every prefill slot was taken from the block until now (a freeing is an
				// Ended or Prefilled call, and Due follows it): what is due waited for one.
				ready = now
			}
			return s.release(t.node, ready), true
		}
		s.heapBlocked = true
	} else {
		s.heapBlocked = false // nothing due waits any more
	}
	for s.openNext < len(s.open) {
		u := s.open[s.openNext]
		e := s.g.units[u].entry
		if at := s.g.nodes[e].At; at <= now {
			if at > s.until {
				s.stopFor(DurationElapsed)
				return Release{}, false
			}
			if s.thin(u) {
				continue
			}
			if s.takeSlot(u, now) {
				ready := at
				if s.openBlocked {
					ready, s.openBlocked, s.queueFreed = now, false, now
				} else if at < s.queueFreed {
					ready = now
				}
				if ready > s.until {
					s.stopFor(DurationElapsed)
					return Release{}, false
				}
				s.openNext++
				return s.start(u, ready), true
			}
			s.openBlocked = true
		}
		break
	}
	if now >= 0 && s.closedNext < len(s.closed) {
		u := s.closed[s.closedNext]
		if (s.g.units[u].Warmup || s.warmupLeft == 0) && now <= s.until && s.takeSlot(u, now) {
			s.closedNext++
			return s.start(u, now), true
		}
	}
	if now >= s.until {
		s.stopFor(DurationElapsed)
	}
	return Release{}, false
}

// thin drops open-loop profile unit u, due now, when the gate thins it out: none of its nodes
// is sent, and it is over. It says whether it did.
func (s *Scheduler) thin(u int32) bool {
	un := &s.g.units[u]
	if s.cfg.Gate == nil || un.Warmup || s.cfg.Gate.Sends(&s.g.nodes[un.entry]) {
		return false
	}
	s.openNext++
	s.thinnedUnit[u] = true
	us := &s.units[u]
	s.thinned += int(us.left)
	s.remaining -= int(us.left)
	us.left = 0
	us.state = unitOver
	return true
}

// Thinned is the number of nodes of the units the gate thinned out, never sent.
func (s *Scheduler) Thinned() int { return s.thinned }

// ThinnedUnit says whether the gate thinned unit u out.
func (s *Scheduler) ThinnedUnit(u int32) bool { return s.thinnedUnit != nil && s.thinnedUnit[u] }

// start releases unit u's entry, ready at ready, and puts its other roots on the timer
// heap, each its think time later (and no earlier than its own instant).
func (s *Scheduler) start(u int32, ready int64) Release {
	s.units[u].state = unitRunning
	if s.roots != nil {
		for _, r := range s.roots[u] {
			s.push(timed{at: max(ready+s.g.nodes[r].Think, s.g.nodes[r].At), node: r})
		}
	}
	return s.release(s.g.units[u].entry, ready)
}

// release hands node out, ready at ready; it takes the node's prefill slot (the caller saw
// there was room).
func (s *Scheduler) release(node int32, ready int64) Release {
	n := &s.g.nodes[node]
	s.inflight++
	s.units[n.unit].inflight++
	s.prefill.take()
	s.inPrefill[node] = true
	return Release{Node: node, Unit: n.unit, Index: n.Index, Ready: ready, Entry: s.g.units[n.unit].entry == node,
		Prefill: s.prefill.bounded(s.phaseOf(n.unit))}
}

// takeSlot takes a concurrency slot for unit u at now, when its phase has one free and its
// entry a prefill slot too (AIPerf takes the session's slot, then the request's).
func (s *Scheduler) takeSlot(u int32, now int64) bool {
	ph := s.phaseOf(u)
	// Both pools advance to now, whichever is full: NextWake then names the next opening.
	slot, pre := s.slots.room(ph, now), s.prefill.room(ph, now)
	if !slot || !pre {
		return false
	}
	s.slots.take()
	return true
}

// Prefilled takes the first byte of a released node's response after its head: the node
// leaves prefill and frees its prefill slot. Later calls, and calls for a node not in
// prefill, do nothing.
func (s *Scheduler) Prefilled(node int32) {
	if node < 0 || int(node) >= len(s.inPrefill) || !s.inPrefill[node] {
		return
	}
	s.inPrefill[node] = false
	s.prefill.put()
}

// Ended takes a released node's end at endNs (run clock); ok says that it completed, which
// Strict children need. It releases the children whose parents have all ended (at their
// instants, through Due), and says whether the node's unit is over with it: the transport
// then drops what it kept for the unit (a sticky connection, live history).
func (s *Scheduler) Ended(node int32, endNs int64, ok bool) (unitOver bool) {
	n := &s.g.nodes[node]
	us := &s.units[n.unit]
	s.inflight--
	us.inflight--
	s.Prefilled(node) // a request that ended without a first byte leaves prefill with its end
	s.done(us)
	failed := int32(-1)
	if !ok {
		failed = n.Index
	}
	s.settleChildren(node, endNs, failed)
	return s.maybeOver(n.unit, endNs)
}

// settleChildren tells node's children that it ended at endNs; failed is its plan record
// when it failed (or was skipped), else -1.
func (s *Scheduler) settleChildren(node int32, endNs int64, failed int32) {
	if s.stopped != Running {
		return // nothing more is released: the children are dropped, not skipped
	}
	for _, c := range s.g.Children(node) {
		cn := &s.g.nodes[c]
		if failed >= 0 && (cn.Strict || s.blocker[node] >= 0) && s.blocker[c] < 0 {
			s.blocker[c] = failed
		}
		if t := endNs + cn.Think; t > s.readyAt[c] {
			s.readyAt[c] = t
		}
		s.waiting[c]--
		if s.waiting[c] > 0 {
			continue
		}
		if s.blocker[c] >= 0 {
			s.skipped++
			s.done(&s.units[cn.unit])
			s.settleChildren(c, endNs, s.blocker[c])
			continue
		}
		s.push(timed{at: s.readyAt[c], node: c})
	}
}

// done counts one more node of us as ended or skipped.
func (s *Scheduler) done(us *unitState) {
	us.left--
	s.remaining--
}

// maybeOver ends unit u when nothing of it runs or will run, and says whether it did now.
func (s *Scheduler) maybeOver(u int32, endNs int64) bool {
	us := &s.units[u]
	if us.state != unitRunning || us.inflight > 0 || (us.left > 0 && s.stopped == Running) {
		return false
	}
	us.state = unitOver
	s.slots.put()
	if un := &s.g.units[u]; un.Warmup && s.g.nodes[un.entry].At < 0 {
		s.warmupLeft--
		if s.warmupLeft == 0 && s.stopped == Running {
			if s.afterWarmup {
				s.until = endNs + s.cfg.DurationNs
			}
			if s.slots.phase[phaseProfile].base == Never {
				// The closed-loop profile starts now: its pools open (ramp) from here.
				s.slots.phase[phaseProfile].base = endNs
				s.prefill.phase[phaseProfile].base = endNs
			}
		}
	}
	return true
}

// UnitOver says whether unit u has ended (after Stop: whether nothing of it still runs).
func (s *Scheduler) UnitOver(u int32) bool { return s.units[u].state == unitOver }

// NextWake returns the next instant at which Due may release something that no Ended call
// brings, or Never; open says that it is an open-loop unit's planned instant, which a
// transport may wake early for and spin. After a stop it is the instant to cut what still
// runs (AbortAt), if any.
func (s *Scheduler) NextWake() (at int64, open bool) {
	at = Never
	if s.stopped != Running {
		if s.inflight > 0 && !s.abortFired {
			at = s.abortAt
		}
		return at, false
	}
	take := func(t int64, o bool) {
		if t < at || t == at && o {
			at, open = t, o
		}
	}
	if len(s.heap) > 0 {
		if s.heapBlocked {
			// Due found no prefill slot: one frees with a Prefilled or Ended call, or opens.
			take(s.prefill.nextOpen(s.phaseOf(s.g.nodes[s.heap[0].node].unit)), false)
		} else {
			take(s.heap[0].at, false)
		}
	}
	if s.openNext < len(s.open) {
		u := s.open[s.openNext]
		if !s.openBlocked {
			take(s.g.nodes[s.g.units[u].entry].At, true)
		} else {
			ph := s.phaseOf(u)
			take(s.slots.nextOpen(ph), false)
			take(s.prefill.nextOpen(ph), false)
		}
	}
	if s.closedNext < len(s.closed) {
		u := s.closed[s.closedNext]
		if ph := s.phaseOf(u); s.g.units[u].Warmup || s.warmupLeft == 0 {
			if s.slots.hasRoom(ph) && s.prefill.hasRoom(ph) {
				take(0, false) // the run's start: closed loops begin at 0
			} else {
				take(s.slots.nextOpen(ph), false)
				take(s.prefill.nextOpen(ph), false)
			}
		}
	}
	take(s.until, false)
	return at, open
}

// Stop releases nothing more: an interruption or a failure. Nodes not yet released are
// dropped (their records are the transport's to write as not sent); what runs goes on until
// it ends. Units with nothing running are over at once (UnitOver).
func (s *Scheduler) Stop() { s.stopFor(Cancelled) }

func (s *Scheduler) stopFor(why StopReason) {
	if s.stopped != Running {
		return
	}
	s.stopped = why
	s.heap = s.heap[:0]
	if why == DurationElapsed && s.cfg.GraceNs >= 0 {
		s.abortAt = s.until + s.cfg.GraceNs
	}
	for u := range s.units {
		s.maybeOver(int32(u), 0)
	}
}

// Stopped says whether and why the scheduler releases nothing more.
func (s *Scheduler) Stopped() StopReason { return s.stopped }

// AbortAt is when requests still running after the duration are to be cut (its end plus the
// grace period), or Never.
func (s *Scheduler) AbortAt() int64 { return s.abortAt }

// AbortDue says, once, that now is past AbortAt while requests still run: the transport
// cuts them. After it, NextWake no longer wakes for the abort.
func (s *Scheduler) AbortDue(now int64) bool {
	if s.abortFired || now < s.abortAt || s.inflight == 0 {
		return false
	}
	s.abortFired = true
	return true
}

// Finished says that nothing runs and nothing more will be released.
func (s *Scheduler) Finished() bool {
	return s.inflight == 0 && (s.stopped != Running || s.remaining == 0)
}

// InFlight is the number of released nodes not ended yet.
func (s *Scheduler) InFlight() int { return s.inflight }

// Skipped is the number of nodes skipped because a node they depend on failed.
func (s *Scheduler) Skipped() int { return s.skipped }

// SkippedFor returns, for a skipped node, the plan record of the failed node it depended
// on, and -1 for any other node.
func (s *Scheduler) SkippedFor(node int32) int32 {
	if s.waiting[node] > 0 {
		return -1
	}
	return s.blocker[node]
}

// The timer heap of released nodes waiting for their instant, earliest first (node number
// among equals, so the order is deterministic).

func (s *Scheduler) push(t timed) {
	s.heap = append(s.heap, t)
	i := len(s.heap) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !less(s.heap[i], s.heap[p]) {
			break
		}
		s.heap[i], s.heap[p] = s.heap[p], s.heap[i]
		i = p
	}
}

func (s *Scheduler) pop() timed {
	h := s.heap
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		c := 2*i + 1
		if c >= len(h) {
			break
		}
		if c+1 < len(h) && less(h[c+1], h[c]) {
			c++
		}
		if !less(h[c], h[i]) {
			break
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
	s.heap = h
	return top
}

func less(a, b timed) bool { return a.at < b.at || a.at == b.at && a.node < b.node }
