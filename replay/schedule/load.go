package schedule

import (
	"fmt"

	"github.com/llmbench/llmbench/mmapds"
)

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

// LoadGraph returns worker's part of plan p, which has a graph section (mmapds.Plan.HasGraph):
// each record a node whose parents are the records its graph entry names (previous turn,
// spawn point, joined subagents), its DelayNs the think time after the last of them (for a
// root that is not its session's first record: after that first record's release) and its
// SendOffsetNs, if any, its fixed instant; Strict as its entry's mmapds.NodeStrict flag. A
// session's records are consecutive and form one unit. ord and the rest as in LoadChains; p
// has passed mmapds.Plan.Validate, which checked the graph.
func LoadGraph(p *mmapds.Plan, ord []uint32, workers, worker int) (*Graph, error) {
	if !p.HasGraph() {
		return nil, fmt.Errorf("schedule: plan has no graph section")
	}
	g := &Graph{}
	unit, firstRec, firstNode := int32(-1), 0, int32(0)
	var parents []int32
	var edges []mmapds.Edge
	for i := range ord {
		if ord[i] == NotInShard || WorkerOf(ord[i], workers) != worker {
			continue
		}
		r, _, err := p.Record(i)
		if err != nil {
			return nil, err
		}
		gn := p.GraphNode(i)
		if unit < 0 || g.units[unit].Session != ord[i] {
			unit = g.AddUnit(Unit{Session: ord[i], Warmup: r.Phase == mmapds.PhaseWarmup})
			firstRec, firstNode = i, int32(len(g.nodes))
		}
		var ps []mmapds.Edge
		ps, _ = p.Edges(edges[:0], gn)
		parents = parents[:0]
		for _, e := range ps {
			if int(e.Record) < firstRec {
				return nil, fmt.Errorf("schedule: record %d depends on record %d, before its session's first record %d", i, e.Record, firstRec)
			}
			parents = append(parents, firstNode+int32(int(e.Record)-firstRec))
		}
		n := Node{Index: int32(i), At: max(r.SendOffsetNs, NoInstant), Strict: gn.Flags&mmapds.NodeStrict != 0}
		if int32(len(g.nodes)) != firstNode {
			n.Think = max(r.DelayNs, 0)
		}
		if _, err := g.AddNode(unit, n, parents...); err != nil {
			return nil, err
		}
	}
	return g, nil
}
