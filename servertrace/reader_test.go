package servertrace

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// vllmTraces builds n vLLM-shaped llm_request spans (trace ids 1..n in their last byte),
// queue time i ms each.
func vllmTraces(n int) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "vllm")
	ss := rs.ScopeSpans().AppendEmpty()
	for i := 1; i <= n; i++ {
		sp := ss.Spans().AppendEmpty()
		sp.SetName("llm_request")
		sp.SetKind(ptrace.SpanKindServer)
		sp.SetTraceID(pcommon.TraceID{15: byte(i)})
		sp.SetSpanID(pcommon.SpanID{7: byte(i)})
		sp.SetParentSpanID(pcommon.SpanID{0: 1, 7: byte(i)})
		sp.SetStartTimestamp(pcommon.Timestamp(1_000_000_000 + i))
		sp.SetEndTimestamp(pcommon.Timestamp(2_000_000_000 + i))
		sp.Attributes().PutDouble("gen_ai.latency.time_in_queue", float64(i)/1000)
		sp.Attributes().PutInt("gen_ai.usage.prompt_tokens", int64(100*i))
	}
	return td
}

func otlpJSON(t testing.TB, td ptrace.Traces) []byte {
	b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func runLine(t testing.TB, td ptrace.Traces, received int64) []byte {
	b, err := json.Marshal(Line{FormatVersion: FormatVersion, ReceivedUnixNs: received, Transport: TransportHTTPJSON, Traces: otlpJSON(t, td)})
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func frame(b []byte) []byte {
	out := binary.BigEndian.AppendUint32(nil, uint32(len(b)))
	return append(out, b...)
}

func collect(t *testing.T, data []byte) ([]Span, ReadStats) {
	t.Helper()
	var got []Span
	st, err := Read(bytes.NewReader(data), "traces", func(s *Span) error { got = append(got, *s); return nil })
	if err != nil {
		t.Fatal(err)
	}
	return got, st
}

func TestReadLayouts(t *testing.T) {
	td := vllmTraces(3)
	proto, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := zstd.NewWriter(nil)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(append(append(otlpJSON(t, td), '\n'), otlpJSON(t, td)...))
	zw.Close()
	cases := []struct {
		name           string
		data           []byte
		layout         string
		requests, recv int64
	}{
		{"run file", append(runLine(t, td, 7), runLine(t, td, 8)...), LayoutRun, 2, 7},
		{"collector json", append(append(otlpJSON(t, td), '\n'), otlpJSON(t, td)...), LayoutCollectorJSON, 2, 0},
		{"collector json, blank lines and CRLF", []byte("\n" + string(otlpJSON(t, td)) + "\r\n\n"), LayoutCollectorJSON, 1, 0},
		{"collector proto", append(frame(proto), frame(proto)...), LayoutCollectorProto, 2, 0},
		{"collector proto zstd", frame(enc.EncodeAll(proto, nil)), LayoutCollectorProto, 1, 0},
		{"collector json zstd", frame(enc.EncodeAll(otlpJSON(t, td), nil)), LayoutCollectorProto, 1, 0},
		{"gzip file", gz.Bytes(), LayoutCollectorJSON, 2, 0},
		{"zstd file", enc.EncodeAll(runLine(t, td, 7), nil), LayoutRun, 1, 7},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, st := collect(t, c.data)
			if st.Layout != c.layout || st.Requests != c.requests || st.Spans != 3*c.requests || len(got) != int(st.Spans) {
				t.Fatalf("stats %+v, %d spans", st, len(got))
			}
			s := got[1]
			if s.Name != "llm_request" || s.Kind != "Server" || s.Service != "vllm" || s.TraceID[15] != 2 || s.SpanID[7] != 2 ||
				s.ParentSpanID[0] != 1 || s.StartUnixNs != 1_000_000_002 || s.EndUnixNs != 2_000_000_002 || s.ReceivedUnixNs != c.recv {
				t.Fatalf("span %+v", s)
			}
			if q, ok := s.Float("gen_ai.latency.time_in_queue"); !ok || q != 0.002 {
				t.Fatalf("time_in_queue %v %v", q, ok)
			}
			if p, ok := s.Float("gen_ai.usage.prompt_tokens"); !ok || p != 200 {
				t.Fatalf("prompt_tokens %v %v", p, ok)
			}
			if _, ok := s.Float("absent"); ok {
				t.Fatal("absent attribute found")
			}
		})
	}
	if _, st := collect(t, nil); st.Spans != 0 || st.Layout != "" {
		t.Fatalf("empty file: %+v", st)
	}
}

