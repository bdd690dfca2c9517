package mmapds

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The graph section (format version 3, docs/plan-format.md "Graph"). A plan compiled from an
// agentic workload (weka_trace, dag_jsonl) says, per record, which agent of its session sends
// it, which earlier records it waits for (its parents: the previous turn of its agent, the
// request a subagent was spawned after, the last requests of the subagents it joins) and,
// for a live-history body, whose replies fill its markers. Replay builds its schedule graph
// from it; analyze its session metrics. A plan without a graph has no such section.

// GraphVersion is the format version of plans with a graph section.
const GraphVersion = 3

// NodeSize and EdgeSize are the sizes of a graph node entry (one per record) and of an edge.
const (
	NodeSize = 20
	EdgeSize = 8
)

// EdgeKind says why a record depends on another.
type EdgeKind uint8

// Edge kinds. A record's parents come first in its edge list, its reply sources after.
const (
	// EdgeTurn: the previous request of the same agent.
	EdgeTurn EdgeKind = 1
	// EdgeSpawn: the request a subagent (or SPAWN child) starts after, with a context of
	// its own.
	EdgeSpawn EdgeKind = 2
	// EdgeFork: the request a FORK child starts after, whose whole conversation (its reply
	// included) it inherits.
	EdgeFork EdgeKind = 3
	// EdgeJoin: the last request of a subagent that this request of its parent waits for.
	EdgeJoin EdgeKind = 4
	// EdgeReply: not a parent: the record whose live reply fills the next marker of the body.
	EdgeReply EdgeKind = 5
)

// String returns the kind's name as docs/plan-format.md and plan inspect write it.
func (k EdgeKind) String() string {
	switch k {
	case EdgeTurn:
		return "turn"
	case EdgeSpawn:
		return "spawn"
	case EdgeFork:
		return "fork"
	case EdgeJoin:
		return "join"
	case EdgeReply:
		return "reply"
	}
	return fmt.Sprintf("kind%d", uint8(k))
}

// Node flags.
const (
	// NodeStrict: the request is not sent when one of its parents failed (nor is anything
	// that depends on it); it is logged not sent, naming the failed request.
	NodeStrict uint8 = 1 << 0
)

// Edge is one dependency of a record on another, earlier record of its session.
type Edge struct {
	Record uint32
	Kind   EdgeKind
}

// Node is a record's place in the graph, as the writer takes it.
type Node struct {
	// Agent is the plan-wide agent number, an index into Meta.Agents.
	Agent uint32
	// Flags holds Node* bits.
	Flags uint8
	// Parents are the records it waits for (kinds EdgeTurn to EdgeJoin); none for a
	// session's roots.
	Parents []Edge
	// Sources are, in body order, the records whose replies fill its live-history markers
	// (kind EdgeReply).
	Sources []Edge
	// Reuse is the prompt tokens an infinite prefix cache holds when the request is sent,
	// computed from the rendered prompts' tokens (Meta.PrefixReuseBlockTokens; older plans
	// counted hash-id blocks): the reuse the workload offers, which analyze sets beside the
	// server's hit counters.
	Reuse uint32
}

// Agent describes one conversation of a session: its root agent (the session's own
// conversation) or a subagent / child conversation spawned inside it.
type Agent struct {
	// Session is the session (Record.Session) the agent belongs to.
	Session uint32 `msgpack:"session" json:"session"`
	// Parent is the plan-wide number of the agent that spawned it, -1 for a session's root.
	Parent int64 `msgpack:"parent" json:"parent"`
	// Depth is 0 for a session's root agent, 1 for its subagents, 2 for theirs...
	Depth int `msgpack:"depth" json:"depth"`
	// Kind is "root", "subagent" (weka_trace), "fork" or "spawn" (dag_jsonl).
	Kind string `msgpack:"kind" json:"kind"`
	// Name is the input's name for it: the trace id, the subagent's agent_id, the
	// dag_jsonl session id.
	Name string `msgpack:"name" json:"name"`
	// Type is the subagent's subagent_type (weka_trace), when the input gives one.
	Type string `msgpack:"type,omitempty" json:"type,omitempty"`
	// Background says that its parent does not wait for it (status async_launched, a
	// background fork, a spawn without a join, a pre-session spawn).
	Background bool `msgpack:"background,omitempty" json:"background,omitempty"`
}

