package schedule

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Cap: a closed loop of concurrency N keeps exactly N units in flight while it has work, and
// a unit starts the moment a slot frees.
func TestSchedulerCap(t *testing.T) {
	for _, n := range []int{1, 3, 8} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			m := newSim(t, singles(t, 20, nil, nil), Config{Slots: Slots(n, 0, Part{})})
			m.dur = func(i int32) int64 { return int64(10+i%7) * ms }
			m.run()
			if len(m.recs) != 20 {
				t.Fatalf("%d of 20 released", len(m.recs))
			}
			if got := m.maxInFlight(); got != n {
				t.Fatalf("max in flight %d, want %d", got, n)
			}
			ends := map[int64]bool{0: true}
			for _, r := range m.recs {
				ends[r.end] = true
			}
			for i, r := range m.recs {
				if r.start < 0 || r.ready != r.start || !ends[r.start] {
					t.Fatalf("node %d: ready %d start %d: not at the start or at a slot's freeing", i, r.ready, r.start)
				}
			}
		})
	}
}

// Ramp: slot j of N opens at ramp·j/(N-1); in flight never exceeds the slots open, and each
// slot is used from the instant it opens.
func TestSchedulerRamp(t *testing.T) {
	const n, ramp = 4, 300 * ms
	m := newSim(t, singles(t, 40, nil, nil), Config{Slots: Slots(n, ramp, Part{})})
	m.dur = func(int32) int64 { return 45 * ms }
	m.run()
	opened := func(at int64) int { return min(n, int(at*(n-1)/ramp)+1) }
	for i, r := range m.recs {
		if got := m.inFlight(r.start); got > opened(r.start) {
			t.Fatalf("node %d at %d ms: %d in flight, %d slots open", i, r.start/ms, got, opened(r.start))
		}
	}
	for j := 0; j < n; j++ {
		at := ramp * int64(j) / (n - 1)
		if m.inFlight(at) != j+1 {
			t.Fatalf("at %d ms (slot %d opens): %d in flight, want %d", at/ms, j, m.inFlight(at), j+1)
		}
	}
}

// Shard share with a ramp: shard 0 of 2 at concurrency 4 owns global slots 0 and 2 (open at
// 0 and 200 ms of a 300 ms ramp): at most 1 in flight before 200 ms, 2 after, never more.
// The event loop once gave such a shard all its requests at once.
func TestSchedulerShardShareWithRamp(t *testing.T) {
	const ramp = 300 * ms
	for _, tc := range []struct {
		part  Part
		slots []int64
	}{
		{Part{Shard: 0, Shards: 2, Workers: 1}, []int64{0, 200 * ms}},
		{Part{Shard: 1, Shards: 2, Workers: 1}, []int64{100 * ms, 300 * ms}},
		{Part{Shard: 0, Shards: 2, Worker: 1, Workers: 2}, []int64{200 * ms}},
	} {
		t.Run(fmt.Sprint(tc.part), func(t *testing.T) {
			slots := Slots(4, ramp, tc.part)
			if !slices.Equal(slots, tc.slots) {
				t.Fatalf("slots %v, want %v", slots, tc.slots)
			}
			m := newSim(t, singles(t, 12, nil, nil), Config{Slots: slots})
			m.dur = func(int32) int64 { return 30 * ms }
			m.run()
			for i, r := range m.recs {
				open := 0
				for _, at := range slots {
					if at <= r.start {
						open++
					}
				}
				if got := m.inFlight(r.start); got > open {
					t.Fatalf("node %d at %d ms: %d in flight, %d of the shard's slots open", i, r.start/ms, got, open)
				}
				if r.start < slots[0] {
					t.Fatalf("node %d started at %d ms, before the shard's first slot opened", i, r.start/ms)
				}
			}
			if got := m.maxInFlight(); got != len(slots) {
				t.Fatalf("max in flight %d, want the share %d", got, len(slots))
			}
		})
	}
}

