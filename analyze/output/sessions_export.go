package output

import (
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/internal/pyjson"
)

// SessionLines are the console lines of the session metrics (none for plans without a
// graph), for the reporters that show them.
func SessionLines(s *analyze.Summary) []string { return sessionLines(s) }

// sessionLines are the console lines of the session metrics.
func sessionLines(s *analyze.Summary) []string {
	ss := s.Sessions
	if ss == nil {
		return nil
	}
	get := func(tag string) *analyze.Stats {
		for i := range ss.Results {
			if ss.Results[i].Tag == tag {
				return ss.Results[i].Stats
			}
		}
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Sessions: %d (%d completed, %d failed, %d incomplete)", ss.Sessions, ss.Completed, ss.Failed, ss.Incomplete)
	if st := get("session_latency"); st != nil {
		fmt.Fprintf(&b, "; latency avg %s ms, p50 %s ms, p99 %s ms", analyze.FormatNumber(st.Avg), analyze.FormatNumber(st.P[4]), analyze.FormatNumber(st.P[8]))
	}
	if st := get("session_requests"); st != nil {
		fmt.Fprintf(&b, "; %s requests each", analyze.FormatNumber(st.Avg))
	}
	if st := get("session_subagents"); st != nil {
		d := get("session_subagent_depth")
		fmt.Fprintf(&b, ", %s subagents (depth up to %s)", analyze.FormatNumber(st.Avg), analyze.FormatNumber(d.Max))
	}
	if st := get("parent_wait_on_children"); st != nil {
		fmt.Fprintf(&b, "; parents waited on children avg %s ms, p99 %s ms at %d joins", analyze.FormatNumber(st.Avg), analyze.FormatNumber(st.P[8]), st.Count)
	}
	if ss.Skipped > 0 {
		fmt.Fprintf(&b, "; %d requests not sent because a request they depend on failed", ss.Skipped)
	}
	out := []string{b.String()}
	br := ss.Branch
	out = append(out, fmt.Sprintf("Branches: children spawned %d, completed %d, errored %d, truncated %d; parents suspended %d, resumed %d, failed for a child's error %d",
		br.ChildrenSpawned, br.ChildrenCompleted, br.ChildrenErrored, br.ChildrenTruncated, br.ParentsSuspended, br.ParentsResumed, br.ParentsFailedDueToChildError))
	if r := ss.Reuse; r != nil {
		line := fmt.Sprintf("Prefix reuse: the workload offered %s%% of prompt tokens from blocks sent before (%d of %d)",
			analyze.FormatNumber(r.ExpectedRatio*100), r.ExpectedTokens, r.PromptTokens)
		if r.ServerKnown {
			line += fmt.Sprintf("; the server's prefix cache hit %s%% (%s)", analyze.FormatNumber(r.ServerRatio*100), r.ServerSource)
		} else {
			line += "; the server's metrics have no prefix-cache hit counters"
		}
		out = append(out, line)
	}
	return out
}

// sessionsJSON is the llmbench.sessions block.
func sessionsJSON(ss *analyze.SessionSummary) *pyjson.Object {
	o := &pyjson.Object{}
	o.Add("count", ss.Sessions).Add("completed", ss.Completed).Add("failed", ss.Failed).Add("incomplete", ss.Incomplete)
	o.Add("skipped_requests", ss.Skipped)
	for i := range ss.Results {
		o.Add(ss.Results[i].Tag, metricBlock(&ss.Results[i]))
	}
	if r := ss.Reuse; r != nil {
		ro := &pyjson.Object{}
		ro.Add("expected_reused_tokens", r.ExpectedTokens).Add("prompt_tokens", r.PromptTokens).Add("expected_hit_rate", pyjson.Float(r.ExpectedRatio))
		if r.ServerKnown {
			ro.Add("server_hit_rate", pyjson.Float(r.ServerRatio)).Add("server_source", r.ServerSource)
		}
		o.Add("prefix_reuse", ro)
	}
	return o
}

// writeSessionsCSV writes the session metrics of a graph plan's run (nothing for other
// runs) after two blank rows: their distributions under the distribution columns
// ("Session Metric", avg, …, std), then the counts, AIPerf's branch_stats and the prefix
// reuse as "Session Value" rows, named as in the JSON.
func writeSessionsCSV(cw *csv.Writer, ss *analyze.SessionSummary) {
	if ss == nil {
		return
	}
	cw.Write(nil)
	cw.Write(nil)
	cw.Write(append([]string{"Session Metric"}, csvStatKeys[:]...))
	for i := range ss.Results {
		r := &ss.Results[i]
		if r.Stats == nil {
			continue
		}
		row := []string{CSVName(r.Header, r.Unit)}
		for _, k := range csvStatKeys {
			row = append(row, csvNumber(r.Stats.Stat(k)))
		}
		cw.Write(row)
	}
	cw.Write(nil)
	cw.Write([]string{"Session Value", "Value"})
	b := ss.Branch
	for _, kv := range []struct {
		name string
		v    int64
	}{
		{"sessions", ss.Sessions}, {"sessions_completed", ss.Completed}, {"sessions_failed", ss.Failed},
		{"sessions_incomplete", ss.Incomplete}, {"skipped_requests", ss.Skipped},
		{"children_spawned", b.ChildrenSpawned}, {"children_completed", b.ChildrenCompleted},
		{"children_errored", b.ChildrenErrored}, {"children_truncated", b.ChildrenTruncated},
		{"children_delayed", b.ChildrenDelayed}, {"parents_suspended", b.ParentsSuspended},
		{"parents_resumed", b.ParentsResumed}, {"parents_failed_due_to_child_error", b.ParentsFailedDueToChildError},
		{"joins_suppressed", b.JoinsSuppressed},
	} {
		cw.Write([]string{kv.name, strconv.FormatInt(kv.v, 10)})
	}
	if r := ss.Reuse; r != nil {
		cw.Write([]string{"expected_reused_tokens", strconv.FormatInt(r.ExpectedTokens, 10)})
		cw.Write([]string{"prompt_tokens", strconv.FormatInt(r.PromptTokens, 10)})
		cw.Write([]string{"expected_hit_rate", csvNumber4(r.ExpectedRatio)})
		if r.ServerKnown {
			cw.Write([]string{"server_hit_rate", csvNumber4(r.ServerRatio)})
		}
	}
}

// branchStatsJSON is AIPerf's branch_stats block.
func branchStatsJSON(b analyze.BranchStats) *pyjson.Object {
	o := &pyjson.Object{}
	o.Add("children_spawned", b.ChildrenSpawned).Add("children_completed", b.ChildrenCompleted).
		Add("children_errored", b.ChildrenErrored).Add("children_truncated", b.ChildrenTruncated).
		Add("children_delayed", b.ChildrenDelayed).Add("parents_suspended", b.ParentsSuspended).
		Add("parents_resumed", b.ParentsResumed).Add("parents_failed_due_to_child_error", b.ParentsFailedDueToChildError).
		Add("joins_suppressed", b.JoinsSuppressed)
	return o
}
