package dataset

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Graph inputs (weka_trace, dag_jsonl). A conversation of a graph dataset is one session: an
// agent's conversation and every subagent (or FORK/SPAWN child) it spawns, as one unit that
// holds one concurrency slot. Its turns are the requests of all its agents, in an order where
// every turn comes after the turns it waits for (its parents), the session's first request
// first. Turn.Node says where each stands; Conversation.Agents names the agents.

// EdgeKind says why a turn waits for another. The numbering is the plan file's
// (mmapds.EdgeKind).
type EdgeKind uint8

// Edge kinds.
const (
	// EdgeTurn: the previous request of the same agent.
	EdgeTurn EdgeKind = 1
	// EdgeSpawn: the request a subagent (SPAWN child) starts after, with its own context.
	EdgeSpawn EdgeKind = 2
	// EdgeFork: the request a FORK child starts after and whose conversation it inherits.
	EdgeFork EdgeKind = 3
	// EdgeJoin: a subagent's last request, which this request of its parent waits for.
	EdgeJoin EdgeKind = 4
)

// Edge is a dependency of a turn on an earlier turn of its conversation.
type Edge struct {
	Turn int
	Kind EdgeKind
}

// Node places a turn in its session's graph.
type Node struct {
	// Agent indexes Conversation.Agents; AgentTurn is the turn's number within its agent.
	Agent, AgentTurn int
	// Parents are the earlier turns it waits for; none for the session's first turn and for
	// its other roots (released ThinkNs after the first).
	Parents []Edge
	// Sources are the earlier turns whose replies its body carries as history, in body
	// order (dag_jsonl: the conversation it continues, a FORK child's inherited one); the
	// compiler renders each source's messages followed by its reply.
	Sources []int
	// StartNs and EndNs are when the input recorded the request start and end, from the
	// session's start (weka_trace: t and t + api_time, after the idle-gap cap); NoTime when
	// the input has no timestamps.
	StartNs, EndNs int64
	// RecordedThinkNs is the client delay the input recorded before the request (weka
	// think_time, dag_jsonl delay), NoTime when it gives none.
	RecordedThinkNs int64
	// Verbatim are the turn's own messages as the input wrote them (compact JSON), when
	// they carry more than role and text (content parts, tool calls): the body then sends
	// them as written. nil otherwise.
	Verbatim []json.RawMessage
}

// Agent is one conversation of a session: the session's own (Kind "root") or a subagent or
// child conversation spawned inside it.
type Agent struct {
	// Name is the input's name: the trace id, the subagent's agent_id, the dag_jsonl
	// session id (with "#n" for the n-th instance of a SPAWN template).
	Name string
	// Type is the subagent_type of a weka_trace subagent.
	Type string
	// Kind is "root", "subagent", "fork" or "spawn".
	Kind string
	// Parent indexes the spawning agent in Conversation.Agents, -1 for the root.
	Parent int
	// Depth is 0 for the root, 1 for its subagents, 2 for theirs...
	Depth int
	// Background says that the parent does not wait for it.
	Background bool
}

// IsGraph reports whether c is a graph conversation (its turns have Nodes).
func (c *Conversation) IsGraph() bool { return len(c.Agents) > 0 }

// deriveThink sets every turn's DelayNs (and TimestampNs) from its node: for a turn with
// parents, its recorded think time when the input gives one, else the recorded gap from the
// latest end among its parents to its start (end-to-start, never negative), else 0; for the
// session's other roots, the recorded gap from the first turn's start; the first turn has
// none (NoTime).
func deriveThink(c *Conversation) {
	for i := range c.Turns {
		t := &c.Turns[i]
		n := t.Node
		t.TimestampNs = n.StartNs
		switch {
		case i == 0:
			t.DelayNs = NoTime
		case len(n.Parents) == 0:
			t.DelayNs = 0
			if first := c.Turns[0].Node.StartNs; n.StartNs != NoTime && first != NoTime {
				t.DelayNs = max(0, n.StartNs-first)
			}
		case n.RecordedThinkNs != NoTime:
			t.DelayNs = n.RecordedThinkNs
		case n.StartNs != NoTime:
			end := int64(0)
			for _, p := range n.Parents {
				end = max(end, c.Turns[p.Turn].Node.EndNs)
			}
			t.DelayNs = max(0, n.StartNs-end)
		default:
			t.DelayNs = 0
		}
	}
}