// The deal: over every shard and worker, each global slot is owned once, opens at its one
// instant, and the shares add up to the concurrency.
func TestSlotsDeal(t *testing.T) {
	for _, tc := range []struct{ n, shards, workers int }{{7, 3, 2}, {4, 2, 1}, {5, 1, 2}, {1, 1, 1}, {1000, 4, 7}} {
		const ramp = 600 * ms
		seen := map[int64]int{}
		total := 0
		for si := 0; si < tc.shards; si++ {
			shard := 0
			for w := 0; w < tc.workers; w++ {
				p := Part{Shard: si, Shards: tc.shards, Worker: w, Workers: tc.workers}
				at := Slots(tc.n, ramp, p)
				if len(at) != Share(tc.n, p) {
					t.Fatalf("%+v: %d slots, share %d", p, len(at), Share(tc.n, p))
				}
				if !slices.IsSorted(at) {
					t.Fatalf("%+v: slots out of order %v", p, at)
				}
				for _, a := range at {
					seen[a]++
				}
				total += len(at)
				shard += len(at)
			}
			if want := Share(tc.n, Part{Shard: si, Shards: tc.shards}); shard != want {
				t.Fatalf("%+v shard %d: workers own %d slots, the shard %d", tc, si, shard, want)
			}
		}
		if total != tc.n {
			t.Fatalf("%+v: %d slots owned, want %d", tc, total, tc.n)
		}
		if tc.n > 1 && len(seen) != tc.n {
			t.Fatalf("%+v: %d distinct instants, want %d", tc, len(seen), tc.n)
		}
		for at, c := range seen {
			if tc.n > 1 && c != 1 {
				t.Fatalf("%+v: instant %d opened %d times", tc, at, c)
			}
		}
	}
	if Share(5, Part{Workers: 2}) != 3 || Share(5, Part{Worker: 1, Workers: 2}) != 2 || Share(1, Part{Worker: 1, Workers: 2}) != 0 {
		t.Fatal("shares")
	}
	// A ramp of hours over a large concurrency does not overflow.
	if at := Slots(1_000_000, 10*3600e9, Part{Shard: 999_999 % 3, Shards: 3}); at[len(at)-1] != 10*3600e9 {
		t.Fatalf("last slot opens at %d", at[len(at)-1])
	}
}

// Rate with a concurrency ceiling: open-loop units go at their instants while a slot is
// free; one that finds none waits, first come first served, and is ready when it gets one;
// none is dropped and a late one never delays the instants of the ones after it.
func TestSchedulerRateWithCeiling(t *testing.T) {
	m := newSim(t, singles(t, 10, func(i int) int64 { return int64(i) * 5 * ms }, nil), Config{Slots: Slots(2, 0, Part{})})
	m.dur = func(int32) int64 { return 50 * ms }
	m.run()
	if len(m.recs) != 10 || m.maxInFlight() != 2 {
		t.Fatalf("%d released, max in flight %d", len(m.recs), m.maxInFlight())
	}
	waited := 0
	var prev int64 = -1
	for i := int32(0); i < 10; i++ {
		r := m.recs[i]
		at := m.g.Node(i).At
		switch {
		case r.ready < at:
			t.Fatalf("node %d ready at %d before its instant %d", i, r.ready, at)
		case r.ready < prev:
			t.Fatalf("node %d ready at %d before node %d (%d): not first come first served", i, r.ready, i-1, prev)
		}
		if r.ready > at {
			waited++
		}
		prev = r.ready
	}
	if waited != 8 {
		t.Fatalf("%d waited, want 8", waited)
	}
	// Two slots free at the same instant: the units queued behind the blocked one waited
	// too, and are ready when they get their slots, not at their past instants.
	m = newSim(t, singles(t, 6, func(i int) int64 { return int64(i) * ms }, nil), Config{Slots: Slots(2, 0, Part{})})
	m.dur = func(n int32) int64 { return (100 - int64(n)) * ms } // units 0 and 1 both end at 100 ms
	m.run()
	for i := int32(2); i < 4; i++ {
		if r := m.recs[i]; r.ready != 100*ms || r.start != 100*ms {
			t.Fatalf("queued node %d ready at %d ms, started at %d ms; want both 100 ms", i, r.ready/ms, r.start/ms)
		}
	}
	// Unbounded: every request at its instant.
	m = newSim(t, singles(t, 10, func(i int) int64 { return int64(i) * 5 * ms }, nil), Config{})
	m.dur = func(int32) int64 { return 50 * ms }
	m.run()
	for i, r := range m.recs {
		if r.ready != m.g.Node(i).At || r.start != r.ready {
			t.Fatalf("unbounded: node %d ready %d start %d", i, r.ready, r.start)
		}
	}
}

