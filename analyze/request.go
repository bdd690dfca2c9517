package analyze

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/llmbench/llmbench/analyze/eventmemo"
	"github.com/llmbench/llmbench/analyze/record"
	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
)

// requestError says why a request does not count as successful; requestMetrics is what
// analyze derives from one request record and its plan record (package record).
type (
	requestError   = record.Error
	requestMetrics = record.Metrics
)

// set sets m's value of metric id.
func set(m *requestMetrics, id MetricID, v float64) {
	m.Values[id] = v
	m.Has[id] = true
}

// chunkSpan is one content event's read and text: the delta's content [c0, c1) and
// reasoning [r0, r1).
type chunkSpan struct {
	read           int32
	c0, c1, r0, r1 int32
}

// requestConfig is what every request of a run shares.
type requestConfig struct {
	ep     *endpoint.Endpoint
	tokens bool // the endpoint produces tokens
	tok    TokenCounter
	server bool // --use-server-token-count
	slos   []SLO
	// reg holds the metrics computed (nil: the built-ins); media gives a plan record's media
	// entry (nil: no request has media).
	reg   *Registry
	media func(*mmapds.Record) *mmapds.MediaEntry
	// run, worker and wall identify the log: its run, worker and wall-clock zero.
	run, worker int
	wall        int64
}

// processor turns raw request records into requestMetrics. It reuses its buffers, so one
// processor serves one goroutine.
type processor struct {
	cfg   requestConfig
	reg   *Registry
	f     facts
	rv    RequestView // what user metrics' evaluators see (view)
	sc    endpoint.SSEScanner
	d     endpoint.Delta
	rawEP *endpoint.Endpoint // parses error events of any API
	memo  eventmemo.Template
	// noMemo parses every event in full (tests compare both paths).
	noMemo bool
	// times are the content events' arrivals; spans, index for index, the read that
	// completed each and its text in the delta.
	times []int64
	spans []chunkSpan
	m     requestMetrics
	// Per-request parse state.
	parseErr   error
	streamErr  string // an SSE error event
	bodyErr    string // an error object in a whole 2xx body
	lastDataNs int64
	ttfoNs     int64
	curRead    int32
	curCount   int32
}

func newProcessor(cfg requestConfig) *processor {
	raw, _ := endpoint.Lookup("raw")
	p := &processor{cfg: cfg, rawEP: raw, reg: cfg.reg.or()}
	n := len(p.reg.defs)
	p.m.Values, p.m.Has = make([]float64, n), make([]bool, n)
	return p
}

// value returns the current request's value of metric id (an alias: of its target) in
// display units.
func (p *processor) value(id MetricID) (float64, bool) {
	d := p.reg.def(id)
	src := d.source()
	if !p.m.Has[src] {
		return 0, false
	}
	return p.m.Values[src] / p.reg.def(src).div, true
}

var doneData = []byte("[DONE]")

