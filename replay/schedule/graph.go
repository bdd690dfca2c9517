package schedule

import (
	"errors"
	"fmt"
	"sort"
)

// NoInstant is a node's At when it has no fixed instant.
const NoInstant int64 = -1

// Node is one request of a worker's part.
type Node struct {
	// Index is the request's plan record: what the transport sends.
	Index int32
	// At is the node's fixed instant (run clock, ns), NoInstant when it has none. A unit's
	// entry with one is open loop (sent at At); without, closed loop (sent when a slot frees).
	// Any other node is released no earlier than At.
	At int64
	// Think is how long after the last of its parents ended the node may be sent (>= 0);
	// for a unit's other roots (nodes without parents but its entry), how long after the
	// entry's release; unused for an entry.
	Think int64
	// Strict makes the node depend on its parents' success: when one of them fails, neither
	// it nor any node below it is sent (they are skipped). Otherwise a failed parent releases
	// it as a completed one would.
	Strict bool

	unit int32
}

// Unit returns the unit the node belongs to.
func (n *Node) Unit() int32 { return n.unit }

// Unit is a group of nodes that holds one concurrency slot: a session, with everything that
// runs inside it.
type Unit struct {
	// Session is the session's ordinal within its shard (the transports route by it).
	Session uint32
	// Warmup units are not measured; closed-loop warmup units gate the closed-loop profile.
	Warmup bool

	entry int32 // its first node; -1 until it has one
	nodes int32
}

// Entry returns the unit's first node.
func (u *Unit) Entry() int32 { return u.entry }

// Graph is one worker's part of the plan: nodes with parent edges, in units. Nodes are
// numbered 0, 1, 2... in the order they were added, which is a topological order (a parent
// is always added before its children). Build it with AddUnit and AddNode; a Scheduler
// reads it and never changes it.
type Graph struct {
	nodes []Node
	units []Unit
	// parents[parentAt[i]:parentAt[i+1]] are node i's parents.
	parents  []int32
	parentAt []int32
	// children[childAt[i]:childAt[i+1]] are node i's children, once built.
	children []int32
	childAt  []int32
	// roots are the nodes without parents that are not their unit's entry, in order.
	roots []int32
}

// Len is the number of nodes.
func (g *Graph) Len() int { return len(g.nodes) }

// Node returns node i.
func (g *Graph) Node(i int32) *Node { return &g.nodes[i] }

// Units is the number of units.
func (g *Graph) Units() int { return len(g.units) }

// Unit returns unit u.
func (g *Graph) Unit(u int32) *Unit { return &g.units[u] }

// Parents returns node i's parents (nil for an entry).
func (g *Graph) Parents(i int32) []int32 {
	if len(g.parentAt) == 0 {
		return nil
	}
	return g.parents[g.parentAt[i]:g.parentAt[i+1]]
}

// Children returns the nodes that have node i as a parent.
func (g *Graph) Children(i int32) []int32 {
	g.buildChildren()
	return g.children[g.childAt[i]:g.childAt[i+1]]
}

// AddUnit adds a unit with no nodes yet and returns its number.
func (g *Graph) AddUnit(u Unit) int32 {
	u.entry, u.nodes = -1, 0
	g.units = append(g.units, u)
	return int32(len(g.units) - 1)
}

// AddNode adds n to unit u with the given parents and returns its number. A unit's first
// node is its entry and has no parents; a later node has parents, each an earlier node of
// the same unit, or none: it is then one of the unit's other roots, released its think time
// after the entry is (a subagent that starts with its session, a trajectory resumed midway
// with several conversations in flight). Later nodes have a think time >= 0.
func (g *Graph) AddNode(u int32, n Node, parents ...int32) (int32, error) {
	id := int32(len(g.nodes))
	if u < 0 || int(u) >= len(g.units) {
		return -1, fmt.Errorf("schedule: node for record %d: no unit %d", n.Index, u)
	}
	un := &g.units[u]
	switch {
	case un.entry < 0 && len(parents) > 0:
		return -1, fmt.Errorf("schedule: record %d: a unit's first node has no parents", n.Index)
	case un.entry >= 0 && n.Think < 0:
		return -1, fmt.Errorf("schedule: record %d: think time %d is negative", n.Index, n.Think)
	case n.At < 0 && n.At != NoInstant:
		return -1, fmt.Errorf("schedule: record %d: instant %d is negative", n.Index, n.At)
	}
	for _, p := range parents {
		if p < 0 || p >= id || g.nodes[p].unit != u {
			return -1, fmt.Errorf("schedule: record %d: parent %d is not an earlier node of its unit", n.Index, p)
		}
	}
	if len(g.parentAt) == 0 {
		g.parentAt = append(g.parentAt, 0)
	}
	n.unit = u
	g.nodes = append(g.nodes, n)
	g.parents = append(g.parents, parents...)
	g.parentAt = append(g.parentAt, int32(len(g.parents)))
	if un.entry < 0 {
		un.entry = id
	}
	un.nodes++
	g.children, g.childAt = nil, nil
	if un.entry != id && len(parents) == 0 {
		g.roots = append(g.roots, id)
	}
	return id, nil
}

// buildChildren inverts the parent edges once the graph is complete.
func (g *Graph) buildChildren() {
	if g.childAt != nil {
		return
	}
	g.childAt = make([]int32, len(g.nodes)+1)
	for _, p := range g.parents {
		g.childAt[p+1]++
	}
	for i := 1; i < len(g.childAt); i++ {
		g.childAt[i] += g.childAt[i-1]
	}
	g.children = make([]int32, len(g.parents))
	fill := append([]int32(nil), g.childAt[:len(g.nodes)]...)
	for i := range g.nodes {
		for _, p := range g.Parents(int32(i)) {
			g.children[fill[p]] = int32(i)
			fill[p]++
		}
	}
}

// errEmptyUnit is a unit with no node.
var errEmptyUnit = errors.New("schedule: a unit has no node")

// check says whether the graph can be scheduled: every unit has a node.
func (g *Graph) check() error {
	for i := range g.units {
		if g.units[i].entry < 0 {
			return fmt.Errorf("%w (unit %d)", errEmptyUnit, i)
		}
	}
	return nil
}

// order returns the open-loop units by entry instant (plan order among equals) and the
// closed-loop units in plan order.
func (g *Graph) order() (open, closed []int32) {
	for u := range g.units {
		if g.nodes[g.units[u].entry].At >= 0 {
			open = append(open, int32(u))
		} else {
			closed = append(closed, int32(u))
		}
	}
	sort.SliceStable(open, func(a, b int) bool {
		return g.nodes[g.units[open[a]].entry].At < g.nodes[g.units[open[b]].entry].At
	})
	return open, closed
}

// HasClosedLoop says whether some unit has no fixed instant (it needs concurrency slots).
func (g *Graph) HasClosedLoop() bool {
	for u := range g.units {
		if g.nodes[g.units[u].entry].At < 0 {
			return true
		}
	}
	return false
}