// putNode encodes node entry fields into b (NodeSize bytes).
func putNode(b []byte, agent, edgeFirst uint32, parents, sources uint16, flags uint8, reuse uint32) {
	le := binary.LittleEndian
	le.PutUint32(b[0:], agent)
	le.PutUint32(b[4:], edgeFirst)
	le.PutUint16(b[8:], parents)
	le.PutUint16(b[10:], sources)
	b[12] = flags
	b[13], b[14], b[15] = 0, 0, 0
	le.PutUint32(b[16:], reuse)
}

// GraphNode is a record's graph entry as read from the file: its agent, flags, expected
// prefix reuse and where its edges lie (Plan.Edge).
type GraphNode struct {
	Agent     uint32
	EdgeFirst uint32
	Parents   uint16
	Sources   uint16
	Flags     uint8
	Reuse     uint32
}

// HasGraph says whether the plan has a graph section.
func (p *Plan) HasGraph() bool { return p.graph != nil }

// GraphNode returns record i's graph entry. The plan must have a graph (HasGraph) and i be
// in range; Validate has checked that its edges lie in the edge table.
func (p *Plan) GraphNode(i int) GraphNode {
	b := p.graph[i*NodeSize : (i+1)*NodeSize]
	le := binary.LittleEndian
	return GraphNode{Agent: le.Uint32(b[0:]), EdgeFirst: le.Uint32(b[4:]), Parents: le.Uint16(b[8:]),
		Sources: le.Uint16(b[10:]), Flags: b[12], Reuse: le.Uint32(b[16:])}
}

// Edge returns edge j of the edge table (GraphNode.EdgeFirst onwards: the parents, then the
// sources). It allocates nothing.
func (p *Plan) Edge(j uint32) Edge {
	b := p.edges[int(j)*EdgeSize:]
	return Edge{Record: binary.LittleEndian.Uint32(b), Kind: EdgeKind(b[4])}
}

// Edges returns node n's parents and sources (appended to dst).
func (p *Plan) Edges(dst []Edge, n GraphNode) (parents, sources []Edge) {
	end := n.EdgeFirst + uint32(n.Parents)
	for j := n.EdgeFirst; j < end+uint32(n.Sources); j++ {
		dst = append(dst, p.Edge(j))
	}
	return dst[:n.Parents], dst[n.Parents:]
}

// validateGraph checks the graph section against the records: every record's edges follow
// the previous record's in the edge table, point at earlier records of the same session
// (parents with a parent kind, sources with EdgeReply), its agent is in Meta.Agents and of
// its session; sessions' records are consecutive (a session's records do not resume after
// another session's).
func (p *Plan) validateGraph() error {
	if p.graph == nil {
		return nil
	}
	bad := func(i int, format string, args ...any) error {
		return fmt.Errorf("mmapds: %s: %w: record %d %s", p.path, ErrFormat, i, fmt.Sprintf(format, args...))
	}
	var next uint32
	var maxSession uint32
	nEdges := uint64(len(p.edges) / EdgeSize)
	for i := 0; i < p.Len(); i++ {
		r := getRecord(p.records[i*RecordSize : (i+1)*RecordSize])
		if i > 0 {
			prev := getRecord(p.records[(i-1)*RecordSize : i*RecordSize])
			if r.Session != prev.Session && r.Session <= maxSession {
				return bad(i, "resumes session %d after session %d: a graph plan's sessions are consecutive", r.Session, prev.Session)
			}
		}
		maxSession = max(maxSession, r.Session)
		n := p.GraphNode(i)
		if n.EdgeFirst != next {
			return bad(i, "has its edges at %d, want %d (right after the previous record's)", n.EdgeFirst, next)
		}
		end := uint64(n.EdgeFirst) + uint64(n.Parents) + uint64(n.Sources)
		if end > nEdges {
			return bad(i, "has edges [%d,%d) past the %d of the edge table", n.EdgeFirst, end, nEdges)
		}
		next = uint32(end)
		if int64(n.Agent) >= int64(len(p.meta.Agents)) {
			return bad(i, "has agent %d, plan has %d", n.Agent, len(p.meta.Agents))
		}
		if a := p.meta.Agents[n.Agent]; a.Session != r.Session {
			return bad(i, "of session %d has agent %d of session %d", r.Session, n.Agent, a.Session)
		}
		if n.Flags&^NodeStrict != 0 {
			return bad(i, "has unknown node flags %#x", n.Flags)
		}
		if b := p.graph[i*NodeSize+13 : i*NodeSize+16]; b[0]|b[1]|b[2] != 0 {
			return bad(i, "has reserved node bytes set")
		}
		if n.Reuse > r.ISL {
			return bad(i, "expects %d reused prompt tokens of %d", n.Reuse, r.ISL)
		}
		for j := n.EdgeFirst; j < next; j++ {
			e := p.Edge(j)
			parent := j < n.EdgeFirst+uint32(n.Parents)
			switch {
			case parent && (e.Kind < EdgeTurn || e.Kind > EdgeJoin):
				return bad(i, "has a parent edge of kind %d", e.Kind)
			case !parent && e.Kind != EdgeReply:
				return bad(i, "has a reply source edge of kind %d", e.Kind)
			case e.Record >= uint32(i):
				return bad(i, "depends on record %d, which is not earlier", e.Record)
			}
			if o := getRecord(p.records[int(e.Record)*RecordSize:]); o.Session != r.Session {
				return bad(i, "of session %d depends on record %d of session %d", r.Session, e.Record, o.Session)
			}
		}
	}
	if uint64(next) != nEdges {
		return fmt.Errorf("mmapds: %s: %w: the edge table holds %d edges, the records use %d", p.path, ErrFormat, nEdges, next)
	}
	for k, a := range p.meta.Agents {
		if a.Parent >= int64(k) || a.Parent < -1 {
			return fmt.Errorf("mmapds: %s: %w: agent %d has parent %d", p.path, ErrFormat, k, a.Parent)
		}
	}
	return nil
}