// compute derives the metrics of request q, planned as rec with a body of bodyLen bytes. The
// result aliases the processor and is valid until the next call.
func (p *processor) compute(q *rawlog.Request, rec *mmapds.Record, bodyLen int) *requestMetrics {
	m := &p.m
	values, has := m.Values, m.Has
	clear(values)
	clear(has)
	*m = requestMetrics{ICL: m.ICL[:0], EPR: m.EPR[:0], Values: values, Has: has}
	p.times, p.spans = p.times[:0], p.spans[:0]
	p.parseErr, p.streamErr, p.bodyErr, p.lastDataNs, p.ttfoNs = nil, "", "", -1, -1
	p.curCount = 0
	p.d.Reset()

	m.Index, m.Phase, m.Session, m.Turn = q.Index, rec.Phase, rec.Session, rec.Turn
	m.Run, m.Worker, m.StartUnixNs = p.cfg.run, p.cfg.worker, p.cfg.wall
	m.Outcome, m.Status, m.ConnReused = q.Outcome, q.Status, q.ConnReused
	m.Reconnects, m.ServerClosed = q.Reconnects, q.ServerClosed
	m.IntendedNs, m.ReadyNs, m.SendNs, m.HeaderNs, m.EndNs = q.IntendedNs, q.ReadyNs, q.WriteStartNs, q.HeaderNs, q.EndNs
	m.FirstContentNs, m.LastContentNs = -1, -1
	m.CancelAfterNs = rec.CancelAfterNs
	m.RequestedOSL = int(rec.OSL)
	m.Reads = len(q.ReadNs)

	m.Sent = q.Outcome != rawlog.OutcomeNotSent && q.WriteStartNs >= 0
	if q.Outcome == rawlog.OutcomeNotSent && (strings.Contains(q.Err, "duration elapsed") || q.Err == rawlog.ThinnedErr) {
		// The plan's duration ran out before this request's turn, or adaptive scale thinned
		// the arrival out: it was never due.
		m.NotDue = true
		return m
	}
	if q.Outcome == rawlog.OutcomeCompleted && m.Sent {
		p.parseBody(q)
	}
	// What arrived, valid or not: a cut stream reports the content events it did carry.
	m.ContentEvents = len(p.times)
	p.classify(q)

	f := &p.f
	*f = facts{q: q, rec: rec, bodyLen: bodyLen, m: m, started: q.Outcome != rawlog.OutcomeNotSent,
		tokens: p.cfg.tokens, server: p.cfg.server, times: p.times, ttfoNs: p.ttfoNs, lastDataNs: p.lastDataNs,
		isl: float64(rec.ISL)}
	if p.cfg.media != nil {
		f.media = p.cfg.media(rec)
	}
	if m.Valid {
		p.settle(q)
	}
	// Every metric of the registry, in id order: the built-ins' formulas, then the user
	// metrics' evaluators.
	for _, id := range p.reg.computed {
		if v, ok := p.reg.perRequest[id](f); ok {
			set(m, id, v)
		}
	}
	if len(p.reg.user) > 0 {
		p.evalUser()
	}
	if m.Valid && p.cfg.slos != nil {
		m.Good = true
		for _, s := range p.cfg.slos {
			if !p.meets(s) {
				m.Good = false
				break
			}
		}
	}
	return m
}

// meets reports whether the current request meets SLO s: its compiled condition, or its
// metric's value against the threshold.
func (p *processor) meets(s SLO) bool {
	if s.Met != nil {
		met, ok := s.Met(p.view())
		return ok && met
	}
	v, ok := p.value(s.Metric.ID)
	return ok && s.met(v)
}

// settle establishes the facts of a valid request that its metrics are computed from: where
// its latency ends, its token counts, its usage, and the gaps between its content events.
func (p *processor) settle(q *rawlog.Request) {
	m, f, cfg := &p.m, &p.f, &p.cfg
	m.Usage = p.d.Usage
	nc := len(p.times)
	// A negative count is removed before anything reads it; an implausible one marked.
	m.BadUsage = checkUsage(&m.Usage, cfg.tokens, len(p.d.Content)+len(p.d.Reasoning), nc)
	f.usage, f.items = m.Usage, p.d.Items
	u := &m.Usage
	// Request latency ends at the last content event; for a body without content (non-token
	// endpoints) at the last read.
	f.end = p.readTime(q, len(q.ReadNs)-1)
	if nc > 0 {
		m.FirstContentNs, m.LastContentNs = p.times[0], p.times[nc-1]
		f.end = p.times[nc-1]
	}
	f.latency = float64(f.end - q.WriteStartNs)
	if !cfg.tokens {
		return
	}
	// ISL comes from the plan (verified with its tokenizer), OSL from the tokenizer over the
	// output text; --use-server-token-count takes both from usage.
	f.haveOSL = true
	if cfg.server {
		if u.Has&endpoint.UsagePrompt != 0 {
			f.isl = float64(u.PromptTokens)
		}
		if u.Has&endpoint.UsageCompletion != 0 {
			f.osl = u.CompletionTokens
			if u.Has&endpoint.UsageReasoning != 0 {
				f.reasonTok = u.ReasoningTokens
			}
			// Visible output is what is not reasoning (none below zero; a difference past the
			// int range, from counts a server made up, saturates).
			switch f.outTok = f.osl - f.reasonTok; {
			case f.reasonTok > f.osl:
				f.outTok = 0
			case f.outTok < 0:
				f.outTok = math.MaxInt
			}
		} else {
			f.haveOSL = false
		}
	} else {
		f.outTok = cfg.tok.Count(string(p.d.Content))
		f.reasonTok = cfg.tok.Count(string(p.d.Reasoning))
		f.osl = f.outTok + f.reasonTok
	}
	if m.Streamed && nc >= 2 {
		for i := 1; i < nc; i++ {
			m.ICL = append(m.ICL, p.times[i]-p.times[i-1])
		}
	}
}

