package plan

import (
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/plan/dataset"
)

// Timing modes, in AIPerf's priority order (aiperf.md §2.2).
const (
	ModeFixedSchedule = "fixed_schedule"
	ModeUserCentric   = "user_centric"
	ModeRequestRate   = "request_rate"
	ModeConcurrency   = "concurrency"
)

// planned is one request before rendering: which dataset turn it sends, on which session,
// and when.
type planned struct {
	conv    int32
	turn    int32
	session uint32
	phase   mmapds.Phase
	send    int64 // ns from the phase start, or mmapds.NoSendOffset
	delay   int64 // ns after the previous turn completes, or -1 for first turns
}

// limits bound a phase; a zero field is no bound. At least one is set.
type limits struct {
	requests   int
	sessions   int
	durationNs int64
	// lanes > 0 sizes a closed loop of a graph input by its duration: sessions are planned
	// until each of lanes slots is busy past it at the least (plays.laneFull).
	lanes int
}

// sampler picks dataset conversations (--dataset-sampling-strategy).
type sampler struct {
	strategy string
	n        int
	r        *rand.Rand
	perm     []int
	pos      int
	// fresh: every session gets the next conversation, drawn by grow (a synthetic dataset
	// growing on demand); cycle > 0 starts over after that many. err is grow's first error.
	fresh bool
	cycle int
	grow  func(n int) error
	err   error
}

func (s *sampler) next() int {
	if s.fresh {
		i := s.pos
		s.pos++
		if s.cycle > 0 {
			i %= s.cycle
		}
		if s.err == nil {
			s.err = s.grow(i + 1)
		}
		return i
	}
	switch s.strategy {
	case "random":
		return s.r.IntN(s.n)
	case "shuffle":
		if s.pos == len(s.perm) {
			if s.perm == nil {
				s.perm = make([]int, s.n)
			}
			for i := range s.perm {
				s.perm[i] = i
			}
			s.r.Shuffle(len(s.perm), func(i, j int) { s.perm[i], s.perm[j] = s.perm[j], s.perm[i] })
			s.pos = 0
		}
		s.pos++
		return s.perm[s.pos-1]
	}
	s.pos++
	return (s.pos - 1) % s.n
}

// scheduler builds the planned requests of one phase.
type scheduler struct {
	ds      *dataset.Dataset
	mode    string
	speedup float64
	// delayCapNs > 0 caps input delays (before the speed-up).
	delayCapNs int64
	phase      mmapds.Phase
	lim        limits
	session    uint32 // next session id
	// origin is added to every instant: the phase starts where the previous phase's schedule
	// ended, so both phases share the run's timeline. end is where this phase's schedule
	// ends (the instant its next request would have had).
	origin int64
	end    int64

	smp     *sampler
	arrival Arrival
	arrRNG  *rand.Rand
	ramp    Ramp

	users  int
	ucRate float64
	fixed  []fixedSession
	// plays derives the sessions of a graph input (agentic.go); nil otherwise.
	plays    *plays
	out      []planned
	reqs     int
	nsessns  int
	lastConv int // the conversation the last session sent (a derived play's)
	// err is the first instant or delay found out of range (checkedNs); the phase stops there.
	err error
}

// fail keeps the first error and reports whether the phase must stop.
func (s *scheduler) fail(err error) bool {
	if err != nil && s.err == nil {
		s.err = err
	}
	return s.err != nil
}

// full reports whether the request or session bound is reached.
func (s *scheduler) full() bool {
	return s.err != nil || (s.lim.requests > 0 && s.reqs >= s.lim.requests) || (s.lim.sessions > 0 && s.nsessns >= s.lim.sessions)
}

// delayNs is the wait after the previous turn for a later turn (0 when the input has none).
func (s *scheduler) delayNs(t *dataset.Turn) int64 {
	if t.DelayNs == dataset.NoTime || t.DelayNs < 0 {
		return 0
	}
	d := t.DelayNs
	if s.delayCapNs > 0 {
		d = min(d, s.delayCapNs)
	}
	ns, err := checkedNs(float64(d)/s.speedup/1e9, "a think time before a later turn (after --synthesis-speedup-ratio)")
	s.fail(err)
	return ns
}