// splitGraph locates the node and edge tables in the graph section of a file of count
// records.
func splitGraph(section []byte, count uint64) (nodes, edges []byte, err error) {
	if uint64(len(section))/NodeSize < count {
		return nil, nil, fmt.Errorf("graph section of %d bytes cannot hold %d node entries", len(section), count)
	}
	nodes, edges = section[:count*NodeSize], section[count*NodeSize:]
	if len(edges)%EdgeSize != 0 {
		return nil, nil, fmt.Errorf("edge table of %d bytes is not a whole number of %d-byte edges", len(edges), EdgeSize)
	}
	return nodes, edges, nil
}

// graphWriter collects the graph section while records are added.
type graphWriter struct {
	on    bool
	nodes []byte
	edges []byte
	count uint64 // node entries added
}

var errGraphRecords = errors.New("mmapds: a graph plan needs one AddNode per record, right after its AddRef")

// AddNode gives the record just added (AddRef) its place in the graph. A plan has a graph
// when its first record gets one, and then every record must. Edges must point at earlier
// records; Close's caller, the compiler, keeps a session's records consecutive.
func (w *Writer) AddNode(n Node) error {
	if w.err != nil {
		return w.err
	}
	g := &w.graph
	if !g.on {
		if w.count != 1 {
			w.err = errGraphRecords
			return w.err
		}
		g.on = true
	}
	if g.count+1 != w.count {
		w.err = errGraphRecords
		return w.err
	}
	if len(n.Parents) > 0xffff || len(n.Sources) > 0xffff {
		w.err = fmt.Errorf("mmapds: record %d: %d parents and %d sources, at most 65535 each", w.count-1, len(n.Parents), len(n.Sources))
		return w.err
	}
	var b [NodeSize]byte
	putNode(b[:], n.Agent, uint32(len(g.edges)/EdgeSize), uint16(len(n.Parents)), uint16(len(n.Sources)), n.Flags, n.Reuse)
	g.nodes = append(g.nodes, b[:]...)
	for _, list := range [][]Edge{n.Parents, n.Sources} {
		for _, e := range list {
			if uint64(e.Record) >= w.count-1 {
				w.err = fmt.Errorf("mmapds: record %d depends on record %d, which is not earlier", w.count-1, e.Record)
				return w.err
			}
			var eb [EdgeSize]byte
			binary.LittleEndian.PutUint32(eb[:], e.Record)
			eb[4] = uint8(e.Kind)
			g.edges = append(g.edges, eb[:]...)
		}
	}
	if uint64(len(g.edges)/EdgeSize) > 0xffffffff {
		w.err = errors.New("mmapds: more than 2^32 edges")
		return w.err
	}
	g.count++
	return nil
}
