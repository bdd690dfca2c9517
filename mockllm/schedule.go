package mockllm

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// The schedule log tells, for every inference request, the instants the
// server planned its events for and when it actually began writing each
// one, so that a client under test can compare what it measured with what
// the server did for the same request instead of with an absolute figure
// that a loaded machine moves (docs/mockllm.md, "Schedule log").

// ScheduleVersion is the schedule log's format version, in every record.
const ScheduleVersion = 1

// CorrelationHeader is the request header whose value the schedule log
// records (replay and AIPerf send a session id in it), so that a client
// can find its own requests.
const CorrelationHeader = "X-Correlation-ID"

// ScheduleRecord is one line of the schedule log: one inference request
// that passed validation, written just before the response's last write. Times
// are nanoseconds since ArrivalUnixNs on the server's monotonic clock.
type ScheduleRecord struct {
	Version int `json:"format_version"`
	// Seq is the request's arrival number (1, 2, ... over the inference
	// routes), the number faults and ids derive from.
	Seq uint64 `json:"seq"`
	// Endpoint is the API served, as in mockllm_requests_total.
	Endpoint string `json:"endpoint"`
	// Stream tells whether the answer was an event stream.
	Stream bool `json:"stream"`
	// CorrelationID is the request's X-Correlation-ID header ("" when absent).
	CorrelationID string `json:"correlation_id"`
	// ArrivalUnixNs is when the server began handling the request (its
	// head read), Unix nanoseconds.
	ArrivalUnixNs int64 `json:"arrival_unix_ns"`
	// StartNs is when the request's schedule started: 0, or the wait for a
	// batch slot under MaxBatch.
	StartNs int64 `json:"start_ns"`
	// DueNs are the instants the server waited for, in order: each token
	// event of a stream (or each image event), or the one instant of a
	// response body. A stall shows as a later instant; a stream cut short
	// has fewer entries than planned.
	DueNs []int64 `json:"due_ns"`
	// SentNs are when the server began writing each event it sent, after
	// its due instant: SentNs[j] >= DueNs[j]. A client cannot read event j
	// before SentNs[j]. Shorter than DueNs when the request ended before
	// writing (client gone, disconnect fault).
	SentNs []int64 `json:"sent_ns"`
	// Fault is the injected fault: none, error, stream_error, disconnect
	// or stall.
	Fault string `json:"fault"`
}

// ClockOffsetNs is how far the wall clock has moved against the monotonic clock between
// the schedule log's base (the package's start) and t: add it to a record's Unix instants to
// put them on the monotonic-to-wall mapping a process took at t. A client that converted
// its own monotonic clock at t (replay's workers do at a run's start) then compares its
// instants with the server's to the nanosecond, whatever NTP slewed in between.
func ClockOffsetNs(t time.Time) int64 {
	return (t.UnixNano() - monoBase.UnixNano()) - int64(t.Sub(monoBase))
}

// ReadSchedule reads a schedule log written through Options.ScheduleLog.
// It rejects a record of another format version, naming its line.
func ReadSchedule(r io.Reader) ([]ScheduleRecord, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 64<<20)
	var out []ScheduleRecord
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var rec ScheduleRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return out, fmt.Errorf("mockllm: schedule log line %d: %w", line, err)
		}
		if rec.Version != ScheduleVersion {
			return out, fmt.Errorf("mockllm: schedule log line %d: format_version %d, this reader knows %d", line, rec.Version, ScheduleVersion)
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("mockllm: schedule log: %w", err)
	}
	return out, nil
}

// scheduleLog serializes records onto Options.ScheduleLog, one write per line.
type scheduleLog struct {
	mu sync.Mutex
	w  io.Writer
}

// schedule is one request's record while it is served, for the schedule log
// and the request's span (tracing.go); nil when neither is on, and every
// method is then a no-op, so the serving code calls them unconditionally.
type schedule struct {
	log      *scheduleLog // nil: no schedule log
	srv      *Server
	span     *spanInfo // nil: no span
	arrival  int64     // monotonic, the package clock
	rec      ScheduleRecord
	admitted bool // started was called: the request got a batch slot
	written  bool
}

// newSchedule starts a record for request seq of r, or returns nil without a log or spans.
func (s *Server) newSchedule(api apiKind, seq uint64, stream bool, r *http.Request, arrival int64) *schedule {
	si := s.newSpanInfo(r)
	if s.slog == nil && si == nil {
		return nil
	}
	return &schedule{log: s.slog, srv: s, span: si, arrival: arrival, rec: ScheduleRecord{Version: ScheduleVersion, Seq: seq,
		Endpoint: apiNames[api], Stream: stream, CorrelationID: r.Header.Get(CorrelationHeader),
		ArrivalUnixNs: monoBase.UnixNano() + arrival, Fault: faultNames[faultNone],
		DueNs: []int64{}, SentNs: []int64{}}}
}

// describe gives the request's span what it says besides timing.
func (c *schedule) describe(id, model string, maxTokens, promptTokens, completionTokens int) {
	if c != nil && c.span != nil {
		c.span.id, c.span.model = id, model
		c.span.maxTokens, c.span.promptTokens, c.span.completionTokens = maxTokens, promptTokens, completionTokens
	}
}

// started notes the instant the schedule starts (admission).
func (c *schedule) started(start int64) {
	if c != nil {
		c.rec.StartNs = start - c.arrival
		c.admitted = true
	}
}

// due notes the next instant the server waits for.
func (c *schedule) due(t int64) {
	if c != nil {
		c.rec.DueNs = append(c.rec.DueNs, t-c.arrival)
	}
}

// sending notes that the server is about to write the event due last.
func (c *schedule) sending() {
	if c != nil {
		c.rec.SentNs = append(c.rec.SentNs, monoNow()-c.arrival)
	}
}

// fault names the injected fault.
func (c *schedule) fault(f faultKind) {
	if c != nil {
		c.rec.Fault = faultNames[f]
	}
}

// finish writes the record as one line, once: the serving code calls it
// just before the write that completes a response a client can see as
// complete without the handler returning (a body with Content-Length, an
// injected 500, a dropped connection), and in a deferred call otherwise,
// so that a client that has its whole response finds its record in the
// log. A write error is kept by the writer the command gives (cmd/mockllm
// reports it at exit).
func (c *schedule) finish() {
	if c == nil || c.written {
		return
	}
	c.written = true
	if c.span != nil && c.admitted {
		c.srv.emitSpan(c.span, &c.rec, c.arrival)
	}
	if c.log == nil {
		return
	}
	b, err := json.Marshal(&c.rec)
	if err != nil {
		return // cannot happen: plain fields
	}
	b = append(b, '\n')
	c.log.mu.Lock()
	_, _ = c.log.w.Write(b)
	c.log.mu.Unlock()
}
