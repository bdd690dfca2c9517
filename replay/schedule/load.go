package schedule

import "github.com/llmbench/llmbench/mmapds"

// LoadChains returns worker's part (of workers) of plan p, whose sessions are chains of
// turns: each later turn (Turn > 0, DelayNs >= 0) has the session's previous record on the
// worker as its one parent, DelayNs as its think time and its SendOffsetNs, if any, as its
// fixed instant; any other record starts a unit of its own. ord holds each record's session
// ordinal within the shard, or NotInShard. A turn that failed does not hold back the next
// one (AIPerf's sessions go on after a failed turn): no node is Strict. p has passed
// mmapds.Plan.Validate.
func LoadChains(p *mmapds.Plan, ord []uint32, workers, worker int) (*Graph, error) {
	g := &Graph{}
	last := map[uint32]int32{} // session ordinal -> its latest node on this worker
	for i := range ord {
		if ord[i] == NotInShard || WorkerOf(ord[i], workers) != worker {
			continue
		}
		r, _, err := p.Record(i)
		if err != nil {
			return nil, err
		}
		n := Node{Index: int32(i), At: max(r.SendOffsetNs, NoInstant)}
		prev, hasPrev := last[ord[i]]
		var id int32
		if hasPrev && r.Turn > 0 && r.DelayNs >= 0 {
			n.Think = r.DelayNs
			id, err = g.AddNode(g.nodes[prev].unit, n, prev)
		} else {
			u := g.AddUnit(Unit{Session: ord[i], Warmup: r.Phase == mmapds.PhaseWarmup})
			id, err = g.AddNode(u, n)
		}
		if err != nil {
			return nil, err
		}
		last[ord[i]] = id
	}
	return g, nil
}
