package schedule

import (
	"math"
	"math/rand"
	"slices"
	"testing"
)

// A concurrency gate below the plan's caps what runs, and a raised gate releases more at once.
func TestGateConcurrency(t *testing.T) {
	for _, tc := range []struct {
		name         string
		plan, first  int
		then         int
		wantBefore   int
		wantAfterMax int
		part         Part
	}{
		{name: "lower then raise", plan: 8, first: 3, then: 6, wantBefore: 3, wantAfterMax: 6},
		{name: "lower then lower", plan: 8, first: 6, then: 2, wantBefore: 6, wantAfterMax: 6},
		{name: "worker 1 of 2", plan: 8, first: 5, then: 8, wantBefore: 2, wantAfterMax: 4, part: Part{Worker: 1, Workers: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gate := NewGate(tc.part, 1)
			if err := gate.Set(GateConcurrency, float64(tc.first)); err != nil {
				t.Fatal(err)
			}
			const change = 200 * ms
			m := newSim(t, singles(t, 200, nil, nil), Config{Slots: Slots(tc.plan, 0, tc.part), Gate: gate})
			m.dur = func(i int32) int64 { return int64(10+i%7) * ms }
			m.step = func(now int64) {
				if now >= change && gate.Cap(GateConcurrency) == int64(Share(tc.first, tc.part)) {
					gate.Set(GateConcurrency, float64(tc.then))
				}
			}
			m.run()
			if len(m.recs) != 200 {
				t.Fatalf("%d of 200 released", len(m.recs))
			}
			before, after := 0, 0
			for _, r := range m.recs {
				n := m.inFlight(r.start)
				if r.start < change {
					before = max(before, n)
				} else {
					after = max(after, n)
				}
			}
			if before != tc.wantBefore {
				t.Fatalf("before the change at most %d in flight, want %d", before, tc.wantBefore)
			}
			if after != tc.wantAfterMax && !(tc.then < tc.first && after <= tc.wantAfterMax) {
				t.Fatalf("after the change at most %d in flight, want %d", after, tc.wantAfterMax)
			}
			if tc.then < tc.first {
				// Lowered: once what ran under the old cap ended, never more than the new cap.
				for _, r := range m.recs {
					if r.start >= change+20*ms && m.inFlight(r.start) > Share(tc.then, tc.part) {
						t.Fatalf("at %d ms: %d in flight under a cap of %d", r.start/ms, m.inFlight(r.start), tc.then)
					}
				}
			}
		})
	}
}

// A prefill gate caps the requests waiting for their first byte, below the plan's cap.
func TestGatePrefill(t *testing.T) {
	gate := NewGate(Part{}, 1)
	if err := gate.Set(GatePrefill, 2); err != nil {
		t.Fatal(err)
	}
	m := newSim(t, singles(t, 60, nil, nil), Config{Slots: Slots(10, 0, Part{}), PrefillSlots: Slots(6, 0, Part{}), Gate: gate})
	m.dur = func(int32) int64 { return 40 * ms }
	m.pf = func(int32) int64 { return 15 * ms }
	m.run()
	for _, r := range m.recs {
		if n := m.inPrefillAt(r.start); n > 2 {
			t.Fatalf("at %d ms: %d in prefill under a gate of 2", r.start/ms, n)
		}
	}
}

