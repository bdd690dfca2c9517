package replay

import (
	"runtime"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay/driver"
)

// A plan with a graph section (agentic workloads) runs as its graph says, on both clients:
// a subagent starts after its spawn point ended, the parent's next request after the
// subagent's last one (a join, its think time after the later), a root other than the
// session's first starts its think time after it, a FORK child's body carries the replies
// of its sources (the parent's actual reply included) in body order, and a Strict node
// whose parent failed is not sent, with what depends on it, each naming the failed request.
func TestClientsRunPlanGraphs(t *testing.T) {
	clients := []string{ClientNet}
	if runtime.GOOS == "linux" {
		clients = append(clients, ClientLoop)
	}
	srv := newTestServer(t)
	srv.keep = true
	ps := &planSpec{}
	ps.meta.Concurrency = 1
	ps.meta.Streaming = true
	ps.meta.LiveHistoryMarker = "@@M@@"
	add := func(session uint32, delay int64, flags uint8, j job, n mmapds.Node) {
		j.Stream = true
		ps.add(mmapds.Record{SendOffsetNs: mmapds.NoSendOffset, DelayNs: delay, Session: session, Flags: flags, Phase: mmapds.PhaseProfile}, jobBody(j))
		n.Flags |= mmapds.NodeStrict
		ps.nodes = append(ps.nodes, n)
	}
	e := func(rec uint32, k mmapds.EdgeKind) mmapds.Edge { return mmapds.Edge{Record: rec, Kind: k} }
	// Session 0: 0 -> 1 (subagent, spawned after 0) -> 2 (its second turn); 3 (the parent's
	// next turn) joins 0 and 2 with 20 ms think; 4 is a root 5 ms after 0; 5 forks after 3
	// and carries the replies of 0 and 3.
	add(0, -1, 0, job{N: 2, TTFTms: 10, Text: "zero "}, mmapds.Node{Agent: 0})
	add(0, 0, 0, job{N: 1, TTFTms: 30, Text: "one "}, mmapds.Node{Agent: 1, Parents: []mmapds.Edge{e(0, mmapds.EdgeSpawn)}})
	add(0, 0, 0, job{N: 1, TTFTms: 30, Text: "two "}, mmapds.Node{Agent: 1, Parents: []mmapds.Edge{e(1, mmapds.EdgeTurn)}})
	add(0, 20e6, 0, job{N: 3, TTFTms: 5, Text: "three "}, mmapds.Node{Agent: 0, Parents: []mmapds.Edge{e(0, mmapds.EdgeTurn), e(2, mmapds.EdgeJoin)}})
	add(0, 5e6, 0, job{N: 1, TTFTms: 5, Text: "four "}, mmapds.Node{Agent: 2})
	add(0, 0, mmapds.FlagLiveHistory, job{N: 1, TTFTms: 5, Text: "five ", Seen: "[@@M@@|@@M@@]"},
		mmapds.Node{Agent: 3, Parents: []mmapds.Edge{e(3, mmapds.EdgeFork)}, Sources: []mmapds.Edge{e(0, mmapds.EdgeReply), e(3, mmapds.EdgeReply)}})
	// Session 1: 6 fails; 7 (Strict) and 8 below it are not sent.
	add(1, -1, 0, job{Status: 500}, mmapds.Node{Agent: 4})
	add(1, 0, 0, job{N: 1}, mmapds.Node{Agent: 4, Parents: []mmapds.Edge{e(6, mmapds.EdgeTurn)}})
	add(1, 0, 0, job{N: 1}, mmapds.Node{Agent: 5, Parents: []mmapds.Edge{e(7, mmapds.EdgeSpawn)}})
	ps.meta.Agents = []mmapds.Agent{{Session: 0, Parent: -1}, {Session: 0, Parent: 0, Depth: 1}, {Session: 0, Parent: 0, Depth: 1},
		{Session: 0, Parent: 0, Depth: 1}, {Session: 1, Parent: -1}, {Session: 1, Parent: 4, Depth: 1}}
	plan := ps.write(t, t.TempDir())
	for _, client := range clients {
		t.Run(client, func(t *testing.T) {
			srv.mu.Lock()
			srv.bodies = nil
			srv.mu.Unlock()
			res, reqs, _ := runInProcess(t, workerConfig{Plan: plan, URLs: []string{srv.URL}, Client: client}, nil)
			if c := res.Counts; c.Completed != 6 || c.Failed != 1 || c.NotSent != 2 {
				t.Fatalf("counts %+v", c)
			}
			q := func(i uint32) rawlog.Request { return reqs[i] }
			switch {
			case q(1).ReadyNs != q(0).EndNs || q(1).WriteStartNs < q(0).EndNs:
				t.Fatalf("the subagent started before its spawn point ended: %s / %s", brief(q(1)), brief(q(0)))
			case q(2).ReadyNs != q(1).EndNs:
				t.Fatalf("the subagent's second turn: %s", brief(q(2)))
			case q(3).ReadyNs != max(q(0).EndNs, q(2).EndNs)+20e6 || q(3).WriteStartNs < q(2).EndNs:
				t.Fatalf("the join ready at %d, written at %d; parents ended at %d and %d", q(3).ReadyNs, q(3).WriteStartNs, q(0).EndNs, q(2).EndNs)
			case q(4).ReadyNs != q(0).ReadyNs+5e6:
				t.Fatalf("the second root ready at %d, the first at %d", q(4).ReadyNs, q(0).ReadyNs)
			case q(5).ReadyNs != q(3).EndNs:
				t.Fatalf("the fork: %s", brief(q(5)))
			}
			for _, i := range []uint32{7, 8} {
				if r := q(i); r.Outcome != rawlog.OutcomeNotSent || r.Err != "not sent: request 6, which it depends on, did not complete" {
					t.Fatalf("request %d: %s", i, brief(r))
				}
			}
			// The fork's body as the server got it: the replies of 0 and 3, in that order.
			var fork string
			srv.mu.Lock()
			for _, b := range srv.bodies {
				if strings.Contains(b, `"text":"five "`) {
					fork = b
				}
			}
			srv.mu.Unlock()
			if want := `"seen":"[zero zero |three three three ]"`; !strings.Contains(fork, want) {
				t.Fatalf("the fork's body %s, want %s", fork, want)
			}
		})
	}
}

