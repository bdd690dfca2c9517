package replay

import (
	"fmt"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay/schedule"
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
			// The clients' shapes are compared over up to three rounds: a loaded machine can
			// stall the whole test process (its server included) across a slot opening, which
			// moves one client's send past it; a client that opens slots differently differs
			// in every round.
			var shape, firsts map[string]string
			for round := 1; ; round++ {
				shape, firsts = map[string]string{}, map[string]string{}
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
					firsts[client] = firstRequests(reqs, len(tc.slots)+2)
					if tc.check != nil {
						tc.check(t, reqs)
					}
				}
				if len(clients) < 2 || shape[ClientLoop] == shape[ClientNet] || round == 3 {
					break
				}
				t.Logf("round %d: most in flight between slot openings: loop %s, net %s; again", round, shape[ClientLoop], shape[ClientNet])
			}
			if len(clients) == 2 && shape[ClientLoop] != shape[ClientNet] {
				t.Fatalf("most in flight between slot openings, in each of three rounds: loop %s, net %s\nloop's first requests:\n%snet's:\n%s",
					shape[ClientLoop], shape[ClientNet], firsts[ClientLoop], firsts[ClientNet])
			}
		})
	}
}

// firstRequests describes the n requests written first, for a failure's message.
func firstRequests(reqs map[uint32]rawlog.Request, n int) string {
	var qs []rawlog.Request
	for _, q := range reqs {
		qs = append(qs, q)
	}
	sort.Slice(qs, func(a, b int) bool { return qs[a].WriteStartNs < qs[b].WriteStartNs })
	var b strings.Builder
	for _, q := range qs[:min(n, len(qs))] {
		fmt.Fprintf(&b, "  #%d intended %.2f ms ready %.2f ms first write %.2f ms write %.2f ms end %.2f ms reused %v reconnects %d\n",
			q.Index, float64(q.IntendedNs)/1e6, float64(q.ReadyNs)/1e6, float64(q.FirstWriteStartNs)/1e6, float64(q.WriteStartNs)/1e6,
			float64(q.EndNs)/1e6, q.ConnReused, q.Reconnects)
	}
	return b.String()
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

// Both clients run a general graph (the agentic workloads' shape): branches of one unit in
// flight at once, a join released when both branches ended plus its think time, and a
// Strict node whose parent failed skipped with what depends on it, each logged not sent
// with the request it depended on, under every reuse strategy.
func TestClientsRunGraphs(t *testing.T) {
	clients := []string{ClientNet}
	if runtime.GOOS == "linux" {
		clients = append(clients, ClientLoop)
	}
	srv := newTestServer(t)
	ps := &planSpec{}
	ok, fail := jobBody(job{N: 2, TTFTms: 30, Stream: true}), jobBody(job{Status: 500})
	for i, body := range [][]byte{ok, ok, ok, ok, fail, ok, ok} {
		s := uint32(1)
		if i >= 4 {
			s = 2
		}
		ps.add(mmapds.Record{SendOffsetNs: mmapds.NoSendOffset, DelayNs: -1, Session: s, Phase: mmapds.PhaseProfile}, body)
	}
	ps.meta.Concurrency = 2
	plan := ps.write(t, t.TempDir())
	// Unit 0: 0 -> {1, 2} -> 3 (join, 5 ms think time). Unit 1: 4 (fails) -> 5 (Strict) -> 6.
	load := func(p *mmapds.Plan, ord []uint32, workers, worker int) (*schedule.Graph, error) {
		g := &schedule.Graph{}
		a, b := g.AddUnit(schedule.Unit{Session: 0}), g.AddUnit(schedule.Unit{Session: 1})
		node := func(idx int32, think int64, strict bool) schedule.Node {
			return schedule.Node{Index: idx, At: schedule.NoInstant, Think: think, Strict: strict}
		}
		for _, e := range []struct {
			unit    int32
			n       schedule.Node
			parents []int32
		}{
			{a, node(0, 0, false), nil}, {a, node(1, 0, false), []int32{0}}, {a, node(2, 0, false), []int32{0}},
			{a, node(3, 5e6, false), []int32{1, 2}},
			{b, node(4, 0, false), nil}, {b, node(5, 0, true), []int32{4}}, {b, node(6, 0, false), []int32{5}},
		} {
			if _, err := g.AddNode(e.unit, e.n, e.parents...); err != nil {
				return nil, err
			}
		}
		return g, nil
	}
	for _, client := range clients {
		for _, reuse := range []string{ReusePooled, ReuseSticky, ReuseNever} {
			t.Run(client+"/"+reuse, func(t *testing.T) {
				res, reqs, _ := runInProcess(t, workerConfig{Plan: plan, URLs: []string{srv.URL}, Client: client, ConnReuse: reuse, load: load}, nil)
				if c := res.Counts; c.Completed != 4 || c.Failed != 1 || c.NotSent != 2 {
					t.Fatalf("counts %+v", c)
				}
				q0, q1, q2, q3 := reqs[0], reqs[1], reqs[2], reqs[3]
				if q1.ReadyNs != q0.EndNs || q2.ReadyNs != q0.EndNs || q2.ReadyNs >= q1.EndNs || q1.ReadyNs >= q2.EndNs {
					t.Fatalf("branches ready at %d and %d, their parent ended at %d, they ended at %d and %d", q1.ReadyNs, q2.ReadyNs, q0.EndNs, q1.EndNs, q2.EndNs)
				}
				if want := max(q1.EndNs, q2.EndNs) + 5e6; q3.ReadyNs != want || q3.WriteStartNs < want {
					t.Fatalf("join ready at %d, written at %d; want %d", q3.ReadyNs, q3.WriteStartNs, want)
				}
				for _, i := range []uint32{5, 6} {
					if q := reqs[i]; q.Outcome != rawlog.OutcomeNotSent || q.Err != "not sent: request 4, which it depends on, did not complete" {
						t.Fatalf("request %d after the failed one: %s", i, brief(q))
					}
				}
			})
		}
	}
}
