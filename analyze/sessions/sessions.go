// Package sessions computes the session metrics of graph plans (agentic workloads:
// weka_trace, dag_jsonl; docs/metrics.md "Sessions") from the plan's graph and how each of
// its requests ended (Node, from the request's record.Metrics): the sessions' counts,
// AIPerf's branch_stats, the prefix reuse the workload offered, the report's swim lanes and
// the distributions (session and subagent latency, requests and subagents per session,
// nesting depth, the parents' wait on their children) as accum.Dists. A session is one of
// the plan's sessions of the profile phase: a trace's root agent and every subagent it
// spawned, as the plan's graph section names them.
//
// analyze collects the Nodes while reading the logs, calls Compute once they are merged and
// turns the distributions into its Results; sessions imports analyze/accum,
// analyze/record, mmapds and rawlog, and must not import analyze or anything above it.
package sessions

import (
	"math"
	"slices"

	"github.com/llmbench/llmbench/analyze/accum"
	"github.com/llmbench/llmbench/analyze/record"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
)

// State is how one request of a graph plan ended.
type State uint8

// The states of a request.
const (
	Missing State = iota // no log holds it (lost)
	OK                   // sent and counted valid
	Failed               // sent and not valid
	Skipped              // not sent: a request it depends on failed
	NotSent              // not sent: the run stopped first
	NotDue               // the plan's duration ended before it was due
)

// Node is what the session metrics keep of one request: when it was written and when it
// ended (Unix ns, -1: it was not), and how it ended.
type Node struct {
	Index     uint32
	Send, End int64
	State     State
}

// Unseen is the node of plan record index that no log held.
func Unseen(index uint32) Node { return Node{Index: index, Send: -1, End: -1} }

// Of returns what the session metrics keep of m (a profile request of a graph plan), q
// being its raw record.
func Of(m *record.Metrics, q *rawlog.Request) Node {
	t := Node{Index: m.Index, Send: -1, End: -1}
	switch {
	case m.NotDue:
		t.State = NotDue
	case !m.Sent:
		t.State = NotSent
		if _, ok := rawlog.SkippedFor(q.Err); ok {
			t.State = Skipped
		}
	case m.Valid:
		t.State = OK
	default:
		t.State = Failed
	}
	if m.Sent && m.SendNs >= 0 {
		t.Send = m.StartUnixNs + m.SendNs
	}
	if m.Sent && m.EndNs >= 0 {
		t.End = m.StartUnixNs + m.EndNs
	}
	return t
}

// The distributions of Summary.Dists, in the order they are reported.
const (
	Latency     = iota // first request written to last response, completed sessions (ns)
	Requests           // requests per session
	Subagents          // subagents per session
	Depth              // the deepest subagent nesting
	Wait               // the time a parent waited on its children at each join (ns)
	SubLatency         // subagent latency, completed subagents (ns)
	SubRequests        // requests per subagent
	NumDists
)

// Summary is the session metrics of a graph plan's run.
type Summary struct {
	// Sessions counts the profile sessions that took part (some request due); Completed
	// those whose every request completed, Failed those with a failed request, Incomplete
	// the rest (requests not sent: the duration ended, the run stopped, or lost).
	Sessions, Completed, Failed, Incomplete int64
	// Skipped counts the requests not sent because a request they depend on failed: counted
	// here and as not_sent, never as lost.
	Skipped int64
	// Dists are the distributions, indexed Latency … SubRequests.
	Dists [NumDists]*accum.Dist
	// Branch is AIPerf's branch_stats counters.
	Branch BranchStats
	// Reuse is the prompt reuse the workload offered, nil when the plan offered none.
	Reuse *PrefixReuse
	// Lanes are the sessions over time, for the report's swim lane: at most maxLanes, the
	// first to start.
	Lanes []Lane
}