// Warmup gate: closed-loop profile units start only once every closed-loop warmup unit has
// ended; open-loop profile units are not held back.
func TestSchedulerWarmupGate(t *testing.T) {
	warm := func(i int) bool { return i < 3 }
	m := newSim(t, singles(t, 8, nil, warm), Config{Slots: Slots(4, 0, Part{})})
	m.dur = func(i int32) int64 { return int64(20*(i+1)) * ms }
	m.run()
	lastWarm := max(m.recs[0].end, m.recs[1].end, m.recs[2].end)
	for i := int32(3); i < 8; i++ {
		if m.recs[i].ready < lastWarm {
			t.Fatalf("profile node %d ready at %d, before the warmup ended at %d", i, m.recs[i].ready, lastWarm)
		}
	}
	if m.recs[3].ready != lastWarm {
		t.Fatalf("first profile node ready at %d, want the warmup's end %d", m.recs[3].ready, lastWarm)
	}
	// An open-loop profile behind a closed-loop warmup keeps its instants.
	g := &Graph{}
	for i := 0; i < 4; i++ {
		u := g.AddUnit(Unit{Warmup: i < 2})
		at := NoInstant
		if i >= 2 {
			at = int64(i) * ms
		}
		if _, err := g.AddNode(u, Node{Index: int32(i), At: at}); err != nil {
			t.Fatal(err)
		}
	}
	m = newSim(t, g, Config{Slots: Slots(4, 0, Part{})})
	m.dur = func(int32) int64 { return 100 * ms }
	m.run()
	if m.recs[2].ready != 2*ms || m.recs[3].ready != 3*ms {
		t.Fatalf("open-loop profile ready at %d, %d", m.recs[2].ready, m.recs[3].ready)
	}
}

// Think time: a later node is ready its think time after its parent ended, or at its own
// fixed instant when that is later; the unit holds its slot through the think time.
func TestSchedulerThinkTime(t *testing.T) {
	g := chains(t, 3, 3, nil, func(k int) int64 { return int64(k) * 20 * ms })
	// Session 0's last turn has a fixed instant far after its parent's end.
	g.Node(2).At = 500 * ms
	m := newSim(t, g, Config{Slots: Slots(2, 0, Part{})})
	m.run()
	for i := int32(0); i < int32(g.Len()); i++ {
		r := m.recs[i]
		parents := g.Parents(i)
		if len(parents) == 0 {
			continue
		}
		want := max(g.Node(i).At, m.recs[parents[0]].end+g.Node(i).Think)
		if r.ready != want || r.start != want {
			t.Fatalf("node %d ready %d start %d, want %d", i, r.ready, r.start, want)
		}
	}
	for _, r := range m.recs {
		if got := m.unitsInFlight(r.start); got > 2 {
			t.Fatalf("%d units hold slots at %d", got, r.start)
		}
	}
	// The third session waits for a slot: it starts when one of the first two is over.
	if s2, over := m.recs[6].start, min(m.recs[2].end, m.recs[5].end); s2 != over {
		t.Fatalf("third session started at %d, want the first unit's end %d", s2, over)
	}
}

