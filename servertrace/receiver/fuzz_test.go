package receiver

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/llmbench/llmbench/internal/tracectx"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/servertrace"
)

// FuzzConsume feeds the receiver's filter and writer whatever an exporter may send, decoded
// by the Collector's own unmarshalers (protobuf and JSON): it never panics, keeps only the
// run's spans and its counts always add up.
func FuzzConsume(f *testing.F) {
	key := tracectx.NewKey("fuzz", 1, "")
	seed, _ := ptraceotlp.NewExportRequestFromTraces(traces(key.TraceID(0), key.TraceID(7), [16]byte{1})).MarshalProto()
	f.Add(seed, false)
	js, _ := (&ptrace.JSONMarshaler{}).MarshalTraces(traces(key.TraceID(3)))
	f.Add(js, true)
	f.Add([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"zz"}]}]}]}`), true)
	f.Fuzz(func(t *testing.T, b []byte, isJSON bool) {
		var td ptrace.Traces
		var err error
		if isJSON {
			td, err = (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
		} else {
			td, err = (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(b)
		}
		if err != nil {
			return
		}
		out := &syncBuf{}
		r := &Receiver{w: servertrace.NewWriter(out), changed: make(chan struct{}), maxBytes: 1 << 20, now: time.Now}
		r.counts.Transports = map[string]rawlog.TraceTransportCounts{}
		r.SetKey(key, 8)
		total := td.SpanCount()
		if err := r.consume(context.Background(), td); err != nil {
			t.Fatal(err)
		}
		c := r.counts
		if c.SpansReceived != int64(total) || c.SpansKept+c.SpansOtherTraces+c.SpansDroppedOverCap != c.SpansReceived ||
			c.BytesKept != int64(out.b.Len()) || int64(c.RequestsWithSpans) > c.SpansKept {
			t.Fatalf("counts %+v of %d spans, %d bytes written", c, total, out.b.Len())
		}
		for _, l := range out.lines(t) {
			td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(l.Traces)
			if err != nil {
				t.Fatalf("a kept line does not read back: %v", err)
			}
			if td.SpanCount() == 0 {
				t.Fatal("a line without spans")
			}
		}
	})
}
