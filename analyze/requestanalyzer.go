package analyze

import (
	"errors"
	"fmt"
	"strings"

	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
)

// One request at a time: the record metrics of a single request computed by the code Analyze
// runs over a whole run (the same processor, the same definitions), for the commands that
// see requests one by one: chat prints each turn's, and the live OpenTelemetry export pushes
// each finished request's while the run lasts.

// RequestOptions configure a RequestAnalyzer.
type RequestOptions struct {
	// Endpoint is the API the requests were sent to; it parses their responses.
	Endpoint *endpoint.Endpoint
	// Tokenizer counts the output and reasoning tokens of the response text. It may be nil
	// only with UseServerTokenCount or an endpoint that produces no tokens.
	Tokenizer TokenCounter
	// UseServerTokenCount takes the token counts from the server's usage fields, as
	// Options.UseServerTokenCount does.
	UseServerTokenCount bool
	// Goodput are SLOs a request is judged good against (RequestMetrics.Good).
	Goodput []SLO
	// Metrics holds the metrics computed, user metrics included (nil: the built-ins).
	Metrics *Registry
}

// RequestAnalyzer computes the metrics of one request record at a time. It reuses its buffers:
// one analyzer serves one goroutine.
type RequestAnalyzer struct {
	p *processor
}

// NewRequestAnalyzer returns an analyzer with the options o.
func NewRequestAnalyzer(o RequestOptions) (*RequestAnalyzer, error) {
	if o.Endpoint == nil {
		return nil, errors.New("analyze: request analyzer: no endpoint")
	}
	if o.Tokenizer == nil && !o.UseServerTokenCount && o.Endpoint.ProducesTokens {
		return nil, errors.New("analyze: request analyzer: no tokenizer to count output tokens (or use the server's counts)")
	}
	return &RequestAnalyzer{p: newProcessor(requestConfig{ep: o.Endpoint, tokens: o.Endpoint.ProducesTokens,
		tok: o.Tokenizer, server: o.UseServerTokenCount, slos: o.Goodput, reg: o.Metrics})}, nil
}

// Analyze computes the metrics of request q, planned as rec (its ISL, requested OSL, phase and
// cancellation; Index and body length from rec.BodyLen). The result aliases the analyzer and
// is valid until the next call.
func (a *RequestAnalyzer) Analyze(q *rawlog.Request, rec *mmapds.Record) RequestMetrics {
	return RequestMetrics{p: a.p, m: a.p.compute(q, rec, int(rec.BodyLen)), content: a.p.d.Content, reasoning: a.p.d.Reasoning}
}

// RequestMetrics is one request's metrics, as RequestAnalyzer.Analyze computed them.
type RequestMetrics struct {
	p                  *processor
	m                  *requestMetrics
	content, reasoning []byte
}

// Valid tells whether the request counts as successful (AIPerf's valid record).
func (r RequestMetrics) Valid() bool { return r.m.Valid }

// Error is why the request does not count, "kind: message" (kind as in the exports'
// error_summary); "" for a valid request.
func (r RequestMetrics) Error() string {
	if r.m.Err == nil {
		return ""
	}
	if r.m.Err.Message == "" {
		return r.m.Err.Kind
	}
	return r.m.Err.Kind + ": " + r.m.Err.Message
}

// ErrorKind is the error class of a request that does not count (http_500, timeout, ...),
// "" for a valid one.
func (r RequestMetrics) ErrorKind() string {
	if r.m.Err == nil {
		return ""
	}
	return r.m.Err.Kind
}

// Status is the response's HTTP status, 0 when none arrived.
func (r RequestMetrics) Status() int { return r.m.Status }

// Value is record metric id in display units (milliseconds, tokens, tokens/s), as the exports
// show it; false when the request has no such value.
func (r RequestMetrics) Value(id MetricID) (float64, bool) {
	if id < 0 || int(id) >= len(r.m.Has) {
		return 0, false
	}
	return r.p.value(id)
}

// Stored is record metric id in stored units (nanoseconds for times); false when the request
// has no such value.
func (r RequestMetrics) Stored(id MetricID) (float64, bool) {
	if id < 0 || int(id) >= len(r.m.Has) {
		return 0, false
	}
	src := r.p.reg.def(id).source()
	if !r.m.Has[src] {
		return 0, false
	}
	return r.m.Values[src], true
}

// Good tells whether a valid request met every SLO of RequestOptions.Goodput.
func (r RequestMetrics) Good() bool { return r.m.Good }

// Usage is the server's usage fields as the response carried them.
func (r RequestMetrics) Usage() endpoint.Usage { return r.m.Usage }

// Content is the response's visible output text.
func (r RequestMetrics) Content() []byte { return r.content }

// Reasoning is the response's reasoning text.
func (r RequestMetrics) Reasoning() []byte { return r.reasoning }

// UsageProblem says what was impossible in the server's token counts (usage.go): negative
// counts (removed from Usage), a completion count beyond what the text could encode; ""
// when nothing was.
func (r RequestMetrics) UsageProblem() string {
	var out []string
	if r.m.BadUsage&usageNegative != 0 {
		out = append(out, "negative token counts (treated as absent)")
	}
	if r.m.BadUsage&usageImplausible != 0 {
		out = append(out, fmt.Sprintf("%d completion tokens for %d bytes of text in %d content events, more than the text could encode",
			r.m.Usage.CompletionTokens, len(r.content)+len(r.reasoning), r.m.ContentEvents))
	}
	return strings.Join(out, "; ")
}

// ServerTokenCount reports whether the token counts are the server's usage
// (RequestOptions.UseServerTokenCount).
func (r RequestMetrics) ServerTokenCount() bool { return r.p != nil && r.p.cfg.server }