// Joins: a node with several parents is released once all of them ended, its think time
// after the last; a Strict node whose parent failed is skipped with everything below it,
// and counted; a non-strict one goes on.
func TestSchedulerGraph(t *testing.T) {
	// One unit: 0 -> {1, 2} -> 3 (join) -> 4; 1 fails.
	build := func(strict bool) *Graph {
		g := &Graph{}
		u := g.AddUnit(Unit{})
		add := func(n Node, parents ...int32) {
			if _, err := g.AddNode(u, n, parents...); err != nil {
				t.Fatal(err)
			}
		}
		add(Node{Index: 10, At: NoInstant})
		add(Node{Index: 11, At: NoInstant, Think: 1 * ms}, 0)
		add(Node{Index: 12, At: NoInstant, Think: 2 * ms}, 0)
		add(Node{Index: 13, At: NoInstant, Think: 5 * ms, Strict: strict}, 1, 2)
		add(Node{Index: 14, At: NoInstant, Think: 0}, 3)
		// A second unit waits for the first one's slot.
		u2 := g.AddUnit(Unit{})
		if _, err := g.AddNode(u2, Node{Index: 20, At: NoInstant}); err != nil {
			t.Fatal(err)
		}
		return g
	}
	for _, strict := range []bool{false, true} {
		t.Run(fmt.Sprint("strict=", strict), func(t *testing.T) {
			g := build(strict)
			m := newSim(t, g, Config{Slots: Slots(1, 0, Part{})})
			m.dur = func(n int32) int64 { return int64(10*(n+1)) * ms }
			m.fail = func(n int32) bool { return n == 1 }
			m.run()
			r1, r2 := m.recs[1], m.recs[2]
			if r1.ready != m.recs[0].end+1*ms || r2.ready != m.recs[0].end+2*ms {
				t.Fatalf("children ready at %d, %d after the parent ended at %d", r1.ready, r2.ready, m.recs[0].end)
			}
			if m.recs[1].start >= m.recs[2].end || m.recs[2].start >= m.recs[1].end {
				t.Fatal("the two children of one unit did not run at once")
			}
			if !strict {
				if r3 := m.recs[3]; r3 == nil || r3.ready != max(r1.end, r2.end)+5*ms || m.recs[4] == nil || m.s.Skipped() != 0 {
					t.Fatalf("join: %+v, skipped %d", r3, m.s.Skipped())
				}
				return
			}
			if m.recs[3] != nil || m.recs[4] != nil || m.s.Skipped() != 2 {
				t.Fatalf("strict join after a failed parent: released %v %v, skipped %d", m.recs[3], m.recs[4], m.s.Skipped())
			}
			if m.s.SkippedFor(3) != 11 || m.s.SkippedFor(4) != 11 || m.s.SkippedFor(2) != -1 {
				t.Fatalf("skipped for %d %d %d", m.s.SkippedFor(3), m.s.SkippedFor(4), m.s.SkippedFor(2))
			}
			// The unit is over when its last running node ends: the next unit gets the slot.
			if got, want := m.recs[5].start, max(r1.end, r2.end); got != want {
				t.Fatalf("second unit started at %d, want %d", got, want)
			}
		})
	}
}

