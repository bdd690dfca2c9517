package record

import (
	"math"
	"strconv"

	"github.com/llmbench/llmbench/internal/jsonwire"
	"github.com/llmbench/llmbench/internal/pyjson"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/redact"
)

// AppendJSONL appends one profile_export.jsonl line for m: AIPerf's record shape
// ({"metadata", "metrics", "error"}), metric values in display units with their unit, the
// inter-chunk gaps as a list. Fields AIPerf does not have are added to metadata, which
// AIPerf's record model accepts as extras. correlated says the run sent the session id in
// a header (SessionHeaderSent): it is then the record's x_correlation_id. replay sends no
// X-Request-ID, so x_request_id is null.
//
// o adds trace_data (AIPerf's TraceDataExport names, from q, the raw record; nil when no
// log holds the request).
func AppendJSONL(b []byte, m *Metrics, q *rawlog.Request, o *Options) []byte {
	correlated := o.Correlated
	wall := m.StartUnixNs
	at := func(b []byte, t int64) []byte {
		if t < 0 {
			return append(b, "null"...)
		}
		return strconv.AppendInt(b, wall+t, 10)
	}
	b = append(b, `{"metadata":{"session_num":`...)
	b = strconv.AppendUint(b, uint64(m.Session), 10)
	b = append(b, `,"x_request_id":null,"x_correlation_id":`...)
	if correlated {
		b = append(b, '"')
		b = strconv.AppendUint(b, uint64(m.Session), 10)
		b = append(b, '"')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"conversation_id":"`...)
	b = strconv.AppendUint(b, uint64(m.Session), 10)
	b = append(b, `","turn_index":`...)
	b = strconv.AppendUint(b, uint64(m.Turn), 10)
	b = append(b, `,"credit_issued_ns":`...)
	b = at(b, m.IntendedNs)
	b = append(b, `,"request_start_ns":`...)
	b = at(b, m.SendNs)
	b = append(b, `,"request_ack_ns":`...)
	b = at(b, m.HeaderNs)
	b = append(b, `,"request_end_ns":`...)
	b = at(b, m.EndNs)
	b = append(b, `,"worker_id":`...)
	if m.Worker < 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, `"worker_`...)
		b = appendPadded(b, m.Worker, 3)
		b = append(b, '"')
	}
	b = append(b, `,"record_processor_id":"analyze","benchmark_phase":"profiling","was_cancelled":`...)
	cancelled := m.Err != nil && m.Err.Kind == "cancelled"
	b = strconv.AppendBool(b, cancelled)
	b = append(b, `,"cancellation_time_ns":`...)
	if cancelled {
		b = at(b, m.EndNs)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"request_index":`...)
	b = strconv.AppendUint(b, uint64(m.Index), 10)
	if o.Graph != nil {
		b = appendGraph(b, o.Graph, m.Index)
	}
	b = append(b, `,"outcome":`...)
	if m.Err != nil && m.Err.Kind == "lost" {
		b = append(b, `"lost"`...)
	} else {
		b = jsonwire.AppendString(b, m.Outcome.String())
	}
	b = append(b, `,"http_status":`...)
	if m.Status > 0 {
		b = strconv.AppendInt(b, int64(m.Status), 10)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"reads":`...)
	b = strconv.AppendInt(b, int64(m.Reads), 10)
	b = append(b, `,"events":`...)
	b = strconv.AppendInt(b, int64(m.Events), 10)
	b = append(b, `,"content_events":`...)
	b = strconv.AppendInt(b, int64(m.ContentEvents), 10)
	b = append(b, `,"same_read_chunk_gaps":`...)
	b = strconv.AppendInt(b, int64(m.SameReadGaps), 10)
	if o.Metadata != nil {
		b = o.Metadata(m.Index, b)
	}
	if o.Grouped {
		b = append(b, `,"group":`...)
		if m.Grouped {
			b = jsonwire.AppendString(b, m.Group)
		} else {
			b = append(b, "null"...)
		}
	}
	b = append(b, `},"metrics":{`...)
	first := true
	sep := func(b []byte) []byte {
		if !first {
			b = append(b, ',')
		}
		first = false
		return b
	}
	for i := range o.Columns {
		c := &o.Columns[i]
		switch c.List {
		case ListICL:
			if !m.Valid || len(m.ICL) == 0 {
				continue
			}
			b = sep(b)
			b = append(b, c.Open...)
			b = append(b, '[')
			for i, g := range m.ICL {
				if i > 0 {
					b = append(b, ',')
				}
				b = pyjson.AppendNsAsMs(b, g)
			}
			b = append(b, ']')
			b = append(b, c.Close...)
			continue
		case ListEPR:
			if !m.Valid || len(m.EPR) == 0 {
				continue
			}
			b = sep(b)
			b = append(b, c.Open...)
			b = append(b, '[')
			for i, n := range m.EPR {
				if i > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendInt(b, int64(n), 10)
			}
			b = append(b, ']')
			b = append(b, c.Close...)
			continue
		}
		if !m.Has[c.ID] || !(m.Valid || c.Failed) {
			continue
		}
		b = sep(b)
		b = append(b, c.Open...)
		switch v := m.Values[c.ID]; {
		case c.Int:
			b = strconv.AppendInt(b, int64(v), 10)
		case c.NsToMs && v == math.Trunc(v) && math.Abs(v) < 1e15:
			b = pyjson.AppendNsAsMs(b, int64(v))
		default:
			b = pyjson.AppendFloat(b, v/c.Div)
		}
		b = append(b, c.Close...)
	}
	b = append(b, '}')
	if q != nil && (o.Trace || o.Chunks) {
		b = appendTrace(b, wall, q, o.Trace)
	}
	b = append(b, `,"error":`...)
	if m.Err == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"code":`...)
		if m.Err.Code > 0 {
			b = strconv.AppendInt(b, int64(m.Err.Code), 10)
		} else {
			b = append(b, "null"...)
		}
		b = append(b, `,"type":`...)
		b = jsonwire.AppendString(b, m.Err.Kind)
		b = append(b, `,"message":`...)
		b = jsonwire.AppendString(b, redact.Text(m.Err.Message)) // a server's body may echo the URL
		b = append(b, '}')
	}
	return append(b, '}', '\n')
}

// Options says what goes into each profile_export.jsonl line.
type Options struct {
	// Columns are the record metrics written, in order (analyze's registry: the built-ins,
	// then the user metrics).
	Columns    []Column
	Correlated bool // the session id was sent in a header: it is the x_correlation_id
	Trace      bool // trace_data with every timestamp (analyze.Options.ExportHTTPTrace)
	Chunks     bool // trace_data with the response chunks only (analyze.Options.ExportPerChunkData)
	Grouped    bool // the requests are grouped (analyze.Options.GroupBy): metadata.group says in which
	// Graph is the plan when it has a graph section: each record then says its agent and
	// the records it waited for.
	Graph *mmapds.Plan
	// Metadata, when set, appends fields to the record's metadata for the request at plan
	// index i (analyze.Options.RecordMetadata).
	Metadata func(i uint32, dst []byte) []byte
}

// Column is one record metric of a profile_export.jsonl line's "metrics" object.
type Column struct {
	// ID indexes Metrics.Values and Metrics.Has (analyze's MetricID).
	ID int
	// Open and Close are the encoded `"tag":{"value":` and `,"unit":"…"}`.
	Open, Close []byte
	// Int writes the value as an integer; NsToMs writes a value stored in ns in ms (exactly,
	// when it is a whole number); otherwise the value is divided by Div.
	Int, NsToMs bool
	Div         float64
	// Failed writes the value for failed requests too (otherwise for valid ones only).
	Failed bool
	// List says the value is one of the lists (its ID's Values are unused).
	List List
}

// List names the per-request lists a column may write instead of a value.
type List uint8

const (
	ListNone List = iota
	ListICL       // the inter-chunk gaps (Metrics.ICL), in ms
	ListEPR       // the content events of each read (Metrics.EPR)
)

// NewColumn returns the column of record metric id: tag and unit make its key; it writes
// the value as it is stored (Div 1) until the caller says otherwise.
func NewColumn(id int, tag, unit string) Column {
	return Column{ID: id, Div: 1,
		Open:  append(jsonwire.AppendString(nil, tag), `:{"value":`...),
		Close: append(append([]byte(`,"unit":`), jsonwire.AppendString(nil, unit)...), '}')}
}

// appendGraph appends a graph plan's fields of record idx to a record's metadata: its agent
// (plan-wide number, name, depth: AIPerf's agent_depth) and its parents, each the record it
// waited for and why.
func appendGraph(b []byte, p *mmapds.Plan, idx uint32) []byte {
	if int(idx) >= p.Len() {
		return b
	}
	n := p.GraphNode(int(idx))
	b = append(b, `,"agent":`...)
	b = strconv.AppendUint(b, uint64(n.Agent), 10)
	if m := p.Meta(); int(n.Agent) < len(m.Agents) {
		a := &m.Agents[n.Agent]
		b = append(b, `,"agent_name":`...)
		b = jsonwire.AppendString(b, a.Name)
		b = append(b, `,"agent_depth":`...)
		b = strconv.AppendInt(b, int64(a.Depth), 10)
	}
	b = append(b, `,"parents":[`...)
	end := n.EdgeFirst + uint32(n.Parents)
	for j := n.EdgeFirst; j < end; j++ {
		if j > n.EdgeFirst {
			b = append(b, ',')
		}
		e := p.Edge(j)
		b = append(b, `{"request_index":`...)
		b = strconv.AppendUint(b, uint64(e.Record), 10)
		b = append(b, `,"kind":"`...)
		b = append(b, e.Kind.String()...)
		b = append(b, `"}`...)
	}
	return append(b, ']')
}

// appendTrace appends `,"trace_data":{...}` for q: AIPerf's TraceDataExport fields in
// wall-clock ns (wall is the run's zero) that the raw log has, and its computed durations.
// The response chunks are the socket reads that delivered body bytes, [ns, bytes] each, as
// AIPerf's (timestamp_ns, size_bytes) pairs; full adds the request and connection times.
func appendTrace(b []byte, wall int64, q *rawlog.Request, full bool) []byte {
	field := func(b []byte, name string, t int64) []byte {
		if t < 0 {
			return b
		}
		b = append(b, `,"`...)
		b = append(b, name...)
		b = append(b, `":`...)
		return strconv.AppendInt(b, wall+t, 10)
	}
	dur := func(b []byte, name string, from, to int64) []byte {
		if from < 0 || to < from {
			return b
		}
		b = append(b, `,"`...)
		b = append(b, name...)
		b = append(b, `":`...)
		return strconv.AppendInt(b, to-from, 10)
	}
	b = append(b, `,"trace_data":{"trace_type":"llmbench"`...)
	first, last := int64(-1), int64(-1)
	if n := len(q.ReadNs); n > 0 {
		first, last = q.ReadNs[0], q.ReadNs[n-1]
	}
	if full {
		b = field(b, "request_send_start_ns", q.WriteStartNs)
		b = field(b, "request_send_end_ns", q.WriteEndNs)
		if q.Status > 0 {
			b = append(b, `,"response_status_code":`...)
			b = strconv.AppendInt(b, int64(q.Status), 10)
		}
		b = field(b, "response_headers_received_ns", q.HeaderNs)
		b = field(b, "response_receive_start_ns", first)
		b = field(b, "response_receive_end_ns", last)
		if q.ConnReused {
			b = field(b, "connection_reused_ns", q.WriteStartNs)
		} else {
			b = field(b, "tcp_connect_start_ns", q.ConnectStartNs)
			b = field(b, "tcp_connect_end_ns", q.ConnectEndNs)
		}
		if q.Reconnects > 0 {
			// The first attempt went out on a connection the server had closed.
			b = append(b, `,"reconnects":`...)
			b = strconv.AppendInt(b, int64(q.Reconnects), 10)
			b = field(b, "first_attempt_start_ns", q.FirstWriteStartNs)
		}
		if q.ServerClosed {
			b = append(b, `,"server_closed_connection":true`...)
		}
		if q.Outcome != rawlog.OutcomeCompleted {
			b = field(b, "error_timestamp_ns", q.EndNs)
		}
	}
	b = append(b, `,"response_chunks":[`...)
	prev := uint32(0)
	for i, t := range q.ReadNs {
		if i > 0 {
			b = append(b, ',')
		}
		end := prev
		if i < len(q.ReadEnd) && q.ReadEnd[i] >= prev {
			end = q.ReadEnd[i]
		}
		b = append(b, '[')
		b = strconv.AppendInt(b, wall+t, 10)
		b = append(b, ',')
		b = strconv.AppendUint(b, uint64(end-prev), 10)
		b = append(b, ']')
		prev = end
	}
	b = append(b, `],"response_chunks_count":`...)
	b = strconv.AppendInt(b, int64(len(q.ReadNs)), 10)
	b = append(b, `,"response_bytes_total":`...)
	b = strconv.AppendInt(b, int64(len(q.Body)), 10)
	if full {
		// AIPerf's computed durations, from the fields above.
		b = dur(b, "sending_ns", q.WriteStartNs, q.WriteEndNs)
		b = dur(b, "waiting_ns", q.WriteEndNs, first)
		switch len(q.ReadNs) {
		case 0:
		case 1:
			b = append(b, `,"receiving_ns":0`...)
		default:
			b = dur(b, "receiving_ns", first, last)
		}
		b = dur(b, "duration_ns", q.WriteStartNs, last)
		if !q.ConnReused {
			b = dur(b, "connecting_ns", q.ConnectStartNs, q.ConnectEndNs)
		}
	}
	return append(b, '}')
}

// SessionHeaderSent reports whether replay sent every request's session id in a header
// (run.json options.session_header; X-Correlation-ID unless --session-header changed it),
// the value being the plan's session number, as the runner writes it.
func SessionHeaderSent(m *rawlog.Manifest) bool {
	h, _ := m.Options["session_header"].(string)
	return h != ""
}

// appendPadded appends n with at least width digits.
func appendPadded(b []byte, n, width int) []byte {
	s := strconv.Itoa(n)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}