// Splicing a graph plan's live bodies from their reply sources allocates nothing once a
// unit's history buffers have grown (the session's replies are kept in the buffers an
// earlier unit left).
func TestSpliceSourcesAllocatesNothing(t *testing.T) {
	ps := &planSpec{}
	ps.meta.LiveHistoryMarker, ps.meta.Streaming = "@@M@@", false
	ps.add(mmapds.Record{DelayNs: -1, Phase: mmapds.PhaseProfile}, []byte(`{"a":1}`))
	ps.add(mmapds.Record{DelayNs: 0, Phase: mmapds.PhaseProfile}, []byte(`{"b":1}`))
	ps.add(mmapds.Record{DelayNs: 0, Phase: mmapds.PhaseProfile, Flags: mmapds.FlagLiveHistory}, []byte(`{"m":"@@M@@ then @@M@@"}`))
	ps.nodes = []mmapds.Node{{}, {Parents: []mmapds.Edge{{Record: 0, Kind: mmapds.EdgeTurn}}},
		{Parents: []mmapds.Edge{{Record: 1, Kind: mmapds.EdgeFork}}, Sources: []mmapds.Edge{{Record: 0, Kind: mmapds.EdgeReply}, {Record: 1, Kind: mmapds.EdgeReply}}}}
	ps.meta.Agents = []mmapds.Agent{{Parent: -1}}
	p, err := mmapds.Open(ps.write(t, t.TempDir()), mmapds.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var l driver.Live
	if err := l.Init(p.Meta()); err != nil {
		t.Fatal(err)
	}
	l.FollowGraph(p)
	_, body, _ := p.Record(2)
	r0 := []byte(`{"choices":[{"message":{"role":"assistant","content":"first \"reply\""}}]}`)
	r1 := []byte(`{"choices":[{"message":{"role":"assistant","content":"second"}}]}`)
	var h driver.History
	var out []byte
	run := func() {
		h.Reset(0)
		h.Add(&l, 0, r0)
		h.Add(&l, 1, r1)
		out = h.Splice(&l, out[:0], body, 2)
	}
	run()
	if want := `{"m":"first \"reply\" then second"}`; string(out) != want {
		t.Fatalf("spliced %s, want %s", out, want)
	}
	if n := testing.AllocsPerRun(50, run); n != 0 {
		t.Fatalf("%v allocations per spliced body", n)
	}
}