// Graph checks: a unit's first node has no parents, the others have parents that are
// earlier nodes of the same unit, think times are not negative.
func TestGraphChecks(t *testing.T) {
	g := &Graph{}
	u, v := g.AddUnit(Unit{}), g.AddUnit(Unit{})
	for _, tc := range []struct {
		unit    int32
		node    Node
		parents []int32
		err     string
	}{
		{u, Node{Index: 1, At: NoInstant}, []int32{0}, "first node has no parents"},
		{u, Node{Index: 1, At: -5}, nil, "instant -5"},
		{u, Node{Index: 1, At: NoInstant}, nil, ""},
		{u, Node{Index: 2, At: NoInstant, Think: -1}, []int32{0}, "think time -1"},
		{u, Node{Index: 2, At: NoInstant, Think: -1}, nil, "think time -1"},
		{u, Node{Index: 2, At: NoInstant}, []int32{1}, "parent 1 is not an earlier node"},
		{v, Node{Index: 3, At: 0}, nil, ""},
		{v, Node{Index: 4, At: NoInstant}, []int32{0}, "parent 0 is not an earlier node of its unit"},
		{9, Node{Index: 4}, nil, "no unit 9"},
	} {
		_, err := g.AddNode(tc.unit, tc.node, tc.parents...)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%+v %v: %v, want %q", tc.node, tc.parents, err, tc.err)
		}
	}
	g.AddUnit(Unit{})
	if _, err := New(g, Config{Slots: []int64{0}}); err == nil || !strings.Contains(err.Error(), "no node") {
		t.Errorf("empty unit: %v", err)
	}
	if _, err := New(singles(t, 2, nil, nil), Config{}); err == nil || !strings.Contains(err.Error(), "need concurrency") {
		t.Errorf("closed loop without slots: %v", err)
	}
}

// Cancellation: after Stop nothing more is released (waiting turns are dropped), what runs
// ends, and the run is over once it has.
func TestSchedulerStop(t *testing.T) {
	g := chains(t, 6, 3, func(s int) int64 { return int64(s) * 20 * ms }, func(int) int64 { return 5 * ms })
	m := newSim(t, g, Config{Slots: Slots(3, 0, Part{})})
	m.dur = func(int32) int64 { return 30 * ms }
	m.stopAt = 50 * ms
	m.run()
	if m.s.Stopped() != Cancelled {
		t.Fatalf("stopped %v", m.s.Stopped())
	}
	for n, r := range m.recs {
		if r.start > m.stopAt {
			t.Fatalf("node %d released at %d, after the stop at %d", n, r.start, m.stopAt)
		}
		if r.end < 0 {
			t.Fatalf("node %d never ended", n)
		}
	}
	if len(m.recs) == 0 || len(m.recs) == g.Len() {
		t.Fatalf("%d of %d released", len(m.recs), g.Len())
	}
	for u := int32(0); u < int32(g.Units()); u++ {
		started := m.recs[g.Unit(u).Entry()] != nil
		if started != m.s.UnitOver(u) {
			t.Fatalf("unit %d: started %v, over %v", u, started, m.s.UnitOver(u))
		}
	}
	// Stopping before the start releases nothing.
	m = newSim(t, chains(t, 2, 2, nil, func(int) int64 { return 0 }), Config{Slots: Slots(2, 0, Part{})})
	m.s.Stop()
	m.run()
	if len(m.recs) != 0 {
		t.Fatalf("%d released after a stop before the start", len(m.recs))
	}
}

