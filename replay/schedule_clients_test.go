package replay

import (
	"fmt"
	"runtime"
	"sort"
	"testing"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
)

// Both clients keep the same scheduling rules (package schedule): the same plans replayed
// through the event loop and the net client, and what each had in flight when, read from
// the raw log, held to the rules and compared. Every bound here is causal (a slot is taken
// after it opened or freed, a turn is ready when its parent's end and think time say), never
// a duration a loaded machine could stretch.
func TestClientsKeepTheSchedule(t *testing.T) {
	clients := []string{ClientNet}
	if runtime.GOOS == "linux" {
		clients = append(clients, ClientLoop)
	}
	srv := newTestServer(t)
	req := jobBody(job{N: 1, TTFTms: 40, Stream: true})
	closedLoop := func(n, c int, rampNs int64) *planSpec {
		ps := &planSpec{}
		for i := 0; i < n; i++ {
			ps.add(mmapds.Record{SendOffsetNs: mmapds.NoSendOffset, DelayNs: -1, Session: uint32(i), Phase: mmapds.PhaseProfile}, req)
		}
		ps.meta.Concurrency, ps.meta.ConcurrencyRampNs = c, rampNs
		return ps
	}
	type tcase struct {
		name         string
		plan         *planSpec
		shard, count int
		// slots are the part's slot opening instants: the in-flight bound over time.
		slots []int64
		// units counts sessions (a slot is held from a session's first send to its last
		// end), not requests.
		units bool
		check func(t *testing.T, reqs map[uint32]rawlog.Request)
	}
	thinkPlan := func() *planSpec {
		ps := &planSpec{}
		for s := 0; s < 5; s++ {
			for turn := 0; turn < 3; turn++ {
				delay := int64(-1)
				if turn > 0 {
					delay = int64(turn) * 30e6
				}
				ps.add(mmapds.Record{SendOffsetNs: mmapds.NoSendOffset, DelayNs: delay, Session: uint32(s), Turn: uint32(turn), Phase: mmapds.PhaseProfile},
					jobBody(job{N: 1, TTFTms: 10, Stream: true}))
			}
		}
		ps.meta.Concurrency = 2
		return ps
	}
	ceiling := singleTurn(12, job{N: 1, TTFTms: 50, Stream: true}, func(i int) int64 { return int64(i) * 5e6 })
	ceiling.meta.Concurrency = 2
	for _, tc := range []tcase{
		{name: "cap", plan: closedLoop(24, 3, 0), slots: []int64{0, 0, 0}},
		{name: "ramp", plan: closedLoop(24, 4, 300e6), slots: []int64{0, 100e6, 200e6, 300e6}},
		// The shard-with-ramp case: shard 0 of 2 at concurrency 4 owns global slots 0 and 2.
		{name: "shard 0 of 2 with ramp", plan: closedLoop(24, 4, 300e6), shard: 0, count: 2, slots: []int64{0, 200e6}},
		{name: "shard 1 of 2 with ramp", plan: closedLoop(24, 4, 300e6), shard: 1, count: 2, slots: []int64{100e6, 300e6}},
		{name: "rate under a ceiling", plan: ceiling, slots: []int64{0, 0}, check: func(t *testing.T, reqs map[uint32]rawlog.Request) {
			waited, prevReady := 0, int64(-1)
			for i := uint32(0); i < 12; i++ {
				q := reqs[i]
				switch {
				case q.Outcome != rawlog.OutcomeCompleted:
					t.Fatalf("request %d: %s", i, brief(q))
				case q.ReadyNs < q.IntendedNs || q.WriteStartNs < q.ReadyNs:
					t.Fatalf("request %d before its instant: %s", i, brief(q))
				case q.ReadyNs < prevReady:
					t.Fatalf("request %d ready at %d, before request %d at %d: not first come first served", i, q.ReadyNs, i-1, prevReady)
				}
				if q.ReadyNs > q.IntendedNs {
					waited++
				}
				prevReady = q.ReadyNs
			}
			// 12 requests 5 ms apart, each held 50 ms by the server, over 2 slots.
			if waited < 8 {
				t.Fatalf("%d requests waited for a slot, want at least 8", waited)
			}
		}},
		{name: "think time", plan: thinkPlan(), slots: []int64{0, 0}, units: true, check: func(t *testing.T, reqs map[uint32]rawlog.Request) {
			for i := uint32(0); i < 15; i++ {
				q := reqs[i]
				if q.Outcome != rawlog.OutcomeCompleted {
					t.Fatalf("request %d: %s", i, brief(q))
				}
				if turn := i % 3; turn > 0 {
					prev := reqs[i-1]
					if q.ReadyNs != prev.EndNs+int64(turn)*30e6 || q.WriteStartNs < q.ReadyNs {
						t.Fatalf("turn %d of session %d ready at %d, written at %d; previous turn ended at %d, think time %d ms",
							turn, i/3, q.ReadyNs, q.WriteStartNs, prev.EndNs, turn*30)
					}
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := tc.plan.write(t, t.TempDir())
			shape := map[string]string{}
			for _, client := range clients {
				res, reqs, _ := runInProcess(t, workerConfig{Plan: plan, URLs: []string{srv.URL}, Client: client,
					ShardIndex: tc.shard, ShardCount: tc.count}, nil)
				if res.Counts.Completed != res.Counts.Planned || res.Counts.Planned == 0 {
					t.Fatalf("%s: counts %+v", client, res.Counts)
				}
				spans := requestSpans(reqs)
				if tc.units {
					spans = sessionSpans(t, plan, reqs)
				}
				shape[client] = checkInFlight(t, client, spans, tc.slots)
				if tc.check != nil {
					tc.check(t, reqs)
				}
			}
			if len(clients) == 2 && shape[ClientLoop] != shape[ClientNet] {
				t.Fatalf("most in flight between slot openings: loop %s, net %s", shape[ClientLoop], shape[ClientNet])
			}
		})
	}
}

// span is how long something held a slot, as the log shows it: from the first write of its
// request(s) to the end of the last.
type span struct{ from, to int64 }

func requestSpans(reqs map[uint32]rawlog.Request) []span {
	var s []span
	for _, q := range reqs {
		if q.WriteStartNs >= 0 {
			s = append(s, span{q.WriteStartNs, q.EndNs})
		}
	}
	return s
}

// sessionSpans is one span per session of the plan at path: its first write to its last end.
func sessionSpans(t *testing.T, path string, reqs map[uint32]rawlog.Request) []span {
	p, err := mmapds.Open(path, mmapds.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	by := map[uint32]*span{}
	for i, q := range reqs {
		r, _, _ := p.Record(int(i))
		sp := by[r.Session]
		if sp == nil {
			sp = &span{q.WriteStartNs, q.EndNs}
			by[r.Session] = sp
		}
		sp.from, sp.to = min(sp.from, q.WriteStartNs), max(sp.to, q.EndNs)
	}
	var s []span
	for _, sp := range by {
		s = append(s, *sp)
	}
	return s
}

// checkInFlight fails when, at the start of some span, more spans were running than slots
// had opened by then (slots: their opening instants). It returns, as text, the most spans in
// flight between consecutive slot openings: the shape both clients must share.
func checkInFlight(t *testing.T, client string, spans []span, slots []int64) string {
	t.Helper()
	sort.Slice(spans, func(a, b int) bool { return spans[a].from < spans[b].from })
	opened := func(at int64) int {
		n := 0
		for _, s := range slots {
			if s <= at {
				n++
			}
		}
		return n
	}
	marks := append([]int64(nil), slots...)
	sort.Slice(marks, func(a, b int) bool { return marks[a] < marks[b] })
	most := make([]int, len(marks)+1) // before the first opening, then after each
	for _, s := range spans {
		in := 0
		for _, o := range spans {
			if o.from <= s.from && o.to > s.from {
				in++
			}
		}
		if in > opened(s.from) {
			t.Fatalf("%s: %d in flight at %.1f ms, with %d of the part's slots %v open", client, in, float64(s.from)/1e6, opened(s.from), slots)
		}
		k := sort.Search(len(marks), func(i int) bool { return marks[i] > s.from })
		most[k] = max(most[k], in)
	}
	if got := maxOf(most); got != len(slots) {
		t.Fatalf("%s: at most %d in flight, want the part's %d slots (%v)", client, got, len(slots), most)
	}
	return fmt.Sprint(most)
}

func maxOf(v []int) int {
	m := 0
	for _, x := range v {
		m = max(m, x)
	}
	return m
}
