package output

import (
	"fmt"
	"strings"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/internal/pyjson"
)

// serverTraceLines is the console's line on the server spans joined to the requests
// (analyze.TraceJoin), none when the run has no trace context and no traces file.
func serverTraceLines(s *analyze.Summary) []string {
	t := s.ServerTraces
	if t == nil {
		return nil
	}
	if t.Source == "" {
		return []string{fmt.Sprintf("Server traces: none given (the requests carried traceparents; %d valid requests without a span: analyze --server-traces FILE joins a collector's spans)", t.WithoutSpan)}
	}
	out := []string{fmt.Sprintf("Server traces: %d spans read from %s (%s): %d matched to this run's requests, %d unmatched; %d valid requests joined, %d without a span",
		t.Spans, t.Source, t.Layout, t.Matched, t.Unmatched, t.Joined, t.WithoutSpan)}
	if sp := t.Split; sp.Requests > 0 && sp.TTFTNs > 0 {
		parts := splitParts(sp)
		top := parts[0]
		for _, p := range parts[1:] {
			if p.ns > top.ns {
				top = p
			}
		}
		line := fmt.Sprintf("TTFT split over %d joined requests:", sp.Requests)
		for i, p := range parts {
			sep := ","
			if i == 0 {
				sep = ""
			}
			line += fmt.Sprintf("%s %s %s%%", sep, p.name, analyze.FormatNumber(float64(p.ns)/float64(sp.TTFTNs)*100))
		}
		out = append(out, line+" of TTFT; "+top.name+" dominates")
	}
	return out
}

type splitPart struct {
	name string
	ns   int64
}

// splitParts are the TTFT split's parts in the order they happen to a request.
func splitParts(sp analyze.TTFTSplit) []splitPart {
	return []splitPart{{"queue", sp.QueueNs}, {"prefill", sp.PrefillNs}, {"other server", sp.OtherNs}, {"outside the server", sp.OutsideNs}}
}

// serverTracesJSON is llmbench.server_traces in the JSON export, nil when the run has none.
func serverTracesJSON(s *analyze.Summary) *pyjson.Object {
	t := s.ServerTraces
	if t == nil {
		return nil
	}
	o := &pyjson.Object{}
	o.Add("source", t.Source).Add("layout", t.Layout).Add("spans_received", t.Spans).Add("spans_matched", t.Matched).
		Add("spans_unmatched", t.Unmatched).Add("requests_joined", t.Joined).Add("requests_without_span", t.WithoutSpan)
	if sp := t.Split; sp.Requests > 0 {
		split := (&pyjson.Object{}).Add("requests", sp.Requests).Add("ttft_ms", pyjson.Float(float64(sp.TTFTNs)/1e6))
		for _, p := range splitParts(sp) {
			split.Add(strings.ReplaceAll(p.name, " ", "_")+"_ms", pyjson.Float(float64(p.ns)/1e6))
		}
		o.Add("ttft_split_sum", split)
	}
	return o
}