// readTime is the instant read i returned; reads past the recorded ones fall back to the end.
func (p *processor) readTime(q *rawlog.Request, i int) int64 {
	if i >= 0 && i < len(q.ReadNs) {
		return q.ReadNs[i]
	}
	return q.EndNs
}

// parseBody splits the body into SSE events (each timed by the read that completed it) or
// parses it whole, and records content events.
func (p *processor) parseBody(q *rawlog.Request) {
	m := &p.m
	body := q.Body
	// The whole body, not a fixed head: an event stream may open with any number of blank
	// lines (DetectFormat reads only up to the first other byte).
	switch endpoint.DetectFormat("", body) {
	case endpoint.FormatSSE:
		m.Streamed = true
		p.sc.Reset()
		prev := uint32(0)
		for i, end := range q.ReadEnd {
			if end > prev {
				p.sc.Feed(body[prev:end], i)
				prev = end
			}
			for {
				ev, ok := p.sc.Next()
				if !ok {
					break
				}
				p.event(q, ev)
			}
		}
		if int(prev) < len(body) {
			// Bytes no read accounts for (a writer bug): time them at the last read.
			p.sc.Feed(body[prev:], len(q.ReadNs)-1)
		}
		for {
			ev, ok := p.sc.Flush()
			if !ok {
				break
			}
			p.event(q, ev)
		}
		p.flushRead()
	case endpoint.FormatJSON:
		m.Events = 1
		t := p.readTime(q, len(q.ReadNs)-1)
		c0, r0 := len(p.d.Content), len(p.d.Reasoning)
		if err := p.cfg.ep.ParseEvent(body, &p.d); err != nil {
			p.parseErr = err
			return
		}
		p.lastDataNs = t
		if p.d.ErrorMsg != "" {
			p.bodyErr = p.d.ErrorMsg
			return
		}
		if len(p.d.Content) > c0 || len(p.d.Reasoning) > r0 || !p.cfg.tokens {
			p.contentEvent(t, int32(len(q.ReadNs)-1), c0, r0)
			p.flushRead()
			if len(p.d.Content) > c0 {
				p.ttfoNs = t
			}
		}
	default:
		if len(bytes.TrimSpace(body)) > 0 {
			p.parseErr = &endpointError{endpoint: p.cfg.ep.Name, err: errUnrecognisedBody}
		}
	}
}

type bodyError string

func (e bodyError) Error() string { return string(e) }

const errUnrecognisedBody = bodyError("response body is neither JSON nor an event stream")

// endpointError names the endpoint type in a body error, as endpoint.ParseError does, so
// every invalid_response message says which API's shape was expected.
type endpointError struct {
	endpoint string
	err      error
}

func (e *endpointError) Error() string { return "endpoint " + e.endpoint + ": " + e.err.Error() }
func (e *endpointError) Unwrap() error { return e.err }

