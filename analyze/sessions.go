package analyze

import (
	"fmt"

	"github.com/llmbench/llmbench/analyze/sessions"
)

// Session metrics of graph plans (agentic workloads: weka_trace, dag_jsonl; docs/metrics.md
// "Sessions"). A session is one of the plan's sessions of the profile phase: a trace's root
// agent and every subagent it spawned, as the plan's graph section names them. They are
// computed by analyze/sessions from the same request records as everything else, after the
// logs are merged; here they become Results beside the server's prefix-cache hit rate.

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
	// Lanes are the sessions over time, for the report's swim lane: at most 200 (analyze/sessions),
	// the first to start.
	Lanes []SessionLane
}

// The parts of a SessionSummary (analyze/sessions).
type (
	BranchStats = sessions.BranchStats
	PrefixReuse = sessions.PrefixReuse
	SessionLane = sessions.Lane
	AgentSpan   = sessions.AgentSpan
	Span        = sessions.Span
)

// Session metric tags, indexed as sessions.Summary.Dists, in the order they are reported.
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
	t := make([]sessions.Node, p.Len())
	for i := range t {
		t[i] = sessions.Unseen(uint32(i))
	}
	for _, part := range parts {
		for _, n := range part.nodes {
			t[n.Index] = n
		}
		part.nodes = nil
	}
	c := sessions.Compute(p, t, a.opts.ExactLimit)
	if c == nil {
		return
	}
	out := &SessionSummary{Sessions: c.Sessions, Completed: c.Completed, Failed: c.Failed, Incomplete: c.Incomplete,
		Skipped: c.Skipped, Branch: c.Branch, Reuse: c.Reuse, Lanes: c.Lanes}
	for i, d := range c.Dists {
		def := sessionDefs[i]
		if st := d.Stats(def.div); st != nil {
			out.Results = append(out.Results, Result{MetricDef: def, Stats: st})
		}
	}
	if out.Reuse != nil {
		out.Reuse.ServerRatio, out.Reuse.ServerSource, out.Reuse.ServerKnown = serverHitRate(s)
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
