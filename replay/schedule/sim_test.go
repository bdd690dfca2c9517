package schedule

import (
	"sort"
	"testing"
)

const ms = int64(1e6)

// sim drives a Scheduler on a virtual clock, as a transport would: it sends everything Due,
// each request taking dur(node) and failing when fail(node) says so, and moves the clock
// to the next wake-up or request end. It checks on the way that the scheduler never asks to
// be woken at an instant that already passed (a transport would spin on it).
type sim struct {
	t    *testing.T
	g    *Graph
	s    *Scheduler
	now  int64
	dur  func(n int32) int64
	fail func(n int32) bool
	// pf, when set, is how long after its start a node's first byte comes back (Prefilled);
	// a value not below its duration means it ends without one.
	pf        func(n int32) int64
	prefilled map[int32]int64 // node -> when it left prefill (its first byte, or its end)
	// stopAt stops the scheduler (an interruption) at that instant; 0: never.
	stopAt int64
	// step, when set, is called at each instant the clock stops at, before Due (a gate's
	// changes).
	step func(now int64)

	running   map[int32]int64 // node -> end
	inPrefill map[int32]int64 // node -> its first byte, for the nodes released with Prefill
	recs      map[int32]*simRec
	order     []int32 // nodes in release order
	aborted   int     // requests the duration's grace cut
}

type simRec struct {
	ready, start, end int64
	unit              int32
	entry             bool
}

func newSim(t *testing.T, g *Graph, c Config) *sim {
	t.Helper()
	s, err := New(g, c)
	if err != nil {
		t.Fatal(err)
	}
	return &sim{t: t, g: g, s: s, now: -5 * ms, dur: func(int32) int64 { return 10 * ms },
		fail: func(int32) bool { return false }, running: map[int32]int64{}, recs: map[int32]*simRec{},
		inPrefill: map[int32]int64{}, prefilled: map[int32]int64{}}
}

// run runs the scheduler to its end.
func (m *sim) run() *sim {
	m.t.Helper()
	for steps := 0; ; steps++ {
		if steps > 1e6 {
			m.t.Fatal("the run does not end")
		}
		if m.stopAt > 0 && m.now >= m.stopAt && m.s.Stopped() == Running {
			m.s.Stop()
		}
		if m.step != nil {
			m.step(m.now)
		}
		for {
			r, ok := m.s.Due(m.now)
			if !ok {
				break
			}
			if _, dup := m.recs[r.Node]; dup {
				m.t.Fatalf("node %d released twice", r.Node)
			}
			if r.Index != m.g.Node(r.Node).Index || r.Unit != m.g.Node(r.Node).Unit() || r.Ready > m.now {
				m.t.Fatalf("release %+v at %d", r, m.now)
			}
			m.recs[r.Node] = &simRec{ready: r.Ready, start: m.now, end: -1, unit: r.Unit, entry: r.Entry}
			m.order = append(m.order, r.Node)
			m.running[r.Node] = m.now + m.dur(r.Node)
			if m.pf != nil {
				if !r.Prefill {
					m.t.Fatalf("release %+v without Prefill under a prefill cap", r)
				}
				m.inPrefill[r.Node] = m.now + m.pf(r.Node)
			}
		}
		if m.s.AbortDue(m.now) {
			for n := range m.running {
				m.end(n, false)
				m.aborted++
			}
		}
		if m.s.Finished() {
			if len(m.running) > 0 {
				m.t.Fatalf("finished with %d requests running", len(m.running))
			}
			return m
		}
		next, _ := m.s.NextWake()
		if next <= m.now {
			m.t.Fatalf("at %d: next wake-up %d already passed", m.now, next)
		}
		for _, e := range m.running {
			next = min(next, e)
		}
		for _, p := range m.inPrefill {
			next = min(next, p)
		}
		if m.stopAt > m.now {
			next = min(next, m.stopAt)
		}
		if next == Never {
			m.t.Fatalf("at %d: stuck with nothing to wait for (%d running)", m.now, len(m.running))
		}
		m.now = next
		var ending []int32
		for n, e := range m.running {
			if e <= m.now {
				ending = append(ending, n)
			}
		}
		sort.Slice(ending, func(a, b int) bool { return ending[a] < ending[b] })
		var firsts []int32
		for n, p := range m.inPrefill {
			if p <= m.now && p < m.running[n] {
				firsts = append(firsts, n)
			}
		}
		sort.Slice(firsts, func(a, b int) bool { return firsts[a] < firsts[b] })
		for _, n := range firsts {
			delete(m.inPrefill, n)
			m.prefilled[n] = m.now
			m.s.Prefilled(n)
		}
		for _, n := range ending {
			m.end(n, !m.fail(n))
		}
	}
}

func (m *sim) end(n int32, ok bool) {
	delete(m.running, n)
	if _, ok := m.inPrefill[n]; ok {
		delete(m.inPrefill, n)
		m.prefilled[n] = m.now
	}
	m.recs[n].end = m.now
	m.s.Ended(n, m.now, ok)
}

// inFlight is how many requests were running at t (started at or before, ending after).
func (m *sim) inFlight(t int64) int {
	c := 0
	for _, r := range m.recs {
		if r.start <= t && r.end > t {
			c++
		}
	}
	return c
}

// inPrefillAt is how many requests were in prefill at t: started at or before, first byte
// (or end) after.
func (m *sim) inPrefillAt(t int64) int {
	c := 0
	for n, r := range m.recs {
		if p, ok := m.prefilled[n]; ok && r.start <= t && p > t {
			c++
		}
	}
	return c
}

// maxInFlight is the most requests ever running at once.
func (m *sim) maxInFlight() int {
	best := 0
	for _, r := range m.recs {
		best = max(best, m.inFlight(r.start))
	}
	return best
}

// unitsInFlight is how many units held a slot at t: from their entry's start to the end of
// their last node.
func (m *sim) unitsInFlight(t int64) int {
	first, last := map[int32]int64{}, map[int32]int64{}
	for _, r := range m.recs {
		if r.entry {
			first[r.unit] = r.start
		}
		last[r.unit] = max(last[r.unit], r.end)
	}
	c := 0
	for u, f := range first {
		if f <= t && last[u] > t {
			c++
		}
	}
	return c
}

// graph builders

// singles is n single-request units: closed loop when at is nil, else at at(i).
func singles(t testing.TB, n int, at func(i int) int64, warmup func(i int) bool) *Graph {
	t.Helper()
	g := &Graph{}
	for i := 0; i < n; i++ {
		w := warmup != nil && warmup(i)
		u := g.AddUnit(Unit{Session: uint32(i), Warmup: w})
		node := Node{Index: int32(i), At: NoInstant}
		if at != nil {
			node.At = at(i)
		}
		if _, err := g.AddNode(u, node); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

// chains is sessions of turns each; turn k > 0 thinks think(k) after the previous one.
func chains(t testing.TB, sessions, turns int, at func(s int) int64, think func(k int) int64) *Graph {
	t.Helper()
	g := &Graph{}
	idx := int32(0)
	for s := 0; s < sessions; s++ {
		u := g.AddUnit(Unit{Session: uint32(s)})
		prev := int32(-1)
		for k := 0; k < turns; k++ {
			n := Node{Index: idx, At: NoInstant}
			var err error
			if k == 0 {
				if at != nil {
					n.At = at(s)
				}
				prev, err = g.AddNode(u, n)
			} else {
				n.Think = think(k)
				prev, err = g.AddNode(u, n, prev)
			}
			if err != nil {
				t.Fatal(err)
			}
			idx++
		}
	}
	return g
}
