package receiver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/llmbench/llmbench/internal/tracectx"
	"github.com/llmbench/llmbench/servertrace"
)

// syncBuf is the receiver's output in tests.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) lines(t *testing.T) []servertrace.Line {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []servertrace.Line
	sc := bufio.NewScanner(bytes.NewReader(s.b.Bytes()))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var l servertrace.Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, l)
	}
	return out
}

func start(t *testing.T, o Options) (*Receiver, *syncBuf) {
	t.Helper()
	out := &syncBuf{}
	if o.GRPCAddr == "" && o.HTTPAddr == "" {
		o.GRPCAddr, o.HTTPAddr = "127.0.0.1:0", "127.0.0.1:0"
	}
	o.Out = out
	r, err := Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, out
}

// traces builds an export request with one span per trace id.
func traces(ids ...[16]byte) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "test")
	ss := rs.ScopeSpans().AppendEmpty()
	for i, id := range ids {
		s := ss.Spans().AppendEmpty()
		s.SetName("llm_request")
		s.SetTraceID(pcommon.TraceID(id))
		s.SetSpanID(pcommon.SpanID{1, 2, 3, 4, 5, 6, 7, byte(i + 1)})
		s.SetKind(ptrace.SpanKindServer)
		s.Attributes().PutDouble("gen_ai.latency.time_in_queue", 0.25)
	}
	return td
}

func exportGRPC(t *testing.T, addr string, td ptrace.Traces) {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	if _, err := ptraceotlp.NewGRPCClient(cc).Export(context.Background(), ptraceotlp.NewExportRequestFromTraces(td)); err != nil {
		t.Fatal(err)
	}
}

