package mockllm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmbench/llmbench/internal/tracectx"
	"github.com/llmbench/llmbench/servertrace"
	"github.com/llmbench/llmbench/servertrace/receiver"
)

// lockedBuf is a receiver's output in tests.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// TestSpans serves queued streaming requests with spans exported over OTLP/gRPC and
// OTLP/HTTP protobuf to the run's receiver, and checks each span against the schedule log
// of the same request: vLLM's name, kind, parent and attributes, its queue the wait for the
// one batch slot, its prefill admission to the first token event, exactly.
func TestSpans(t *testing.T) {
	for _, proto := range []string{TraceProtocolGRPC, TraceProtocolHTTPProtobuf} {
		t.Run(proto, func(t *testing.T) {
			const n = 4
			key := tracectx.NewKey("mock", time.Now().UnixNano(), "")
			out := &lockedBuf{}
			rcv, err := receiver.Start(receiver.Options{GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", Out: out})
			if err != nil {
				t.Fatal(err)
			}
			defer rcv.Close()
			rcv.SetKey(key, n)
			g, h := rcv.Addrs()
			ep := "http://" + g
			if proto == TraceProtocolHTTPProtobuf {
				ep = "http://" + h
			}
			tp, err := NewTracerProvider(context.Background(), TraceExport{Endpoint: ep, Protocol: proto, BatchDelay: 50 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			o := testOptions()
			o.MaxBatch = 1
			o.TTFT, o.ITL = 30*time.Millisecond, 2*time.Millisecond
			o.Tracer = tp
			sl := &scheduleBuf{}
			o.ScheduleLog = sl
			url := startServer(t, o)
			var wg sync.WaitGroup
			for i := uint32(0); i < n; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					body := map[string]any{"messages": []map[string]any{{"role": "user", "content": "x"}}, "max_tokens": 5, "stream": true}
					resp := post(t, url+"/v1/chat/completions", body, CorrelationHeader, strconv.Itoa(int(i)),
						tracectx.HeaderName, string(key.AppendTraceparent(nil, i)))
					_, _ = io.ReadAll(resp.Body)
					resp.Body.Close()
				}()
			}
			wg.Wait()
			// Batched: the spans come after the responses, within the batch delay.
			if !rcv.Wait(n, time.Now().Add(30*time.Second), nil) {
				t.Fatal("not every request's span arrived")
			}
			if err := tp.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			c := rcv.Close()
			want := servertrace.TransportGRPC
			if proto == TraceProtocolHTTPProtobuf {
				want = servertrace.TransportHTTPProtobuf
			}
			if c.SpansKept != n || c.Transports[want].Spans != n {
				t.Fatalf("counts %+v", c)
			}
			recs := map[uint32]ScheduleRecord{}
			for _, r := range sl.records(t) {
				i, _ := strconv.Atoi(r.CorrelationID)
				recs[uint32(i)] = r
			}
			queued := 0
			for _, s := range spansOf(t, out.b.Bytes()) {
				i, ok := key.Index(s.TraceID())
				if !ok || i >= n {
					t.Fatalf("span of trace %s", s.TraceID())
				}
				r := recs[i]
				if s.Name() != SpanName || s.Kind() != ptrace.SpanKindServer || s.ParentSpanID() != pcommon.SpanID(key.SpanID(i)) {
					t.Fatalf("span %s kind %v parent %s", s.Name(), s.Kind(), s.ParentSpanID())
				}
				sec := func(ns int64) float64 { return float64(ns) / 1e9 }
				last := r.SentNs[len(r.SentNs)-1]
				for name, v := range map[string]float64{
					AttrTimeInQueue: sec(r.StartNs), AttrTimeToFirstToken: sec(r.SentNs[0]),
					AttrTimeInModelPrefill: sec(r.SentNs[0] - r.StartNs), AttrTimeInModelDecode: sec(last - r.SentNs[0]),
					AttrTimeInModelInference: sec(last - r.StartNs), AttrTimeInScheduler: 0,
				} {
					got, ok := s.Attributes().Get(name)
					if !ok || got.Double() != v {
						t.Errorf("request %d: %s = %v, want %v", i, name, got.AsRaw(), v)
					}
				}
				e2e, _ := s.Attributes().Get(AttrE2E)
				if e2e.Double() < sec(last) {
					t.Errorf("request %d: e2e %v before its last event %v", i, e2e.Double(), sec(last))
				}
				if v, _ := s.Attributes().Get(AttrCompletionTokens); v.Int() != 5 {
					t.Errorf("request %d: completion tokens %v", i, v.AsRaw())
				}
				if v, _ := s.Attributes().Get(AttrRequestMaxTokens); v.Int() != 5 {
					t.Errorf("request %d: max tokens %v", i, v.AsRaw())
				}
				if r.StartNs >= int64(o.TTFT) {
					queued++ // waited for a whole request before it
				}
				if got := int64(s.StartTimestamp()); got != r.ArrivalUnixNs {
					t.Errorf("request %d: span start %d, arrival %d", i, got, r.ArrivalUnixNs)
				}
			}
			if queued < n-1 {
				t.Fatalf("%d of %d requests queued behind one slot", queued, n)
			}
		})
	}
}

// spansOf reads the spans of a server-traces file.
func spansOf(t *testing.T, b []byte) []ptrace.Span {
	t.Helper()
	var out []ptrace.Span
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 16<<20)
	var u ptrace.JSONUnmarshaler
	for sc.Scan() {
		var l servertrace.Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		td, err := u.UnmarshalTraces(l.Traces)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			ss := td.ResourceSpans().At(i).ScopeSpans()
			for j := 0; j < ss.Len(); j++ {
				if ss.At(j).Scope().Name() != TraceScope {
					t.Fatalf("scope %q", ss.At(j).Scope().Name())
				}
				for k := 0; k < ss.At(j).Spans().Len(); k++ {
					out = append(out, ss.At(j).Spans().At(k))
				}
			}
		}
	}
	return out
}
