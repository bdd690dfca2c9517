package plan

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/llmbench/llmbench/mmapds"
)

// NodeView is one record of a graph plan as `plan inspect` shows it: where it stands in its
// session's graph.
type NodeView struct {
	Index   int    `json:"index"`
	Phase   string `json:"phase"`
	Session uint32 `json:"session"`
	// Agent is the plan-wide agent number (an index into Summary.Agents), AgentName its
	// name in the input; Turn the record's turn within its agent.
	Agent     uint32 `json:"agent"`
	AgentName string `json:"agent_name"`
	Depth     int    `json:"depth"`
	Turn      uint32 `json:"turn"`
	ISL       uint32 `json:"isl"`
	OSL       uint32 `json:"osl"`
	// SendOffsetNs is its fixed instant (null: none); ThinkNs how long after the last of its
	// parents ended it may be sent (for a root other than its session's first record: after
	// that record's release; null for the first).
	SendOffsetNs *int64 `json:"send_offset_ns"`
	ThinkNs      *int64 `json:"think_ns"`
	// Parents are the records it waits for, Sources those whose replies its body carries.
	Parents []EdgeView `json:"parents"`
	Sources []int      `json:"sources,omitempty"`
	Strict  bool       `json:"strict"`
	// ExpectedReuse is the prompt tokens an infinite prefix cache holds when it is sent
	// (the leading hash-id blocks an earlier record sent).
	ExpectedReuse uint32 `json:"expected_reuse"`
}

// EdgeView is one parent of a node: the record and why (turn, spawn, fork, join).
type EdgeView struct {
	Record uint32 `json:"record"`
	Kind   string `json:"kind"`
}

// graph fills the agents and nodes of a graph plan.
func (s *Summary) graph(p *mmapds.Plan) error {
	if !p.HasGraph() {
		return nil
	}
	m := p.Meta()
	s.Agents = m.Agents
	s.Nodes = make([]NodeView, 0, p.Len())
	var edges []mmapds.Edge
	for i := range p.Len() {
		r, _, err := p.Record(i)
		if err != nil {
			return err
		}
		gn := p.GraphNode(i)
		v := NodeView{Index: i, Phase: r.Phase.String(), Session: r.Session, Agent: gn.Agent, Turn: r.Turn,
			ISL: r.ISL, OSL: r.OSL, Parents: []EdgeView{}, Strict: gn.Flags&mmapds.NodeStrict != 0, ExpectedReuse: gn.Reuse}
		if int(gn.Agent) < len(m.Agents) {
			v.AgentName, v.Depth = m.Agents[gn.Agent].Name, m.Agents[gn.Agent].Depth
		}
		if r.SendOffsetNs != mmapds.NoSendOffset {
			at := r.SendOffsetNs
			v.SendOffsetNs = &at
		}
		if r.DelayNs >= 0 {
			d := r.DelayNs
			v.ThinkNs = &d
		}
		parents, sources := p.Edges(edges[:0], gn)
		for _, e := range parents {
			v.Parents = append(v.Parents, EdgeView{Record: e.Record, Kind: e.Kind.String()})
		}
		for _, e := range sources {
			v.Sources = append(v.Sources, int(e.Record))
		}
		s.Nodes = append(s.Nodes, v)
	}
	return nil
}

// writeGraph prints a graph plan's agents and nodes: one line each, agents indented by
// depth under their session.
func (s *Summary) writeGraph(w io.Writer) {
	if len(s.Nodes) == 0 {
		return
	}
	fmt.Fprintln(w, "agents:")
	for k, a := range s.Agents {
		kind := a.Kind
		if a.Type != "" {
			kind += " " + a.Type
		}
		if a.Background {
			kind += ", background"
		}
		parent := ""
		if a.Parent >= 0 {
			parent = fmt.Sprintf(" of agent %d", a.Parent)
		}
		fmt.Fprintf(w, "  %s#%d session %d %s (%s%s)\n", strings.Repeat("  ", a.Depth), k, a.Session, a.Name, kind, parent)
	}
	fmt.Fprintln(w, "nodes:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  record\tphase\tsession\tagent\tturn\tisl\tosl\treuse\tat\tthink\tparents\tsources")
	for _, n := range s.Nodes {
		at, think := "-", "-"
		if n.SendOffsetNs != nil {
			at = time.Duration(*n.SendOffsetNs).String()
		}
		if n.ThinkNs != nil {
			think = time.Duration(*n.ThinkNs).String()
		}
		var ps []string
		for _, e := range n.Parents {
			ps = append(ps, fmt.Sprintf("%d:%s", e.Record, e.Kind))
		}
		parents := strings.Join(ps, ",")
		if parents == "" {
			parents = "-"
		}
		sources := "-"
		if len(n.Sources) > 0 {
			sources = strings.Trim(strings.Join(strings.Fields(fmt.Sprint(n.Sources)), ","), "[]")
		}
		fmt.Fprintf(tw, "  %d\t%s\t%d\t%d %s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n", n.Index, n.Phase, n.Session, n.Agent, n.AgentName,
			n.Turn, n.ISL, n.OSL, n.ExpectedReuse, at, think, parents, sources)
	}
	tw.Flush()
}
