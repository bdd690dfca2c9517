package schedule

import "testing"

// Prefill cap: under concurrency 8 and a prefill cap of 2, never more than 2 requests are
// between their start and their first byte, yet more than 2 run at once (the others decode);
// a request that waited for its prefill slot is ready the instant it got it (a first byte or
// an end freed it), and one that never sends a first byte frees its slot with its end.
func TestSchedulerPrefillCap(t *testing.T) {
	for _, tc := range []struct {
		name string
		g    func() *Graph
	}{
		{"closed loop", func() *Graph { return singles(t, 40, nil, nil) }},
		{"open loop", func() *Graph { return singles(t, 40, func(i int) int64 { return int64(i) * 5 * ms }, nil) }},
		{"sessions", func() *Graph { return chains(t, 10, 4, nil, func(int) int64 { return 3 * ms }) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newSim(t, tc.g(), Config{Slots: Slots(8, 0, Part{}), PrefillSlots: Slots(2, 0, Part{})})
			m.dur = func(int32) int64 { return 60 * ms }
			m.pf = func(n int32) int64 {
				if n%5 == 4 {
					return 60 * ms // no first byte: ends in prefill
				}
				return 15 * ms
			}
			m.run()
			if len(m.recs) != m.g.Len() {
				t.Fatalf("%d of %d released", len(m.recs), m.g.Len())
			}
			frees := map[int64]bool{}
			for n, r := range m.recs {
				frees[m.prefilled[n]] = true
				frees[r.end] = true
			}
			for n, r := range m.recs {
				if got := m.inPrefillAt(r.start); got > 2 {
					t.Fatalf("node %d at %d ms: %d in prefill, cap 2", n, r.start/ms, got)
				}
				// The sim sends what is due at once: a request is sent when it is ready, and
				// a request that waited for its prefill slot got it at a freeing.
				if r.ready != r.start {
					t.Fatalf("node %d: ready %d, started %d", n, r.ready, r.start)
				}
				if at := m.g.Node(n).At; r.start < at {
					t.Fatalf("node %d started at %d, before its instant %d", n, r.start, at)
				}
				if at := m.g.Node(n).At; r.start != at && !m.g.Unit(r.unit).Warmup && at >= 0 && !frees[r.start] {
					t.Fatalf("node %d started at %d ms, after its instant %d ms and not at a freeing", n, r.start/ms, at/ms)
				}
			}
			if got := m.maxInFlight(); got <= 2 {
				t.Fatalf("max in flight %d: the prefill cap held decoding requests back", got)
			}
		})
	}
}

// Prefill ramp: the cap's slots open like concurrency's (slot j of N at ramp·j/(N-1)).
func TestSchedulerPrefillRamp(t *testing.T) {
	const n, ramp = 4, 300 * ms
	m := newSim(t, singles(t, 60, nil, nil), Config{Slots: Slots(16, 0, Part{}), PrefillSlots: Slots(n, ramp, Part{})})
	m.dur = func(int32) int64 { return 80 * ms }
	m.pf = func(int32) int64 { return 40 * ms }
	m.run()
	opened := func(at int64) int { return min(n, int(at*(n-1)/ramp)+1) }
	for i, r := range m.recs {
		if got := m.inPrefillAt(r.start); got > opened(r.start) {
			t.Fatalf("node %d at %d ms: %d in prefill, %d slots open", i, r.start/ms, got, opened(r.start))
		}
	}
	for j := 0; j < n; j++ {
		at := ramp * int64(j) / (n - 1)
		if got := m.inPrefillAt(at); got != j+1 {
			t.Fatalf("at %d ms (prefill slot %d opens): %d in prefill, want %d", at/ms, j, got, j+1)
		}
	}
}

// Phases: the warmup runs under its own concurrency and ramp from the run's start, the
// closed-loop profile under its own, ramping again from the warmup's end (AIPerf ramps each
// phase); the two are counted together, so the cap never adds up over phases.
func TestSchedulerPhaseLimits(t *testing.T) {
	warm := func(i int) bool { return i < 12 }
	const wramp, pramp = 100 * ms, 200 * ms
	m := newSim(t, singles(t, 40, nil, warm), Config{WarmupSlots: Slots(2, wramp, Part{}), Slots: Slots(5, pramp, Part{})})
	m.dur = func(int32) int64 { return 25 * ms }
	m.run()
	warmEnd := int64(0)
	for i := int32(0); i < 12; i++ {
		warmEnd = max(warmEnd, m.recs[i].end)
	}
	for i, r := range m.recs {
		var cap int
		if i < 12 {
			cap = min(2, int(r.start*1/wramp)+1)
		} else {
			if r.start < warmEnd {
				t.Fatalf("profile node %d started at %d, before the warmup ended at %d", i, r.start, warmEnd)
			}
			cap = min(5, int((r.start-warmEnd)*4/pramp)+1)
		}
		if got := m.unitsInFlight(r.start); got > cap {
			t.Fatalf("node %d at %d ms: %d in flight, its phase allows %d", i, r.start/ms, got, cap)
		}
	}
	if got := m.unitsInFlight(warmEnd + pramp); got != 5 {
		t.Fatalf("at the end of the profile's ramp: %d in flight, want 5", got)
	}
	if got := m.unitsInFlight(warmEnd); got != 1 {
		t.Fatalf("at the profile's start: %d in flight, want 1 (its ramp starts over)", got)
	}
}

// A full phase does not hold the other: an open-loop profile whose own cap is larger starts
// as soon as the total is under it, while warmup requests still run.
func TestSchedulerPhaseOverlap(t *testing.T) {
	g := &Graph{}
	for i := 0; i < 6; i++ {
		u := g.AddUnit(Unit{Warmup: i < 3})
		if _, err := g.AddNode(u, Node{Index: int32(i), At: int64(i) * ms}); err != nil {
			t.Fatal(err)
		}
	}
	m := newSim(t, g, Config{WarmupSlots: Slots(3, 0, Part{}), Slots: Slots(4, 0, Part{}), ProfileOpen: true, ProfileStartNs: 3 * ms})
	m.dur = func(int32) int64 { return 100 * ms }
	m.run()
	if r := m.recs[3]; r.start != 3*ms {
		t.Fatalf("first profile unit started at %d, want 3 ms (3 warmup units of a cap of 4 run)", r.start)
	}
	if r := m.recs[4]; r.start != 100*ms {
		t.Fatalf("second profile unit started at %d ms, want at the first warmup end (the cap of 4 is total)", r.start/ms)
	}
}
