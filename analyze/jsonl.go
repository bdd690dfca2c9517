package analyze

import (
	"math"
	"strconv"

	"github.com/llmbench/llmbench/rawlog"
)

// appendRecord appends one profile_export.jsonl line for m: AIPerf's record shape
// ({"metadata", "metrics", "error"}), metric values in display units with their unit, the
// inter-chunk gaps as a list. Fields AIPerf does not have are added to metadata, which
// AIPerf's record model accepts as extras. correlated says the run sent the session id in
// a header (sessionHeaderSent): it is then the record's x_correlation_id. replay sends no
// X-Request-ID, so x_request_id is null.
func appendRecord(b []byte, m *requestMetrics, correlated bool) []byte {
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
	b = append(b, `,"outcome":`...)
	if m.Err != nil && m.Err.Kind == "lost" {
		b = append(b, `"lost"`...)
	} else {
		b = appendJSONString(b, m.Outcome.String())
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
	b = append(b, `},"metrics":{`...)
	first := true
	sep := func(b []byte) []byte {
		if !first {
			b = append(b, ',')
		}
		first = false
		return b
	}
	for id := MetricID(0); id < MetricID(numRecord); id++ {
		def := &catalog[id]
		switch {
		case id == MInterChunkLatency:
			if !m.Valid || len(m.ICL) == 0 {
				continue
			}
			b = sep(b)
			b = append(b, `"inter_chunk_latency":{"value":[`...)
			for i, g := range m.ICL {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendNsAsMs(b, g)
			}
			b = append(b, `],"unit":"ms"}`...)
			continue
		case id == MEventsPerRead:
			if !m.Valid || len(m.EPR) == 0 {
				continue
			}
			b = sep(b)
			b = append(b, `"events_per_read":{"value":[`...)
			for i, n := range m.EPR {
				if i > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendInt(b, int64(n), 10)
			}
			b = append(b, `],"unit":"events"}`...)
			continue
		}
		if !m.Has[id] || (!m.Valid && !keptForErrors(id)) {
			continue
		}
		b = sep(b)
		b = append(b, jsonKeys[id].open...)
		switch v := m.Values[id]; {
		case def.Int:
			b = strconv.AppendInt(b, int64(v), 10)
		case def.div == nsToMs && v == math.Trunc(v) && math.Abs(v) < 1e15:
			b = appendNsAsMs(b, int64(v))
		default:
			b = appendPyFloat(b, v/def.div)
		}
		b = append(b, jsonKeys[id].close...)
	}
	b = append(b, `},"error":`...)
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
		b = appendJSONString(b, m.Err.Kind)
		b = append(b, `,"message":`...)
		b = appendJSONString(b, m.Err.Message)
		b = append(b, '}')
	}
	return append(b, '}', '\n')
}

// sessionHeaderSent reports whether replay sent every request's session id in a header
// (run.json options.session_header; X-Correlation-ID unless --session-header changed it),
// the value being the plan's session number, as the runner writes it.
func sessionHeaderSent(m *rawlog.Manifest) bool {
	h, _ := m.Options["session_header"].(string)
	return h != ""
}

// jsonKeys holds each record metric's encoded `"tag":{"value":` and `,"unit":"…"}`.
var jsonKeys = func() (k [numRecord]struct{ open, close []byte }) {
	for id := range k {
		d := &catalog[id]
		k[id].open = append(appendJSONString(nil, d.Tag), `:{"value":`...)
		k[id].close = append(append([]byte(`,"unit":`), appendJSONString(nil, d.Unit)...), '}')
	}
	return k
}()

// appendNsAsMs appends ns nanoseconds in milliseconds as appendPyFloat(ns/1e6) would, without
// floating point: a decimal of at most 15 significant digits is the shortest representation
// of the double nearest to it, so the exact decimal with trailing zeros trimmed is Python's repr.
func appendNsAsMs(b []byte, ns int64) []byte {
	if ns == 0 || (ns > -100 && ns < 100) || ns >= 1e15 || ns <= -1e15 {
		return appendPyFloat(b, float64(ns)/nsToMs) // 0.0, exponent form, or too many digits
	}
	if ns < 0 {
		b = append(b, '-')
		ns = -ns
	}
	b = strconv.AppendInt(b, ns/1_000_000, 10)
	frac := ns % 1_000_000
	if frac == 0 {
		return append(b, '.', '0')
	}
	var d [6]byte
	for i := 5; i >= 0; i-- {
		d[i] = byte('0' + frac%10)
		frac /= 10
	}
	n := 6
	for d[n-1] == '0' {
		n--
	}
	b = append(b, '.')
	return append(b, d[:n]...)
}

// appendPadded appends n with at least width digits.
func appendPadded(b []byte, n, width int) []byte {
	s := strconv.Itoa(n)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}