// event handles one SSE event.
func (p *processor) event(q *rawlog.Request, ev endpoint.Event) {
	m := &p.m
	m.Events++
	t := p.readTime(q, ev.ReadIndex)
	if string(ev.Name) == "error" {
		// AIPerf turns an SSE error event into a failed request (code 502).
		if p.streamErr == "" {
			p.streamErr = p.errorText(ev.Data)
		}
		return
	}
	if bytes.Equal(bytes.TrimSpace(ev.Data), doneData) {
		p.d.Done = true
		return
	}
	if text, ok := p.memo.Match(ev.Name, ev.Data); ok && !p.noMemo {
		// Same layout as an event already parsed (package eventmemo): only the text differs.
		c0, r0 := len(p.d.Content), len(p.d.Reasoning)
		p.memo.Apply(&p.d, text)
		if !p.memo.Reasoning() && p.ttfoNs < 0 {
			p.ttfoNs = t
		}
		p.lastDataNs = t
		p.contentEvent(t, int32(ev.ReadIndex), c0, r0)
		return
	}
	c0, r0 := len(p.d.Content), len(p.d.Reasoning)
	e0, done0, usage0, items0 := p.d.ErrorMsg, p.d.Done, p.d.Usage, p.d.Items
	if err := p.cfg.ep.ParseEvent(ev.Data, &p.d); err != nil {
		if p.parseErr == nil {
			p.parseErr = err
		}
		return
	}
	if p.d.ErrorMsg != e0 && p.streamErr == "" {
		p.streamErr = p.d.ErrorMsg
	}
	if !p.noMemo && p.d.ErrorMsg == e0 && p.d.Done == done0 && p.d.Usage == usage0 && p.d.Items == items0 {
		switch {
		case len(p.d.Content) > c0 && len(p.d.Reasoning) == r0:
			p.memo.Learn(p.cfg.ep, ev.Name, ev.Data, p.d.Content[c0:], false)
		case len(p.d.Reasoning) > r0 && len(p.d.Content) == c0:
			p.memo.Learn(p.cfg.ep, ev.Name, ev.Data, p.d.Reasoning[r0:], true)
		}
	}
	p.lastDataNs = t
	if len(p.d.Content) == c0 && len(p.d.Reasoning) == r0 && p.cfg.tokens {
		return // role-only, empty, usage-only: not a content response (AIPerf §5.11)
	}
	if len(p.d.Content) > c0 && p.ttfoNs < 0 {
		p.ttfoNs = t
	}
	p.contentEvent(t, int32(ev.ReadIndex), c0, r0)
}

// contentEvent records a content event that arrived at t, completed by read r, whose text
// is the delta's content and reasoning from c0 and r0 on.
func (p *processor) contentEvent(t int64, r int32, c0, r0 int) {
	p.times = append(p.times, t)
	p.spans = append(p.spans, chunkSpan{read: r, c0: int32(c0), c1: int32(len(p.d.Content)), r0: int32(r0), r1: int32(len(p.d.Reasoning))})
	p.countRead(r)
}

// countRead records that a content event completed in read r: EPR gets one entry per read
// that completed content events, holding how many.
func (p *processor) countRead(r int32) {
	if p.curCount > 0 && r == p.curRead {
		p.curCount++
		p.m.SameReadGaps++
		return
	}
	p.flushRead()
	p.curRead, p.curCount = r, 1
}

func (p *processor) flushRead() {
	if p.curCount > 0 {
		p.m.EPR = append(p.m.EPR, p.curCount)
	}
	p.curCount = 0
}

// errorText returns an error event's message: the JSON "message" when there is one.
func (p *processor) errorText(data []byte) string {
	var d endpoint.Delta
	if p.rawEP != nil && p.rawEP.ParseEvent(data, &d) == nil && d.ErrorMsg != "" {
		return d.ErrorMsg
	}
	return truncateText(data, 200)
}

