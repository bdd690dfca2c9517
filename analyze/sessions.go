package analyze

import (
	"fmt"
	"math"
	"slices"

	"github.com/llmbench/llmbench/analyze/accum"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
)

// Session metrics of graph plans (agentic workloads: weka_trace, dag_jsonl; docs/metrics.md
// "Sessions"). A session is one of the plan's sessions of the profile phase: a trace's root
// agent and every subagent it spawned, as the plan's graph section names them. They are
// computed from the same request records as everything else, after the logs are merged.

// nodeState is how one request of a graph plan ended.
type nodeState uint8

const (
	nodeMissing nodeState = iota // no log holds it (lost)
	nodeOK                       // sent and counted valid
	nodeFailed                   // sent and not valid
	nodeSkipped                  // not sent: a request it depends on failed
	nodeNotSent                  // not sent: the run stopped first
	nodeNotDue                   // the plan's duration ended before it was due
)

// nodeTiming is what the session metrics keep of one request: when it was written and when
// it ended (Unix ns, -1: it was not), and how it ended.
type nodeTiming struct {
	index     uint32
	send, end int64
	state     nodeState
}

// timing returns what the session metrics keep of m (a profile request of a graph plan).
func timing(m *requestMetrics, q *rawlog.Request) nodeTiming {
	t := nodeTiming{index: m.Index, send: -1, end: -1}
	switch {
	case m.NotDue:
		t.state = nodeNotDue
	case !m.Sent:
		t.state = nodeNotSent
		if _, ok := rawlog.SkippedFor(q.Err); ok {
			t.state = nodeSkipped
		}
	case m.Valid:
		t.state = nodeOK
	default:
		t.state = nodeFailed
	}
	if m.Sent && m.SendNs >= 0 {
		t.send = m.StartUnixNs + m.SendNs
	}
	if m.Sent && m.EndNs >= 0 {
		t.end = m.StartUnixNs + m.EndNs
	}
	return t
}

// SessionSummary is the session metrics of a graph plan's run.
type SessionSummary struct {
	// Sessions counts the profile sessions that took part (some request due); Completed
	// those whose every request completed, Failed those with a failed request, Incomplete
	// the rest (requests not sent: the duration ended, the run stopped, or lost).
	Sessions, Completed, Failed, Incomplete int64
	// Skipped counts the requests not sent because a request they depend on failed: counted
	// here and as not_sent, never as lost.
	Skipped int64
	// Results are the distributions: session latency (first request written to last
	// response, completed sessions), requests per session, subagents per session, the
	// deepest subagent nesting, the time a parent waited on its children at each join,
	// subagent latency and requests per subagent.
	Results []Result
	// Branch is AIPerf's branch_stats counters.
	Branch BranchStats
	// Reuse compares the prefix reuse the workload offered with the server's cache.
	Reuse *PrefixReuse
	// Lanes are the sessions over time, for the report's swim lane: at most maxLanes, the
	// first to start.
	Lanes []SessionLane
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
	// ServerKnown is false when its metrics do not have it.
	ServerRatio  float64
	ServerKnown  bool
	ServerSource string
}