// emit plans the turns of conversation conv as one new session: the first at first (or
// NoSendOffset), later ones at at(i) (NoSendOffset when at is nil) after laterDelay. It stops
// at the request bound and returns how many turns it planned.
func (s *scheduler) emit(conv int, first int64, at func(i int) int64, laterDelay func(t *dataset.Turn) int64) int {
	if s.fail(s.smp.err) {
		return 0
	}
	id := s.session
	if s.plays != nil {
		c, err := s.plays.play(conv, s.phase, id)
		if s.fail(err) {
			return 0
		}
		conv = c
		s.lastConv = conv
	}
	turns := s.ds.Conversations[conv].Turns
	s.session++
	s.nsessns++
	n := 0
	for i := range turns {
		if s.lim.requests > 0 && s.reqs >= s.lim.requests {
			break
		}
		p := planned{conv: int32(conv), turn: int32(i), session: id, phase: s.phase, send: first, delay: -1}
		if i > 0 {
			p.send = mmapds.NoSendOffset
			if at != nil {
				p.send = at(i)
			}
			p.delay = laterDelay(&turns[i])
		}
		if p.send != mmapds.NoSendOffset {
			p.send += s.origin
			if p.send > int64(MaxSpan) || p.send < 0 {
				s.fail(usagef("plan: a %s request's planned instant lies %s after the start; a plan spans at most %s (docs/plan-format.md \"Bounds\")",
					s.phase, humanSeconds(float64(p.send)/1e9), spanWords))
				return n
			}
			s.end = max(s.end, p.send)
		}
		s.out = append(s.out, p)
		s.reqs++
		n++
	}
	return n
}

// run plans the phase; an error is an instant or a delay out of range.
func (s *scheduler) run() error {
	defer func() {
		if s.err != nil {
			s.end = s.origin // the phase is refused: its end is never used
		}
	}()
	s.end = s.origin
	switch s.mode {
	case ModeConcurrency:
		s.closedLoop()
	case ModeRequestRate:
		s.requestRate()
	case ModeUserCentric:
		s.userCentric()
	case ModeFixedSchedule:
		s.fixedSchedule()
	}
	return s.err
}

// closedLoop: every first turn waits for a free slot; later turns follow their session. A
// graph input sized by a duration plans sessions until every slot has enough to last it.
func (s *scheduler) closedLoop() {
	if s.lim.lanes > 0 && s.plays != nil {
		s.plays.lanes = make([]int64, s.lim.lanes)
	}
	for !s.full() {
		if s.emit(s.smp.next(), mmapds.NoSendOffset, nil, s.delayNs) == 0 || s.plays == nil || s.lim.lanes == 0 {
			continue
		}
		if s.plays.laneFull(s.lastConv, s.lim.durationNs) || s.reqs >= MaxRequests {
			return
		}
	}
}

// requestRate: sessions start at instants of the arrival process under the ramp. Every turn
// draws one gap, so later turns consume ticks as in AIPerf and the offered rate counts
// requests, not sessions. Instants are cumulative sums in float64 seconds, rounded once to
// ns, so the schedule never drifts.
func (s *scheduler) requestRate() {
	t := 0.0
	defer func() {
		if ns, err := checkedNs(t, "the end of the "+s.phase.String()+" schedule"); !s.fail(err) {
			s.end = s.origin + ns
		}
	}()
	for !s.full() {
		ns, err := checkedNs(t, "a "+s.phase.String()+" request's planned instant (--request-rate over the planned requests)")
		if s.fail(err) {
			return
		}
		if s.lim.durationNs > 0 && ns >= s.lim.durationNs {
			return
		}
		n := s.emit(s.smp.next(), ns, nil, s.delayNs)
		for range n {
			t = advance(s.ramp, t, s.arrival.Next(s.arrRNG))
		}
	}
}