// Thinning a Poisson plan keeps the fraction asked for, independently: the kept arrivals'
// gaps stay exponential (coefficient of variation 1) at every level, each level's kept set
// contains the lower levels', and the choice depends only on the seed and the record.
func TestGateThinningKeepsPoisson(t *testing.T) {
	const n, rate = 20000, 1000.0 // per second
	rng := rand.New(rand.NewSource(7))
	at := make([]int64, n)
	tt := 0.0
	for i := range at {
		tt += rng.ExpFloat64() / rate
		at[i] = int64(tt * 1e9)
	}
	var prev map[int32]bool
	for _, f := range []float64{0.1, 0.25, 0.5, 0.9, 1} {
		gate := NewGate(Part{}, 42)
		if err := gate.Set(GateKeep, f); err != nil {
			t.Fatal(err)
		}
		m := newSim(t, singles(t, n, func(i int) int64 { return at[i] }, func(i int) bool { return i < 50 }), Config{Gate: gate})
		m.dur = func(int32) int64 { return ms }
		m.run()
		kept := map[int32]bool{}
		var starts []int64
		for node, r := range m.recs {
			kept[m.g.Node(node).Index] = true
			if !m.g.Unit(r.unit).Warmup {
				starts = append(starts, r.start)
			}
		}
		for i := int32(0); i < 50; i++ {
			if !kept[i] {
				t.Fatalf("keep %v: warmup record %d thinned", f, i)
			}
		}
		profile := float64(n - 50)
		if got := float64(len(starts)) / profile; math.Abs(got-f) > 0.02 {
			t.Fatalf("keep %v: kept %.3f of the arrivals", f, got)
		}
		if m.s.Thinned() != n-len(m.recs) {
			t.Fatalf("keep %v: Thinned %d, %d not released", f, m.s.Thinned(), n-len(m.recs))
		}
		slices.Sort(starts)
		var sum, sq float64
		for i := 1; i < len(starts); i++ {
			g := float64(starts[i] - starts[i-1])
			sum += g
			sq += g * g
		}
		k := float64(len(starts) - 1)
		mean := sum / k
		cv := math.Sqrt(sq/k-mean*mean) / mean
		if math.Abs(cv-1) > 0.05 {
			t.Fatalf("keep %v: gap CV %.3f, want ≈ 1", f, cv)
		}
		if wantMean := 1e9 / (rate * f); math.Abs(mean/wantMean-1) > 0.05 {
			t.Fatalf("keep %v: mean gap %.0f ns, want ≈ %.0f", f, mean, wantMean)
		}
		for i := range prev {
			if !kept[i] {
				t.Fatalf("keep %v: record %d kept at a lower fraction but not here", f, i)
			}
		}
		prev = kept
	}
}

func TestGateSetRefuses(t *testing.T) {
	g := NewGate(Part{}, 0)
	for _, tc := range []struct {
		variable string
		value    float64
	}{
		{GateConcurrency, 0}, {GateConcurrency, 2.5}, {GatePrefill, -1}, {GateKeep, 0}, {GateKeep, 1.5},
		{GateKeep, math.NaN()}, {GateUsers, 0}, {GateUsers, 1.5}, {GateUsers, math.Inf(1)}, {"user", 3},
	} {
		if err := g.Set(tc.variable, tc.value); err == nil {
			t.Errorf("Set(%s, %v): no error", tc.variable, tc.value)
		}
	}
}