// Duration: no request starts after the profile start plus the duration; the scheduler
// stops itself then, and what still runs a grace period later is to be cut.
func TestSchedulerDuration(t *testing.T) {
	for _, tc := range []struct {
		name      string
		g         func() *Graph
		c         Config
		dur       int64
		until     int64 // want: last instant a request may start
		aborted   bool
		lateFirst bool // the until counts from the warmup's end
	}{
		{name: "closed loop", g: func() *Graph { return singles(t, 2000, nil, nil) },
			c: Config{Slots: Slots(2, 0, Part{}), DurationNs: 150 * ms, GraceNs: 1e9}, dur: 7 * ms, until: 150 * ms},
		{name: "open loop from its first instant", g: func() *Graph { return singles(t, 100, func(i int) int64 { return 40*ms + int64(i)*10*ms }, nil) },
			c: Config{DurationNs: 300 * ms, ProfileStartNs: 40 * ms, ProfileOpen: true, GraceNs: 20 * ms}, dur: 100 * ms, until: 340 * ms, aborted: true},
		{name: "closed profile after a closed warmup", g: func() *Graph { return singles(t, 500, nil, func(i int) bool { return i < 4 }) },
			c: Config{Slots: Slots(2, 0, Part{}), DurationNs: 100 * ms, GraceNs: -1}, dur: 9 * ms, lateFirst: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.g()
			m := newSim(t, g, tc.c)
			m.dur = func(int32) int64 { return tc.dur }
			m.run()
			until := tc.until
			if tc.lateFirst {
				for i := int32(0); i < 4; i++ {
					until = max(until, m.recs[i].end)
				}
				until += tc.c.DurationNs
			}
			if m.s.Stopped() != DurationElapsed {
				t.Fatalf("stopped %v", m.s.Stopped())
			}
			last := int64(-1)
			for n, r := range m.recs {
				if r.ready > until {
					t.Fatalf("node %d ready at %d, after the duration's end %d", n, r.ready, until)
				}
				last = max(last, r.ready)
			}
			if last < until-tc.dur-10*ms {
				t.Fatalf("last request ready at %d, well before the duration's end %d", last, until)
			}
			if len(m.recs) == g.Len() {
				t.Fatal("every request sent: the duration cut nothing")
			}
			if tc.aborted != (m.aborted > 0) {
				t.Fatalf("%d cut by the grace period", m.aborted)
			}
			if tc.c.GraceNs >= 0 && m.s.AbortAt() != until+tc.c.GraceNs {
				t.Fatalf("abort at %d, want %d", m.s.AbortAt(), until+tc.c.GraceNs)
			}
			if tc.c.GraceNs < 0 && m.s.AbortAt() != Never {
				t.Fatalf("abort at %d with an infinite grace", m.s.AbortAt())
			}
		})
	}
}

// NextWake says when an open-loop instant comes (which a transport may spin for), and
// nothing while only an end can free a slot.
func TestSchedulerNextWake(t *testing.T) {
	s, err := New(singles(t, 2, func(i int) int64 { return int64(i+1) * 10 * ms }, nil), Config{Slots: Slots(1, 0, Part{})})
	if err != nil {
		t.Fatal(err)
	}
	if at, open := s.NextWake(); at != 10*ms || !open {
		t.Fatalf("next wake %d %v, want 10 ms open", at, open)
	}
	if _, ok := s.Due(9 * ms); ok {
		t.Fatal("released before its instant")
	}
	r, ok := s.Due(12 * ms)
	if !ok || r.Ready != 10*ms || !r.Entry {
		t.Fatalf("release %+v %v", r, ok)
	}
	if _, ok := s.Due(25 * ms); ok {
		t.Fatal("released without a free slot")
	}
	if at, _ := s.NextWake(); at != Never {
		t.Fatalf("next wake %d while the due unit waits for a slot", at)
	}
	s.Ended(r.Node, 30*ms, true)
	if r, ok := s.Due(31 * ms); !ok || r.Ready != 31*ms {
		t.Fatalf("release after the wait %+v %v: ready must be when it got the slot", r, ok)
	}
	// A closed loop before the start wakes at the start.
	s, _ = New(singles(t, 1, nil, nil), Config{Slots: Slots(1, 0, Part{})})
	if _, ok := s.Due(-1); ok {
		t.Fatal("closed loop released before the start")
	}
	if at, open := s.NextWake(); at != 0 || open {
		t.Fatalf("closed loop next wake %d %v", at, open)
	}
}

