package replay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/llmbench/llmbench/internal/tracectx"
	"github.com/llmbench/llmbench/mockllm"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/servertrace"
)

// freeAddr is a loopback address the system just gave out (the mock's exporter must know
// the receiver's address before the run binds it).
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// tracedMock starts a mockllm with one batch slot that exports its spans to endpoint over
// proto, batched every delay; the returned stop flushes them.
func tracedMock(t *testing.T, endpoint, proto string, delay time.Duration) string {
	t.Helper()
	tp, err := mockllm.NewTracerProvider(context.Background(), mockllm.TraceExport{Endpoint: endpoint, Protocol: proto, BatchDelay: delay})
	if err != nil {
		t.Fatal(err)
	}
	o := mockllm.DefaultOptions()
	o.TTFT, o.ITL, o.MaxBatch, o.Tracer = 20*time.Millisecond, time.Millisecond, 2, tp
	url, stop, err := mockllm.Start("127.0.0.1:0", o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop(); tp.Shutdown(context.Background()) })
	return url
}

// keptSpans reads the run's server-traces file: the spans by plan index.
func keptSpans(t *testing.T, dir string, key tracectx.Key) (map[uint32]ptrace.Span, []servertrace.Line) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, servertrace.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[uint32]ptrace.Span{}
	var lines []servertrace.Line
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	var u ptrace.JSONUnmarshaler
	for sc.Scan() {
		var l servertrace.Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, l)
		td, err := u.UnmarshalTraces(l.Traces)
		if err != nil {
			t.Fatal(err)
		}
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			for j := 0; j < rss.At(i).ScopeSpans().Len(); j++ {
				ss := rss.At(i).ScopeSpans().At(j).Spans()
				for k := 0; k < ss.Len(); k++ {
					idx, ok := key.Index(ss.At(k).TraceID())
					if !ok {
						t.Fatalf("kept a span of trace %s", ss.At(k).TraceID())
					}
					out[idx] = ss.At(k)
				}
			}
		}
	}
	return out, lines
}

// TestTraceReceiverMockllm runs replay against mockllm exporting its spans over OTLP/gRPC
// and OTLP/HTTP protobuf, in batches that come after the last response: every completed
// request's span is kept, its parent the request's traceparent, and the wait ends once the
// last one came, well before the grace.
func TestTraceReceiverMockllm(t *testing.T) {
	const n = 24
	plan := preflightPlan(t, n, `{"model":"mock-llm","messages":[{"role":"user","content":"hi"}],"max_tokens":4,"stream":true}`, true)
	for _, proto := range []string{mockllm.TraceProtocolGRPC, mockllm.TraceProtocolHTTPProtobuf} {
		t.Run(proto, func(t *testing.T) {
			g, h := freeAddr(t), freeAddr(t)
			ep := "http://" + g
			if proto == mockllm.TraceProtocolHTTPProtobuf {
				ep = "http://" + h
			}
			// Batches every 4 s from the exporter's start: the run takes about one.
			url := tracedMock(t, ep, proto, 4*time.Second)
			o := testOptions(t, plan, url)
			o.TraceReceiver, o.TraceReceiverHTTP, o.TraceGrace = g, h, 30*time.Second
			notes := &noticeBuf{}
			o.Notice = notes
			m := runReplay(t, o)
			if m.Counts.Completed != n {
				t.Fatalf("counts %+v", m.Counts)
			}
			st := m.ServerTraces
			if st == nil || st.SpansKept != n || st.RequestsWithSpans != n || st.SpansOtherTraces != 0 || st.File != servertrace.FileName {
				t.Fatalf("server_traces %+v\n%s", st, notes)
			}
			if st.WaitedSeconds >= st.GraceSeconds {
				t.Fatalf("waited the whole grace (%v s) for spans that all came", st.WaitedSeconds)
			}
			want := servertrace.TransportGRPC
			if proto == mockllm.TraceProtocolHTTPProtobuf {
				want = servertrace.TransportHTTPProtobuf
			}
			if st.Transports[want].Spans != n {
				t.Fatalf("transports %+v", st.Transports)
			}
			key, err := tracectx.ParseKey(m.TraceKey)
			if err != nil {
				t.Fatal(err)
			}
			spans, lines := keptSpans(t, o.OutputDir, key)
			if len(spans) != n {
				t.Fatalf("%d spans in the file", len(spans))
			}
			// The batches came after the last response.
			last := int64(0)
			for _, l := range lines {
				last = max(last, l.ReceivedUnixNs)
			}
			if last <= m.EndUnixNs {
				t.Fatalf("the last batch (%d) came before the run ended (%d): the test shows no late span", last, m.EndUnixNs)
			}
			for i, s := range spans {
				if s.ParentSpanID() != pcommon.SpanID(key.SpanID(i)) || s.Name() != mockllm.SpanName {
					t.Fatalf("request %d: span %s, parent %s", i, s.Name(), s.ParentSpanID())
				}
			}
			// The format's reader (analyze's) takes the file as the receiver wrote it.
			f, err := os.Open(filepath.Join(o.OutputDir, servertrace.FileName))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			read := 0
			rs, err := servertrace.Read(f, servertrace.FileName, func(s *servertrace.Span) error {
				i, ok := key.Index(s.TraceID)
				if _, q := s.Float(mockllm.AttrTimeInQueue); !ok || !q || s.ReceivedUnixNs <= m.StartUnixNs || s.ParentSpanID != key.SpanID(i) {
					t.Errorf("span %+v", s)
				}
				read++
				return nil
			})
			if err != nil || rs.Layout != servertrace.LayoutRun || rs.Spans != n || read != n {
				t.Fatalf("read %d spans, %+v, %v", read, rs, err)
			}
		})
	}
}

