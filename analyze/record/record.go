// Package record is one request as analyze derives it: Metrics (its outcome, times and
// the record metrics' values, by analyze's MetricID) and its profile_export.jsonl line
// (AppendJSONL: AIPerf's record shape, docs/metrics.md). analyze computes a Metrics
// per request while reading the logs and streams each line through AppendJSONL; the
// columns written (which metrics, their encoded keys, units and scale) come from analyze's
// registry as Columns, so this package knows no metric by name.
//
// record imports endpoint (usage), rawlog (outcome, the raw request for trace_data),
// mmapds (phase, the plan's graph), redact and internal/{jsonwire,pyjson}; it must not
// import analyze or anything above it.
package record

import (
	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
)

// Error says why a request does not count as successful.
type Error struct {
	// Kind is the error class: http_<status>, timeout, connection_reset, connection_refused,
	// eof, broken_pipe, transport_error, client_error, response_too_large, stream_error,
	// truncated_stream, invalid_response, no_content, invalid_timestamps, cancelled,
	// not_sent, aborted or lost.
	Kind string
	// Code is the HTTP status, or the code AIPerf uses for the class (499 cancelled, 502
	// stream error); 0 when there is none.
	Code int
	// Message is the server's error message or the transport error text.
	Message string
}

// Metrics is what analyze derives from one request record and its plan record. Times are
// nanoseconds on the run's monotonic clock; -1 means "did not happen".
type Metrics struct {
	Index         uint32
	Run, Worker   int
	Phase         mmapds.Phase
	Session, Turn uint32
	Outcome       rawlog.Outcome
	Status        int
	ConnReused    bool
	Valid         bool
	Err           *Error
	Sent          bool
	// NotDue marks a request the plan's duration ended before it was due: not part of the
	// benchmark at all.
	NotDue         bool
	StartUnixNs    int64 // the run's wall-clock zero
	IntendedNs     int64
	ReadyNs        int64
	SendNs         int64
	HeaderNs       int64
	EndNs          int64
	FirstContentNs int64
	LastContentNs  int64
	CancelAfterNs  int64
	RequestedOSL   int
	Reads          int
	Events         int // SSE events (or 1 for a whole JSON body)
	ContentEvents  int
	SameReadGaps   int // inter-chunk gaps between events completed by the same read (0 ns)
	Streamed       bool
	Good           bool
	Usage          endpoint.Usage
	// BadUsage marks the server's impossible token counts (analyze/usage.go): usageNegative (the
	// fields are removed from Usage), usageImplausible.
	BadUsage uint8
	// Values holds the record metrics in stored units (ns, tokens, rates), by MetricID of the
	// processor's registry (analyze); Has says which are set. ICL, EventsPerRead and
	// WorkerCPUUtilization are lists, not single values.
	Values []float64
	Has    []bool
	// ICL are the inter-chunk gaps in ns; EPR the content events completed by each read
	// that completed at least one. Both alias the processor's buffers.
	ICL []int64
	EPR []int32
	// Group is the request's group (analyze.Options.GroupBy) when Grouped.
	Group   string
	Grouped bool

	// Reconnects and ServerClosed are the raw record's: the request was sent again on a new
	// connection after the server closed the reused one, and it went on a new connection
	// because of the server.
	Reconnects   int
	ServerClosed bool
}