// userCentric: NumUsers users, each sending its session's turns on a fixed grid of
// gap = users/rate seconds and starting its next session right after the last turn's slot.
// User u starts at u/rate, so the aggregate rate is the target from the start. Later turns
// also wait for their previous turn (DelayNs 0): a slow response pushes the user back.
func (s *scheduler) userCentric() {
	gap := float64(s.users) / s.ucRate
	h := make(userHeap, s.users)
	for u := range h {
		h[u] = userSlot{user: u, at: float64(u) / s.ucRate}
	}
	heap.Init(&h)
	what := "a user's planned instant (--num-users over --user-centric-rate, per turn)"
	defer func() {
		if ns, err := checkedNs(h[0].at, what); !s.fail(err) {
			s.end = s.origin + ns
		}
	}()
	for !s.full() {
		u := h[0]
		start, err := checkedNs(u.at, what)
		if s.fail(err) {
			return
		}
		if s.lim.durationNs > 0 && start >= s.lim.durationNs {
			return
		}
		at := func(i int) int64 {
			ns, err := checkedNs(u.at+float64(i)*gap, what)
			s.fail(err)
			return ns
		}
		n := s.emit(s.smp.next(), start, at, func(*dataset.Turn) int64 { return 0 })
		h[0].at += float64(max(n, 1)) * gap
		heap.Fix(&h, 0)
	}
}

// fixedSession is one timed conversation: its index and its first turn's planned offset.
type fixedSession struct {
	conv   int
	offset int64
}

// fixedSchedule: the input's sessions in timestamp order (see prepareFixed), each first turn
// at its offset, later turns at their own timestamps when they have one.
func (s *scheduler) fixedSchedule() {
	for _, fs := range s.fixed {
		// A duration counts from the first instant, as replay counts it.
		if s.full() || (s.lim.durationNs > 0 && fs.offset-s.fixed[0].offset >= s.lim.durationNs) {
			return
		}
		turns := s.ds.Conversations[fs.conv].Turns
		base := turns[0].TimestampNs
		at := func(i int) int64 {
			if turns[i].TimestampNs == dataset.NoTime {
				return mmapds.NoSendOffset
			}
			ns, err := checkedNs(float64(fs.offset)/1e9+float64(turns[i].TimestampNs-base)/s.speedup/1e9,
				fmt.Sprintf("session %q turn %d's timestamp (after --synthesis-speedup-ratio)", s.ds.Conversations[fs.conv].SessionID, i))
			s.fail(err)
			return ns
		}
		s.emit(fs.conv, fs.offset, at, s.delayNs)
	}
}

// prepareFixed orders the timed conversations by first timestamp (stable on input order),
// keeps those whose first timestamp lies in the window [start, end] (ms, nil = open), and
// turns timestamps into offsets from zero: the first kept timestamp with auto-offset, else
// the start offset, else the input's own origin; divided by speedup.
func prepareFixed(ds *dataset.Dataset, autoOffset bool, startMs, endMs *int64, speedup float64) ([]fixedSession, error) {
	type ts struct {
		conv int
		ns   int64
	}
	var all []ts
	for i, c := range ds.Conversations {
		if len(c.Turns) == 0 {
			continue
		}
		t := c.Turns[0].TimestampNs
		if t == dataset.NoTime {
			return nil, usagef("fixed schedule: conversation %d (session %q) has no timestamp", i, c.SessionID)
		}
		if startMs != nil && t < *startMs*1e6 {
			continue
		}
		if endMs != nil && t > *endMs*1e6 {
			continue
		}
		all = append(all, ts{i, t})
	}
	slices.SortStableFunc(all, func(a, b ts) int {
		switch {
		case a.ns < b.ns:
			return -1
		case a.ns > b.ns:
			return 1
		}
		return 0
	})
	var zero int64
	switch {
	case autoOffset && len(all) > 0:
		zero = all[0].ns
	case startMs != nil:
		zero = *startMs * 1e6
	}
	out := make([]fixedSession, len(all))
	for i, a := range all {
		off, err := checkedNs(math.Max(0, float64(a.ns-zero)/speedup/1e9),
			fmt.Sprintf("session %q's first timestamp (after the offsets and --synthesis-speedup-ratio; --fixed-schedule-auto-offset starts at the first)", ds.Conversations[a.conv].SessionID))
		if err != nil {
			return nil, err
		}
		out[i] = fixedSession{conv: a.conv, offset: off}
	}
	return out, nil
}

// userSlot is one user's next session start, in seconds.
type userSlot struct {
	user int
	at   float64
}

// userHeap orders users by next start, then by user number, so ties are deterministic.
type userHeap []userSlot

func (h userHeap) Len() int { return len(h) }
func (h userHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].user < h[j].user
}
func (h userHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *userHeap) Push(x any)   { *h = append(*h, x.(userSlot)) }
func (h *userHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