// TestTraceReceiverFlood floods the receiver with other traces' spans over OTLP/HTTP while the
// run goes on: the run completes, every one of its spans is kept, the others counted and
// dropped, and the file holds only the run's.
func TestTraceReceiverFlood(t *testing.T) {
	const n = 60
	plan := preflightPlan(t, n, `{"model":"mock-llm","messages":[{"role":"user","content":"hi"}],"max_tokens":4,"stream":true}`, true)
	g, h := freeAddr(t), freeAddr(t)
	url := tracedMock(t, "http://"+g, mockllm.TraceProtocolGRPC, 200*time.Millisecond)
	o := testOptions(t, plan, url)
	o.TraceReceiver, o.TraceReceiverHTTP, o.TraceGrace = g, h, 30*time.Second
	o.StartDelay = 300 * time.Millisecond
	stop := make(chan struct{})
	var sent atomic.Int64
	var wg sync.WaitGroup
	other := tracectx.NewKey("someone else", 1, "")
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for i := 0; i < 500; i++ {
		s := ss.AppendEmpty()
		s.SetName("unrelated")
		s.SetTraceID(pcommon.TraceID(other.TraceID(uint32(i))))
		s.SetSpanID(pcommon.SpanID{1, 1, 1, 1, 1, 1, 1, 1})
	}
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	for c := 0; c < 2; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := http.Post("http://"+h+"/v1/traces", "application/x-protobuf", bytes.NewReader(body))
				if err != nil {
					time.Sleep(5 * time.Millisecond) // not listening yet, or no longer
					continue
				}
				resp.Body.Close()
				if resp.StatusCode == 200 {
					sent.Add(500)
				}
			}
		}()
	}
	m := runReplay(t, o)
	close(stop)
	wg.Wait()
	if m.Status != rawlog.StatusComplete || m.Counts.Completed != n {
		t.Fatalf("status %s, counts %+v", m.Status, m.Counts)
	}
	st := m.ServerTraces
	if st.SpansKept != n || st.RequestsWithSpans != n || st.SpansOtherTraces == 0 || st.SpansOtherTraces > sent.Load() {
		t.Fatalf("server_traces %+v, %d unrelated sent", st, sent.Load())
	}
	key, _ := tracectx.ParseKey(m.TraceKey)
	if spans, _ := keptSpans(t, o.OutputDir, key); len(spans) != n {
		t.Fatalf("%d spans kept", len(spans))
	}
	t.Logf("%d unrelated spans received during the run, %d of the run's kept", st.SpansOtherTraces, st.SpansKept)
}