// truncateText returns b as valid UTF-8 text of at most n bytes.
func truncateText(b []byte, n int) string {
	b = bytes.TrimSpace(b)
	if len(b) > n {
		b = b[:n]
		for len(b) > 0 && !utf8.Valid(b) {
			b = b[:len(b)-1]
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// classify decides validity and the error kind.
func (p *processor) classify(q *rawlog.Request) {
	m := &p.m
	fail := func(kind string, code int, msg string) {
		m.Err = &requestError{Kind: kind, Code: code, Message: msg}
	}
	switch q.Outcome {
	case rawlog.OutcomeCompleted:
		switch {
		case !m.Sent:
			fail("invalid_record", 0, "completed request without a send time")
		case q.Status < 200 || q.Status > 299:
			msg := p.d.ErrorMsg
			if msg == "" {
				msg = truncateText(q.Body, 200)
			}
			fail("http_"+strconv.Itoa(q.Status), q.Status, msg)
		case p.streamErr != "":
			fail("stream_error", 502, p.streamErr)
		case p.bodyErr != "":
			fail("error_response", 502, p.bodyErr)
		case m.Streamed && p.d.EndMarker != "" && !p.d.Done:
			// Closed before its end marker: whatever came is not the whole response.
			fail("truncated_stream", 0, "endpoint "+p.cfg.ep.Name+": the event stream ended without its end marker ("+p.d.EndMarker+")")
		case p.parseErr != nil:
			fail("invalid_response", 0, p.parseErr.Error())
		case len(p.times) == 0:
			fail("no_content", 0, "endpoint "+p.cfg.ep.Name+": response has no content")
		case !p.cfg.tokens && p.d.Items == 0:
			// Embeddings, rankings, images: an empty list answers nothing that was asked.
			fail("no_content", 0, "endpoint "+p.cfg.ep.Name+": response has no items (an empty list of embeddings, rankings or images)")
		case len(p.times) > 0 && p.times[0] < q.WriteStartNs:
			fail("invalid_timestamps", 0, "response read before the request was sent")
		}
	case rawlog.OutcomeFailed:
		kind := transportKind(q.Err)
		fail(kind, 0, q.Err)
	case rawlog.OutcomeCancelled:
		fail("cancelled", 499, cancelMessage(q))
	case rawlog.OutcomeNotSent:
		fail("not_sent", 0, nonEmpty(q.Err, "not sent: the run was interrupted first"))
	case rawlog.OutcomeAborted:
		fail("aborted", 0, nonEmpty(q.Err, "cut off: the run was interrupted"))
	default:
		fail("invalid_record", 0, "unknown outcome "+strconv.Itoa(int(q.Outcome)))
	}
	m.Valid = m.Err == nil
}

func cancelMessage(q *rawlog.Request) string {
	if q.Err != "" {
		return q.Err
	}
	if q.EndNs >= 0 && q.WriteStartNs >= 0 {
		return "Request was cancelled after " + strconv.FormatFloat(float64(q.EndNs-q.WriteStartNs)/1e9, 'f', 3, 64) + " seconds"
	}
	return "Request was cancelled"
}

func nonEmpty(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

// kindClientError is the error kind of a request the client itself could not make (out of
// file descriptors, local ports, socket buffers): it measures the client, not the server.
const kindClientError = "client_error"

// transportKind classifies a failed request by its error text. The client's own failures
// (replay's "client error: " texts, and the same system errors in logs written before replay
// marked them) are client_error, never a server's transport error.
func transportKind(err string) string {
	e := strings.ToLower(err)
	switch {
	case strings.HasPrefix(e, "response too large"):
		return "response_too_large"
	case strings.HasPrefix(e, "client error: ") || strings.Contains(e, "too many open files") ||
		strings.Contains(e, "cannot assign requested address") || strings.Contains(e, "no buffer space available"):
		return kindClientError
	case strings.Contains(e, "timeout") || strings.Contains(e, "deadline exceeded") || strings.Contains(e, "timed out"):
		return "timeout"
	case strings.Contains(e, "connection reset"):
		return "connection_reset"
	case strings.Contains(e, "connection refused"):
		return "connection_refused"
	case strings.Contains(e, "broken pipe"):
		return "broken_pipe"
	case strings.Contains(e, "eof"):
		return "eof"
	}
	return "transport_error"
}