// A users gate on a user-centric plan's grid sends exactly the first n users' sessions, as
// the plan placed them, follows a change at once, and never gates the warmup.
func TestGateUsers(t *testing.T) {
	for _, tc := range []struct {
		name          string
		users         int
		rate          float64 // per second
		first, then   int
		startNs       int64
		warmup        int
		sessionsTotal int
	}{
		{name: "4 users at 8/s, 1 then 3", users: 4, rate: 8, first: 1, then: 3, startNs: 0, sessionsTotal: 200},
		{name: "7 users at 3.5/s behind a warmup, 5 then 2", users: 7, rate: 3.5, first: 5, then: 2, startNs: 2e9 + 1, warmup: 6, sessionsTotal: 150},
		{name: "1 user", users: 1, rate: 1, first: 1, then: 1, sessionsTotal: 20},
		{name: "all of 3 then 1", users: 3, rate: 100, first: 3, then: 1, startNs: 5e8, warmup: 3, sessionsTotal: 300},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Profile session j enters at start + j/rate: user j mod users (one-turn sessions,
			// so each user's next session is one gap of users/rate later).
			at := func(i int) int64 {
				if i < tc.warmup {
					return int64(i) * 1e6
				}
				return tc.startNs + int64(math.Round(float64(i-tc.warmup)/tc.rate*1e9))
			}
			gate := NewGate(Part{}, 9)
			gate.SetUserGrid(tc.users, tc.rate, tc.startNs)
			if err := gate.Set(GateUsers, float64(tc.first)); err != nil {
				t.Fatal(err)
			}
			change := tc.startNs + int64(float64(tc.sessionsTotal/2)/tc.rate*1e9)
			m := newSim(t, singles(t, tc.warmup+tc.sessionsTotal, at, func(i int) bool { return i < tc.warmup }), Config{Gate: gate})
			m.dur = func(int32) int64 { return ms }
			m.step = func(now int64) {
				if now >= change {
					gate.Set(GateUsers, float64(tc.then))
				}
			}
			m.run()
			sent := map[int32]int64{}
			for node, r := range m.recs {
				sent[m.g.Node(node).Index] = r.start
			}
			want := 0
			for i := 0; i < tc.warmup+tc.sessionsTotal; i++ {
				start, ok := sent[int32(i)]
				if i < tc.warmup {
					if !ok {
						t.Fatalf("warmup session %d gated", i)
					}
					want++
					continue
				}
				user := (i - tc.warmup) % tc.users
				n := tc.first
				if at(i) >= change {
					n = tc.then
				}
				if ok != (user < n) {
					t.Fatalf("session %d (user %d at %d ns) sent %v under %d users", i, user, at(i), ok, n)
				}
				if ok {
					want++
					if start != at(i) {
						t.Fatalf("session %d sent at %d, planned %d", i, start, at(i))
					}
				}
			}
			if len(m.recs) != want || m.s.Thinned() != tc.warmup+tc.sessionsTotal-want {
				t.Fatalf("%d sent, %d thinned; want %d sent of %d", len(m.recs), m.s.Thinned(), want, tc.warmup+tc.sessionsTotal)
			}
		})
	}
}

// Without a user grid (a plan not user-centric) the users gate holds nothing back.
func TestGateUsersNoGrid(t *testing.T) {
	gate := NewGate(Part{}, 1)
	if err := gate.Set(GateUsers, 1); err != nil {
		t.Fatal(err)
	}
	for i := int32(0); i < 100; i++ {
		if !gate.Sends(&Node{Index: i, At: int64(i) * 1e8}) {
			t.Fatalf("node %d held back without a user grid", i)
		}
	}
}

// Sends, on the transport's thread for every open-loop arrival, allocates nothing.
func TestGateSendsAllocatesNothing(t *testing.T) {
	gate := NewGate(Part{}, 1)
	gate.SetUserGrid(16, 40, 1e9)
	gate.Set(GateUsers, 5)
	gate.Set(GateKeep, 0.5)
	n := Node{Index: 3, At: 2e9}
	if a := testing.AllocsPerRun(1000, func() { n.At += 25e6; n.Index++; gate.Sends(&n) }); a != 0 {
		t.Fatalf("Sends allocates %v per call", a)
	}
}

func BenchmarkGateSends(b *testing.B) {
	gate := NewGate(Part{}, 1)
	gate.SetUserGrid(16, 40, 1e9)
	gate.Set(GateUsers, 5)
	n := Node{At: 1e9}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		n.At += 25e6
		n.Index = int32(i)
		gate.Sends(&n)
	}
}

// BenchmarkSchedulerUsersGate is the scheduler's cost per open-loop arrival on a user grid
// (16 users at 1000/s), without a gate and with the users gate at 5 of them (11 of 16
// arrivals thinned out): the gate adds no allocation.
func BenchmarkSchedulerUsersGate(b *testing.B) {
	for _, tc := range []struct {
		name  string
		users int
	}{{"plain", 0}, {"users 5 of 16", 5}} {
		b.Run(tc.name, func(b *testing.B) {
			var gate *Gate
			if tc.users > 0 {
				gate = NewGate(Part{}, 1)
				gate.SetUserGrid(16, 1000, 0)
				if err := gate.Set(GateUsers, float64(tc.users)); err != nil {
					b.Fatal(err)
				}
			}
			g := singles(b, b.N, func(i int) int64 { return int64(i) * 1e6 }, nil)
			s, err := New(g, Config{Gate: gate})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for now := int64(0); !s.Finished(); now += 1e6 {
				for {
					r, ok := s.Due(now)
					if !ok {
						break
					}
					s.Ended(r.Node, now, true)
				}
			}
		})
	}
}
