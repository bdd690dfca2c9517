package output

import (
	"fmt"

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
	return []string{fmt.Sprintf("Server traces: %d spans read from %s (%s): %d matched to this run's requests, %d unmatched; %d valid requests joined, %d without a span",
		t.Spans, t.Source, t.Layout, t.Matched, t.Unmatched, t.Joined, t.WithoutSpan)}
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
	return o
}