// BranchStats are AIPerf's branch_stats counters, computed from the graph and the records.
type BranchStats struct {
	// ChildrenSpawned: subagents and FORK/SPAWN children that sent a request; Completed:
	// every request of theirs completed; Errored: one failed, or was skipped for a failure;
	// Truncated: one was not sent because the run stopped (duration, interruption); Delayed:
	// their first request waited a think time after its spawn point.
	ChildrenSpawned, ChildrenCompleted, ChildrenErrored, ChildrenTruncated, ChildrenDelayed int64
	// ParentsSuspended: parent requests that waited on children past their own previous
	// request's end (a join); ParentsResumed: those sent once the children had ended;
	// ParentsFailedDueToChildError: join requests skipped because a child's request failed;
	// JoinsSuppressed: join requests not sent because the run stopped.
	ParentsSuspended, ParentsResumed, ParentsFailedDueToChildError, JoinsSuppressed int64
}

// PrefixReuse is the prompt reuse the workload offered (the graph nodes' Reuse: the leading
// blocks of each rendered prompt's tokens that an earlier request's prompt began with, as
// the plan computed them, plan/dataset reuse.go) next to the server's prefix-cache hits.
type PrefixReuse struct {
	// ExpectedTokens of PromptTokens (the ISL of the completed profile requests) were offered
	// for reuse; ExpectedRatio is their share.
	ExpectedTokens, PromptTokens int64
	ExpectedRatio                float64
	// ServerRatio is the server's prefix-cache hit rate over the profile window
	// (server.prefix_cache_hit_rate: vLLM's hits over queries, SGLang's cache_hit_rate);
	// ServerKnown is false when its metrics do not have it (analyze fills these in).
	ServerRatio  float64
	ServerKnown  bool
	ServerSource string
}

// Lane is one session on the report's swim lane: each agent's span, nested by depth.
type Lane struct {
	Session uint32
	Name    string
	Agents  []AgentSpan
}

// AgentSpan is one agent's requests in a session.
type AgentSpan struct {
	Agent    uint32
	Name     string
	Depth    int
	Requests []Span
}

// Span is one request on the swim lane: when it was written and ended (Unix ns; End -1:
// it did not end) and whether it completed.
type Span struct {
	Send, End int64
	OK        bool
}

// maxLanes bounds the sessions the swim lane draws.
const maxLanes = 200

