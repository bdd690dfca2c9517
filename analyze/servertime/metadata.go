package servertime

import (
	"encoding/hex"
	"strconv"

	"github.com/llmbench/llmbench/internal/jsonwire"
)

// AppendMetadata appends the request's fields to its per-request export record
// (analyze.Options.RecordMetadata): `,"trace_id":"…"`, the trace id its traceparent carried,
// and, when a span was joined to it, `,"server_span":{…}`: the span's name, kind, service,
// span id, layout ("" for none known), start on the server's clock, how many other spans
// its trace had, and its attributes raw (a span of unknown layout keeps everything it said).
func (j *Join) AppendMetadata(i uint32, b []byte) []byte {
	if j.key.IsZero() {
		return b
	}
	id := j.key.TraceID(i)
	b = append(b, `,"trace_id":"`...)
	b = hex.AppendEncode(b, id[:])
	b = append(b, '"')
	r := j.byIndex[i]
	if r == nil {
		return b
	}
	b = append(b, `,"server_span":{"name":`...)
	b = jsonwire.AppendString(b, r.name)
	b = append(b, `,"kind":`...)
	b = jsonwire.AppendString(b, r.kind)
	b = append(b, `,"service":`...)
	b = jsonwire.AppendString(b, r.service)
	b = append(b, `,"span_id":"`...)
	b = hex.AppendEncode(b, r.spanID[:])
	b = append(b, `","layout":`...)
	layout := ""
	if r.layout != nil {
		layout = r.layout.Name
	}
	b = jsonwire.AppendString(b, layout)
	b = append(b, `,"start_unix_ns":`...)
	b = strconv.AppendInt(b, r.startUnixNs, 10)
	b = append(b, `,"other_spans":`...)
	b = strconv.AppendInt(b, int64(r.others), 10)
	b = append(b, `,"attributes":`...)
	b = append(b, r.attributes...)
	return append(b, '}')
}