func post(t *testing.T, addr, contentType string, body []byte) int {
	t.Helper()
	resp, err := http.Post("http://"+addr+"/v1/traces", contentType, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func exportProto(t *testing.T, addr string, td ptrace.Traces) {
	t.Helper()
	b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	if code := post(t, addr, "application/x-protobuf", b); code != 200 {
		t.Fatalf("protobuf export: status %d", code)
	}
}

// TestTransports sends the run's spans and others' over each transport (JSON by hand, as a
// server nobody here wrote would) and checks what is kept, written and counted.
func TestTransports(t *testing.T) {
	key := tracectx.NewKey("plan", 1, "")
	other := tracectx.NewKey("plan", 2, "")
	r, out := start(t, Options{})
	g, h := r.Addrs()
	if g == "" || h == "" || strings.HasSuffix(g, ":0") || strings.HasSuffix(h, ":0") {
		t.Fatalf("addresses %q %q", g, h)
	}
	// Before the key: nothing of the run was sent, so nothing is kept.
	exportGRPC(t, g, traces(key.TraceID(0)))
	r.SetKey(key, 10)
	exportGRPC(t, g, traces(key.TraceID(1), other.TraceID(1)))
	exportProto(t, h, traces(key.TraceID(2), key.TraceID(2)))
	id3 := key.TraceID(3)
	js := fmt.Sprintf(`{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"vllm"}}]},
	  "scopeSpans":[{"scope":{"name":"vllm.llm_engine"},"spans":[
	    {"traceId":"%s","spanId":"0102030405060708","parentSpanId":"a1a2a3a4a5a6a7a8","name":"llm_request","kind":2,
	     "startTimeUnixNano":"1700000000000000000","endTimeUnixNano":"1700000001000000000",
	     "attributes":[{"key":"gen_ai.latency.time_in_queue","value":{"doubleValue":0.125}}]},
	    {"traceId":"%s","spanId":"0102030405060709","name":"other"}]}]}]}`,
		hex.EncodeToString(id3[:]), hex.EncodeToString(make([]byte, 15))+"01")
	if code := post(t, h, "application/json", []byte(js)); code != 200 {
		t.Fatalf("JSON export: status %d", code)
	}
	// Outside the plan: index 10 of a 10-request run.
	exportProto(t, h, traces(key.TraceID(10)))
	if !r.Wait(3, time.Now().Add(5*time.Second), nil) {
		t.Fatal("3 requests with spans never counted")
	}
	c := r.Close()
	if c.SpansReceived != 8 || c.SpansKept != 4 || c.SpansOtherTraces != 4 || c.SpansDroppedOverCap != 0 || c.RequestsWithSpans != 3 {
		t.Fatalf("counts %+v", c)
	}
	if c.Transports[servertrace.TransportGRPC].Requests != 2 || c.Transports[servertrace.TransportHTTPProtobuf].Requests != 2 ||
		c.Transports[servertrace.TransportHTTPJSON].Requests != 1 || c.Transports[servertrace.TransportHTTPJSON].Spans != 2 {
		t.Fatalf("transports %+v", c.Transports)
	}
	lines := out.lines(t)
	if len(lines) != 3 || c.File != servertrace.FileName || c.BytesKept != int64(out.b.Len()) {
		t.Fatalf("%d lines, counts %+v", len(lines), c)
	}
	want := []string{servertrace.TransportGRPC, servertrace.TransportHTTPProtobuf, servertrace.TransportHTTPJSON}
	var u ptrace.JSONUnmarshaler
	for i, l := range lines {
		if l.FormatVersion != servertrace.FormatVersion || l.Transport != want[i] || l.ReceivedUnixNs == 0 {
			t.Fatalf("line %d: %+v", i, l)
		}
		td, err := u.UnmarshalTraces(l.Traces)
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		s := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
		for j := 0; j < s.Len(); j++ {
			if i, ok := key.Index(s.At(j).TraceID()); !ok || i >= 10 {
				t.Fatalf("kept a span of trace %s", s.At(j).TraceID())
			}
		}
	}
	// The JSON span is kept as received: its parent, attributes and times.
	td, _ := u.UnmarshalTraces(lines[2].Traces)
	s := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	q, _ := s.Attributes().Get("gen_ai.latency.time_in_queue")
	if s.ParentSpanID().String() != "a1a2a3a4a5a6a7a8" || q.Double() != 0.125 || s.StartTimestamp() != 1700000000000000000 {
		t.Fatalf("span %s parent %s queue %v", s.Name(), s.ParentSpanID(), q.Double())
	}
}

// TestCapAndFlood floods the receiver with other traces' spans from many clients at once
// and fills the file to its cap: the run's spans beyond it are counted dropped, the file
// stays under the cap and the heap bounded.
func TestCapAndFlood(t *testing.T) {
	key := tracectx.NewKey("plan", 1, "")
	other := tracectx.NewKey("other", 1, "")
	r, out := start(t, Options{MaxBytes: 4000, MaxRequestBytes: 1 << 20})
	_, h := r.Addrs()
	r.SetKey(key, 1000)
	big := make([][16]byte, 2000)
	for i := range big {
		big[i] = other.TraceID(uint32(i))
	}
	b, err := ptraceotlp.NewExportRequestFromTraces(traces(big...)).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var wg sync.WaitGroup
	var peak uint64
	var peakMu sync.Mutex
	for c := 0; c < 8; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 15; i++ {
				post(t, h, "application/x-protobuf", b)
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				peakMu.Lock()
				peak = max(peak, m.HeapInuse)
				peakMu.Unlock()
			}
		}()
	}
	for i := uint32(0); i < 100; i++ {
		exportProto(t, h, traces(key.TraceID(i)))
	}
	wg.Wait()
	// One request over MaxRequestBytes is refused unread.
	huge := bytes.Repeat([]byte{0}, 2<<20)
	if code := post(t, h, "application/x-protobuf", huge); code < 400 {
		t.Fatalf("a 2 MiB request over the 1 MiB cap: status %d", code)
	}
	c := r.Close()
	if c.SpansOtherTraces != 8*15*2000 {
		t.Fatalf("other traces %d, want %d", c.SpansOtherTraces, 8*15*2000)
	}
	if c.SpansKept+c.SpansDroppedOverCap != 100 || c.SpansDroppedOverCap == 0 || c.BytesKept > 4000 || int64(out.b.Len()) != c.BytesKept {
		t.Fatalf("counts %+v, file %d bytes", c, out.b.Len())
	}
	if int(c.SpansKept) != c.RequestsWithSpans || len(out.lines(t)) != int(c.SpansKept) {
		t.Fatalf("kept %d spans of %d requests in %d lines", c.SpansKept, c.RequestsWithSpans, len(out.lines(t)))
	}
	// 120 requests of ~100 KiB each went through; what stays in use is a few in flight.
	if grew := int64(peak) - int64(before.HeapInuse); grew > 64<<20 {
		t.Fatalf("heap grew %d MiB under the flood", grew>>20)
	}
}

// TestBindError names the address that could not be bound.
func TestBindError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = Start(Options{GRPCAddr: l.Addr().String(), Out: &syncBuf{}})
	if err == nil || !strings.Contains(err.Error(), l.Addr().String()) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error %v", err)
	}
	_, err = Start(Options{GRPCAddr: "127.0.0.1:0", HTTPAddr: l.Addr().String(), Out: &syncBuf{}})
	if err == nil || !strings.Contains(err.Error(), l.Addr().String()) {
		t.Fatalf("error %v", err)
	}
}

// TestWaitEarly ends the wait as soon as every request has its span, long before the
// deadline, and a span arriving after the last response but within it is kept.
func TestWaitEarly(t *testing.T) {
	key := tracectx.NewKey("plan", 1, "")
	r, _ := start(t, Options{})
	g, _ := r.Addrs()
	r.SetKey(key, 2)
	exportGRPC(t, g, traces(key.TraceID(0)))
	go func() {
		time.Sleep(200 * time.Millisecond)
		exportGRPC(t, g, traces(key.TraceID(1)))
	}()
	t0 := time.Now()
	if !r.Wait(2, time.Now().Add(30*time.Second), nil) {
		t.Fatal("wait did not see both requests")
	}
	if d := time.Since(t0); d > 10*time.Second {
		t.Fatalf("waited %v", d)
	}
	if c := r.Close(); c.SpansKept != 2 {
		t.Fatalf("counts %+v", c)
	}
}