// SessionLane is one session on the report's swim lane: each agent's span, nested by depth.
type SessionLane struct {
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

// Session metric tags, in the order they are reported.
var sessionDefs = []MetricDef{
	{Tag: "session_latency", Header: "Session Latency", Unit: "ms", div: nsToMs},
	{Tag: "session_requests", Header: "Requests per Session", Unit: "requests", div: 1},
	{Tag: "session_subagents", Header: "Subagents per Session", Unit: "agents", div: 1},
	{Tag: "session_subagent_depth", Header: "Subagent Depth", Unit: "levels", div: 1},
	{Tag: "parent_wait_on_children", Header: "Parent Wait on Children", Unit: "ms", div: nsToMs},
	{Tag: "subagent_latency", Header: "Subagent Latency", Unit: "ms", div: nsToMs},
	{Tag: "subagent_requests", Header: "Requests per Subagent", Unit: "requests", div: 1},
}

// sessions computes s.Sessions from the plan's graph and the request timings the logs held.
func (a *analysis) sessions(s *Summary, parts []*logAnalysis) {
	p := a.in.plan
	if !p.HasGraph() {
		return
	}
	t := make([]nodeTiming, p.Len())
	for i := range t {
		t[i] = nodeTiming{index: uint32(i), send: -1, end: -1}
	}
	for _, part := range parts {
		for _, n := range part.nodes {
			t[n.index] = n
		}
		part.nodes = nil
	}
	meta := p.Meta()
	dists := make([]*accum.Dist, len(sessionDefs))
	for i := range dists {
		dists[i] = accum.NewDist(a.opts.ExactLimit, 1)
	}
	const (
		dLatency = iota
		dRequests
		dSubagents
		dDepth
		dWait
		dSubLatency
		dSubRequests
	)
	out := &SessionSummary{}
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
			due = due || t[i].state != nodeNotDue
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
				if r, _, _ := p.Record(i); r.DelayNs > 0 && gn.Parents > 0 && n.send >= 0 {
					acc.delayed = true
				}
			}
			switch n.state {
			case nodeOK:
				acc.ok++
			case nodeFailed:
				acc.bad++
				failed = true
			case nodeSkipped:
				acc.bad++
				out.Skipped++
				failed = true
			default:
				acc.cut++
				cut = true
			}
			if n.send >= 0 {
				requests++
				acc.requests++
				first, acc.first = min(first, n.send), min(acc.first, n.send)
				acc.spans = append(acc.spans, Span{Send: n.send, End: n.end, OK: n.state == nodeOK})
			}
			if n.end >= 0 {
				last, acc.last = max(last, n.end), max(acc.last, n.end)
			}
			if n.state == nodeOK {
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
					turnEnd = t[e.Record].end
				case mmapds.EdgeJoin:
					joins = true
					childEnd = max(childEnd, t[e.Record].end)
				}
			}
			if !joins {
				continue
			}
			switch n.state {
			case nodeSkipped:
				out.Branch.ParentsFailedDueToChildError++
			case nodeNotSent, nodeNotDue, nodeMissing:
				out.Branch.JoinsSuppressed++
			}
			if turnEnd >= 0 && childEnd >= 0 {
				wait := max(0, childEnd-turnEnd)
				dists[dWait].Add(float64(wait))
				if wait > 0 {
					out.Branch.ParentsSuspended++
					if n.send >= 0 {
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
			dists[dLatency].Add(float64(last - first))
		}
		dists[dRequests].Add(float64(requests))
		subagents, depth := 0, 0
		lane := SessionLane{Session: r0.Session}
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
				dists[dSubLatency].Add(float64(acc.last - acc.first))
			}
			if acc.delayed {
				b.ChildrenDelayed++
			}
			dists[dSubRequests].Add(float64(acc.requests))
		}
		dists[dSubagents].Add(float64(subagents))
		dists[dDepth].Add(float64(depth))
		if len(out.Lanes) < maxLanes && len(lane.Agents) > 0 {
			slices.SortStableFunc(lane.Agents, func(x, y AgentSpan) int { return agentOrder(meta, x.Agent, y.Agent) })
			out.Lanes = append(out.Lanes, lane)
		}
		lo = hi
	}
	if out.Sessions == 0 {
		return
	}
	for i, d := range dists {
		def := sessionDefs[i]
		if st := d.Stats(def.div); st != nil {
			out.Results = append(out.Results, Result{MetricDef: def, Stats: st})
		}
	}
	if reuse.PromptTokens > 0 && meta.PrefixReuseBlockTokens > 0 {
		reuse.ExpectedRatio = float64(reuse.ExpectedTokens) / float64(reuse.PromptTokens)
		reuse.ServerRatio, reuse.ServerSource, reuse.ServerKnown = serverHitRate(s)
		out.Reuse = reuse
	}
	s.Sessions = out
}

// serverHitRate is the server's prefix-cache hit rate over the profile window
// (server.prefix_cache_hit_rate) and its source; ok is false when its metrics lack it.
func serverHitRate(s *Summary) (ratio float64, source string, ok bool) {
	for _, m := range s.ServerMetrics {
		if m.Name == "server.prefix_cache_hit_rate" && m.Present {
			ratio, source, ok = m.Avg, m.Source, true
		}
	}
	return ratio, source, ok
}

// repeatNote adds a note when the plan's profile requests repeat bodies (a synthetic plan
// sampling fewer --num-dataset-entries than it sends, an input sent more than once through):
// how, the prompt tokens that offers a prefix cache again, and the server's measured hit
// rate beside it.
func (a *analysis) repeatNote(s *Summary) {
	note := a.in.offer.RepeatNote()
	if note == "" {
		return
	}
	if r, src, ok := serverHitRate(s); ok {
		note += fmt.Sprintf("; the server's prefix cache hit %s%% (%s)", FormatNumber(r*100), src)
	} else {
		note += "; the server's metrics have no prefix-cache hit counters"
	}
	s.Notes = append(s.Notes, "Repeated bodies: "+note)
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
