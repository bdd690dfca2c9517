package analyze

// Joined metrics: per-request values that come from outside the run's raw logs (a server's
// own trace spans, joined to the requests by analyze/servertime), computed like user
// metrics but reported as the joining package's definitions, not the user's.

// OriginServer metrics are the server's own per-request phases, from its trace spans.
const OriginServer = OriginUser + 1

// JoinedMetric is a metric whose values a package joins to the requests from outside the
// raw logs (Registry.RegisterJoined).
type JoinedMetric struct {
	UserMetric
	// Var is the metric's short name in expressions and the Parquet column of that name
	// (MetricDef.Var); "" for none.
	Var string
	// Header is its display name ("" : its tag); Console shows it in the console table
	// when it has values, at Order (DisplayOrder: TTFT is 100, request latency 300).
	Header  string
	Console bool
	Order   int
}

// RegisterJoined adds a joined metric: evaluated as a user metric is (m.Eval, for every
// valid profile request), with Origin OriginServer; it is not a user metric, so the exports
// do not note its skipped requests and a selection folder does not name it.
func (r *Registry) RegisterJoined(m JoinedMetric) (MetricDef, error) {
	d, err := r.Register(m.UserMetric)
	if err != nil {
		return d, err
	}
	p := &r.defs[d.ID]
	p.User, p.Origin, p.Var, p.Console, p.Expression = false, OriginServer, m.Var, m.Console, ""
	if m.Header != "" {
		p.Header = m.Header
	}
	if m.Order != 0 {
		p.order = m.Order
	}
	return *p, nil
}

// TraceJoin counts what joining a server's trace spans to the run's requests found
// (Summary.ServerTraces).
type TraceJoin struct {
	// Source is the traces file read ("" when none was: the run carried trace context but
	// no spans were given); Layout what it held (servertrace's layouts).
	Source, Layout string
	// Spans are the spans read; Matched those whose trace id is one a request of the run
	// carried, Unmatched the others.
	Spans, Matched, Unmatched int64
	// Joined are the valid profile requests a span was joined to; WithoutSpan those none was.
	Joined, WithoutSpan int64
	// Split sums the TTFT of the joined requests whose span gives the server's TTFT and
	// queue (Split.Requests of them), split: queue + prefill + other server time + outside
	// the server = TTFT, request by request.
	Split TTFTSplit
}

// TTFTSplit is a sum of requests' TTFT and of its parts, in ns.
type TTFTSplit struct {
	Requests                                       int64
	TTFTNs, QueueNs, PrefillNs, OtherNs, OutsideNs int64
}

// SendUnixNs is the instant the request's write began on the client's wall clock (Unix
// ns), -1 when it was not sent.
func (v *RequestView) SendUnixNs() int64 {
	if v.p.m.SendNs < 0 {
		return -1
	}
	return v.p.m.StartUnixNs + v.p.m.SendNs
}