func TestReadRefuses(t *testing.T) {
	td := vllmTraces(1)
	cases := []struct{ name, data, want string }{
		{"unknown version", `{"format_version":2,"received_unix_ns":1,"transport":"grpc","traces":{}}`, "traces:1: format_version 2"},
		{"not json", "{nope\n", "traces:1: not a JSON object"},
		{"other json", `{"a":1}`, "traces:1: neither"},
		{"no traces", `{"format_version":1}`, "traces:1: no traces"},
		{"bad otlp", `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"zz"}]}]}]}`, "traces:1: OTLP JSON"},
		{"mixed", string(runLine(t, td, 1)) + string(otlpJSON(t, td)), "traces:2: a otlp-json line in a server_traces.jsonl file"},
		{"huge frame", "\xff\xff\xff\xff", "frame 1: 4294967295 bytes"},
		{"short frame", "\x00\x00\x00\x09abc", "frame 1: unexpected EOF"},
		{"bad proto", "\x00\x00\x00\x03\xff\xff\xff", "frame 1: OTLP"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(c.data), "traces", func(*Span) error { return nil })
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
}

func FuzzRead(f *testing.F) {
	td := vllmTraces(2)
	f.Add(runLine(f, td, 5))
	f.Add(otlpJSON(f, td))
	proto, _ := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	f.Add(frame(proto))
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		var n int64
		st, err := Read(bytes.NewReader(data), "fuzz", func(s *Span) error {
			n++
			_, _ = s.Float("gen_ai.latency.time_in_queue")
			return nil
		})
		if err == nil && n != st.Spans {
			t.Fatalf("%d spans given, stats say %d", n, st.Spans)
		}
	})
}

// TestReadCollectorLine reads an export request as another exporter writes OTLP JSON: hex
// ids, kind as a number, 64-bit integers as strings.
func TestReadCollectorLine(t *testing.T) {
	line := `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"vllm"}}]},` +
		`"scopeSpans":[{"scope":{"name":"vllm.llm_engine"},"spans":[{"traceId":"5b8efff798038103d269b633813fc60c",` +
		`"spanId":"eee19b7ec3c1b174","parentSpanId":"eee19b7ec3c1b173","name":"llm_request","kind":2,` +
		`"startTimeUnixNano":"1544712660000000000","endTimeUnixNano":"1544712661000000000","attributes":[` +
		`{"key":"gen_ai.latency.time_in_queue","value":{"doubleValue":0.0123}},{"key":"gen_ai.usage.prompt_tokens","value":{"intValue":"42"}}]}]}]}]}`
	got, st := collect(t, []byte(line+"\n"))
	if st.Layout != LayoutCollectorJSON || len(got) != 1 {
		t.Fatalf("%+v, %d spans", st, len(got))
	}
	s := got[0]
	q, _ := s.Float("gen_ai.latency.time_in_queue")
	p, _ := s.Float("gen_ai.usage.prompt_tokens")
	if fmt.Sprintf("%x", s.TraceID) != "5b8efff798038103d269b633813fc60c" || s.Kind != "Server" || s.Service != "vllm" ||
		s.StartUnixNs != 1544712660000000000 || q != 0.0123 || p != 42 {
		t.Fatalf("span %+v", s)
	}
}