// checkGraph verifies the structure the compiler and replay rely on: the first turn has no
// parents, every parent and source is an earlier turn, agents exist.
func checkGraph(c *Conversation) error {
	if !c.IsGraph() || len(c.Turns) == 0 {
		return fmt.Errorf("session %q: no requests", c.SessionID)
	}
	for i := range c.Turns {
		n := c.Turns[i].Node
		if n == nil {
			return fmt.Errorf("session %q turn %d: no graph node", c.SessionID, i)
		}
		if n.Agent < 0 || n.Agent >= len(c.Agents) {
			return fmt.Errorf("session %q turn %d: agent %d of %d", c.SessionID, i, n.Agent, len(c.Agents))
		}
		if i == 0 && len(n.Parents) > 0 {
			return fmt.Errorf("session %q: its first request waits for another", c.SessionID)
		}
		for _, p := range n.Parents {
			if p.Turn < 0 || p.Turn >= i {
				return fmt.Errorf("session %q turn %d: waits for turn %d, which is not earlier", c.SessionID, i, p.Turn)
			}
		}
		for _, s := range n.Sources {
			if s < 0 || s >= i {
				return fmt.Errorf("session %q turn %d: history from turn %d, which is not earlier", c.SessionID, i, s)
			}
		}
	}
	for k, a := range c.Agents {
		if a.Parent >= k || a.Parent < -1 || (k > 0) != (a.Parent >= 0) {
			return fmt.Errorf("session %q: agent %d has parent %d", c.SessionID, k, a.Parent)
		}
	}
	return nil
}

// TrimGraph returns c started at tStarNs of its recorded timeline (AgentX's trajectory
// start): the turns recorded to start before it are left out, the others keep their parents
// among the turns kept, and those left without any become roots. The kept root that starts
// first becomes the first turn; think times are derived again. At least the last-starting
// turn is kept. c must be a timed graph conversation; the result shares c's prompts.
func TrimGraph(c *Conversation, tStarNs int64) Conversation {
	last := int64(0)
	for i := range c.Turns {
		last = max(last, c.Turns[i].Node.StartNs)
	}
	tStarNs = min(tStarNs, last)
	if tStarNs <= 0 {
		return *c
	}
	keep := make([]int, 0, len(c.Turns))
	for i := range c.Turns {
		if c.Turns[i].Node.StartNs >= tStarNs {
			keep = append(keep, i)
		}
	}
	// The first turn: the kept turn without kept parents that starts first (a root comes
	// before everything that depends on it, so moving it to the front keeps the order).
	kept := make(map[int]bool, len(keep))
	for _, i := range keep {
		kept[i] = true
	}
	first := -1
	for _, i := range keep {
		root := true
		for _, p := range c.Turns[i].Node.Parents {
			if kept[p.Turn] {
				root = false
				break
			}
		}
		if root && (first < 0 || c.Turns[i].Node.StartNs < c.Turns[first].Node.StartNs) {
			first = i
		}
	}
	order := append([]int{first}, slices.DeleteFunc(slices.Clone(keep), func(i int) bool { return i == first })...)
	at := make(map[int]int, len(order))
	for k, i := range order {
		at[i] = k
	}
	out := *c
	out.Turns = make([]Turn, len(order))
	for k, i := range order {
		t := c.Turns[i]
		n := *t.Node
		n.Parents = nil
		for _, p := range t.Node.Parents {
			if j, ok := at[p.Turn]; ok {
				n.Parents = append(n.Parents, Edge{Turn: j, Kind: p.Kind})
			}
		}
		n.Sources = nil
		for _, s := range t.Node.Sources {
			if j, ok := at[s]; ok {
				n.Sources = append(n.Sources, j)
			}
		}
		t.Node = &n
		out.Turns[k] = t
	}
	deriveThink(&out)
	return out
}

// CriticalPathNs is a lower bound of how long a session of c takes to replay, whatever the
// server: along its longest chain of dependencies, every think time plus perRequestNs for
// each request (the roots at their offsets from the first turn).
func CriticalPathNs(c *Conversation, perRequestNs int64) int64 {
	if !c.IsGraph() {
		total := int64(0)
		for i := range c.Turns {
			total += perRequestNs + max(c.Turns[i].DelayNs, 0)
		}
		return total
	}
	end := make([]int64, len(c.Turns))
	longest := int64(0)
	for i := range c.Turns {
		t := &c.Turns[i]
		start := int64(0)
		if i > 0 {
			start = max(t.DelayNs, 0) // a root: its offset from the first turn
		}
		if len(t.Node.Parents) > 0 {
			start = 0
			for _, p := range t.Node.Parents {
				start = max(start, end[p.Turn])
			}
			start += max(t.DelayNs, 0)
		}
		end[i] = start + perRequestNs
		longest = max(longest, end[i])
	}
	return longest
}

// LastStartNs is the recorded start of the last-starting turn of a timed graph conversation
// (its trajectory's length, which trajectory starts are drawn from), 0 when it has none.
func LastStartNs(c *Conversation) int64 {
	last := int64(0)
	for i := range c.Turns {
		if n := c.Turns[i].Node; n != nil && n.StartNs > last {
			last = n.StartNs
		}
	}
	return last
}