// Steady state allocates nothing: a closed loop of chains released and ended over and over.
func TestSchedulerAllocs(t *testing.T) {
	g := chains(t, 2000, 3, nil, func(int) int64 { return ms })
	s, err := New(g, Config{Slots: Slots(8, 0, Part{})})
	if err != nil {
		t.Fatal(err)
	}
	now := int64(0)
	var running []Release
	step := func() {
		for {
			r, ok := s.Due(now)
			if !ok {
				break
			}
			running = append(running, r)
		}
		now += ms
		for _, r := range running {
			s.Ended(r.Node, now, true)
		}
		running = running[:0]
	}
	for i := 0; i < 50; i++ {
		step()
	}
	if a := testing.AllocsPerRun(500, step); a != 0 {
		t.Fatalf("%.1f allocations per step", a)
	}
	if s.Finished() {
		t.Fatal("ran out of work while measuring")
	}
}

// BenchmarkSchedulerClosedLoop is the scheduler's cost per request in a closed loop of
// concurrency 64 (one Ended, one Due): what both clients pay per request for the rules.
func BenchmarkSchedulerClosedLoop(b *testing.B) {
	b.Run("plain", func(b *testing.B) { benchClosedLoop(b, nil) })
	// Under in-run adaptive scale's gate (a cap of 48 of the plan's 64): its atomic reads
	// add no allocation and next to no time.
	b.Run("gated", func(b *testing.B) {
		g := NewGate(Part{}, 1)
		if err := g.Set(GateConcurrency, 48); err != nil {
			b.Fatal(err)
		}
		benchClosedLoop(b, g)
	})
}

func benchClosedLoop(b *testing.B, gate *Gate) {
	g := singles(b, b.N+64, nil, nil)
	s, err := New(g, Config{Slots: Slots(64, 0, Part{}), Gate: gate})
	if err != nil {
		b.Fatal(err)
	}
	var ring [64]int32
	head, n := 0, 0
	b.ReportAllocs()
	b.ResetTimer()
	for now := int64(0); ; now++ {
		for {
			r, ok := s.Due(now)
			if !ok {
				break
			}
			ring[(head+n)%64] = r.Node
			n++
		}
		if n == 0 {
			break
		}
		s.Ended(ring[head], now, true)
		head, n = (head+1)%64, n-1
	}
}

// A unit's other roots (nodes without parents that are not its entry) are released their
// think time after the entry, and no earlier than their own instant; the unit holds its
// slot until they and what follows them ended, and the next unit waits for it.
func TestSchedulerOtherRoots(t *testing.T) {
	g := &Graph{}
	u := g.AddUnit(Unit{})
	add := func(u int32, n Node, parents ...int32) {
		t.Helper()
		if _, err := g.AddNode(u, n, parents...); err != nil {
			t.Fatal(err)
		}
	}
	add(u, Node{Index: 0, At: NoInstant})                 // entry
	add(u, Node{Index: 1, At: NoInstant, Think: 3 * ms})  // root, 3 ms after the entry
	add(u, Node{Index: 2, At: NoInstant, Think: 0}, 1)    // after it
	add(u, Node{Index: 3, At: 50 * ms, Think: 1 * ms})    // root with a later instant
	add(u, Node{Index: 4, At: NoInstant, Think: 0}, 0, 2) // joins the entry and 2
	u2 := g.AddUnit(Unit{})
	add(u2, Node{Index: 5, At: NoInstant})
	m := newSim(t, g, Config{Slots: Slots(1, 0, Part{})})
	m.run()
	e := m.recs[0]
	if r := m.recs[1]; r.ready != e.ready+3*ms || r.entry {
		t.Fatalf("root 1 ready at %d (entry %v), want %d", r.ready, r.entry, e.ready+3*ms)
	}
	if r := m.recs[3]; r.ready != 50*ms {
		t.Fatalf("root 3 ready at %d, want its instant", r.ready)
	}
	if r := m.recs[4]; r.ready != max(e.end, m.recs[2].end) {
		t.Fatalf("join ready at %d", r.ready)
	}
	last := int64(0)
	for i := int32(0); i < 5; i++ {
		last = max(last, m.recs[i].end)
	}
	if r := m.recs[5]; r.start != last || !r.entry {
		t.Fatalf("next unit started at %d, want the first unit's last end %d", r.start, last)
	}
}