// Compute computes the session metrics of graph plan p from nodes (by plan index; one
// Unseen where no log held the request), its distributions exact up to exactLimit values.
// It returns nil when no profile session took part.
func Compute(p *mmapds.Plan, t []Node, exactLimit int) *Summary {
	meta := p.Meta()
	out := &Summary{}
	dists := &out.Dists
	for i := range dists {
		dists[i] = accum.NewDist(exactLimit, 1)
	}
	reuse := &PrefixReuse{}
	var edges []mmapds.Edge
	type agentAcc struct {
		first, last  int64
		requests     int64
		ok, bad, cut int64
		delayed      bool
		spans        []Span
	}
	for lo := 0; lo < p.Len(); {
		r0, _, _ := p.Record(lo)
		hi := lo + 1
		for hi < p.Len() {
			r, _, _ := p.Record(hi)
			if r.Session != r0.Session {
				break
			}
			hi++
		}
		if r0.Phase != mmapds.PhaseProfile {
			lo = hi
			continue
		}
		due := false
		for i := lo; i < hi; i++ {
			due = due || t[i].State != NotDue
		}
		if !due {
			lo = hi
			continue
		}
		out.Sessions++
		agents := map[uint32]*agentAcc{}
		var order []uint32
		first, last := int64(math.MaxInt64), int64(-1)
		requests, failed, cut := int64(0), false, false
		for i := lo; i < hi; i++ {
			n := t[i]
			gn := p.GraphNode(i)
			acc := agents[gn.Agent]
			if acc == nil {
				acc = &agentAcc{first: math.MaxInt64, last: -1}
				agents[gn.Agent] = acc
				order = append(order, gn.Agent)
				if r, _, _ := p.Record(i); r.DelayNs > 0 && gn.Parents > 0 && n.Send >= 0 {
					acc.delayed = true
				}
			}
			switch n.State {
			case OK:
				acc.ok++
			case Failed:
				acc.bad++
				failed = true
			case Skipped:
				acc.bad++
				out.Skipped++
				failed = true
			default:
				acc.cut++
				cut = true
			}
			if n.Send >= 0 {
				requests++
				acc.requests++
				first, acc.first = min(first, n.Send), min(acc.first, n.Send)
				acc.spans = append(acc.spans, Span{Send: n.Send, End: n.End, OK: n.State == OK})
			}
			if n.End >= 0 {
				last, acc.last = max(last, n.End), max(acc.last, n.End)
			}
			if n.State == OK {
				if r, _, _ := p.Record(i); r.ISL > 0 {
					reuse.PromptTokens += int64(r.ISL)
					reuse.ExpectedTokens += int64(gn.Reuse)
				}
			}
			// Joins: how long the parent waited on its children past its own turn.
			parents, _ := p.Edges(edges[:0], gn)
			var turnEnd, childEnd int64 = -1, -1
			joins := false
			for _, e := range parents {
				switch e.Kind {
				case mmapds.EdgeTurn:
					turnEnd = t[e.Record].End
				case mmapds.EdgeJoin:
					joins = true
					childEnd = max(childEnd, t[e.Record].End)
				}
			}
			if !joins {
				continue
			}
			switch n.State {
			case Skipped:
				out.Branch.ParentsFailedDueToChildError++
			case NotSent, NotDue, Missing:
				out.Branch.JoinsSuppressed++
			}
			if turnEnd >= 0 && childEnd >= 0 {
				wait := max(0, childEnd-turnEnd)
				dists[Wait].Add(float64(wait))
				if wait > 0 {
					out.Branch.ParentsSuspended++
					if n.Send >= 0 {
						out.Branch.ParentsResumed++
					}
				}
			}
		}
		switch {
		case failed:
			out.Failed++
		case cut:
			out.Incomplete++
		default:
			out.Completed++
			dists[Latency].Add(float64(last - first))
		}
		dists[Requests].Add(float64(requests))
		subagents, depth := 0, 0
		lane := Lane{Session: r0.Session}
		for _, k := range order {
			acc := agents[k]
			ag := mmapds.Agent{Depth: 0}
			if int(k) < len(meta.Agents) {
				ag = meta.Agents[k]
			}
			if ag.Depth == 0 && lane.Name == "" {
				lane.Name = ag.Name
			}
			if acc.requests > 0 {
				lane.Agents = append(lane.Agents, AgentSpan{Agent: k, Name: ag.Name, Depth: ag.Depth, Requests: acc.spans})
			}
			if ag.Depth == 0 || acc.requests == 0 {
				continue
			}
			subagents++
			depth = max(depth, ag.Depth)
			b := &out.Branch
			b.ChildrenSpawned++
			switch {
			case acc.bad > 0:
				b.ChildrenErrored++
			case acc.cut > 0:
				b.ChildrenTruncated++
			default:
				b.ChildrenCompleted++
				dists[SubLatency].Add(float64(acc.last - acc.first))
			}
			if acc.delayed {
				b.ChildrenDelayed++
			}
			dists[SubRequests].Add(float64(acc.requests))
		}
		dists[Subagents].Add(float64(subagents))
		dists[Depth].Add(float64(depth))
		if len(out.Lanes) < maxLanes && len(lane.Agents) > 0 {
			slices.SortStableFunc(lane.Agents, func(x, y AgentSpan) int { return agentOrder(meta, x.Agent, y.Agent) })
			out.Lanes = append(out.Lanes, lane)
		}
		lo = hi
	}
	if out.Sessions == 0 {
		return nil
	}
	if reuse.PromptTokens > 0 && meta.PrefixReuseBlockTokens > 0 {
		reuse.ExpectedRatio = float64(reuse.ExpectedTokens) / float64(reuse.PromptTokens)
		out.Reuse = reuse
	}
	return out
}

// agentOrder orders agents for the swim lane: each after its parent, its own subagents
// right under it (depth first, in plan order).
func agentOrder(meta *mmapds.Meta, x, y uint32) int {
	path := func(k uint32) []int64 {
		var p []int64
		for a := int64(k); a >= 0 && int(a) < len(meta.Agents); a = meta.Agents[a].Parent {
			p = append([]int64{a}, p...)
		}
		return p
	}
	return slices.Compare(path(x), path(y))
}
