package replay

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/jsonwire"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay/schedule"
)

// rawServer answers every request on a connection with a chunked SSE response of n events,
// each written with its own write call, so the client sees many reads. Keep-alive.
func rawServer(t testing.TB, events int) (addr string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	ev := []byte("data: {\"choices\":[{\"delta\":{\"content\":\"tok \"}}]}\n\n")
	chunk := append([]byte(strconv.FormatInt(int64(len(ev)), 16)+"\r\n"), ev...)
	chunk = append(chunk, "\r\n"...)
	head := []byte("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
	tail := []byte("0\r\n\r\n")
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				// Allocation-free, so that AllocsPerRun measures the client alone.
				buf := make([]byte, 64<<10)
				have := 0
				for {
					end, n := -1, 0
					for {
						if end = bytes.Index(buf[:have], []byte("\r\n\r\n")); end >= 0 {
							if i := bytes.Index(buf[:end], []byte("Content-Length: ")); i >= 0 {
								for _, d := range buf[i+16 : end] {
									if d < '0' || d > '9' {
										break
									}
									n = n*10 + int(d-'0')
								}
							}
							if have >= end+4+n {
								break
							}
						}
						k, err := c.Read(buf[have:])
						if err != nil {
							return
						}
						have += k
					}
					have = copy(buf, buf[end+4+n:have])
					c.Write(head)
					for i := 0; i < events; i++ {
						c.Write(chunk)
					}
					c.Write(tail)
				}
			}(c)
		}
	}()
	return ln.Addr().String()
}

type exchangeBench struct {
	c     *conn
	t     *target
	eb    exchangeBuffers
	q     rawlog.Request
	body  []byte
	start time.Time
	now   func() int64
	after func(int64)
}

func newExchangeBench(t testing.TB, addr string) *exchangeBench {
	hc := &headConfig{method: "POST", paths: []string{"/v1/chat/completions"}, headers: [][2]string{{"Content-Type", "application/json"}}}
	tg, err := newTarget("http://"+addr, hc, &tls.Config{})
	if err != nil {
		t.Fatal(err)
	}
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	x := &exchangeBench{c: &conn{nc: nc}, t: tg, body: []byte(`{"model":"m","stream":true}`), start: time.Now()}
	x.eb.rbuf = make([]byte, readBufSize)
	x.now = func() int64 { return int64(time.Since(x.start)) }
	x.after = func(int64) {}
	return x
}

func (x *exchangeBench) do(t testing.TB) {
	x.q.ReadNs, x.q.ReadEnd, x.q.Body = x.q.ReadNs[:0], x.q.ReadEnd[:0], x.q.Body[:0]
	res, err := exchange(x.c, x.t.heads[0], x.body, "X-Correlation-ID", 42, &x.eb, &x.q, x.now, x.after)
	if res != exOK || x.c.broken {
		t.Fatalf("exchange: %v %v broken=%v", res, err, x.c.broken)
	}
	x.c.used = true
}

// The read path allocates nothing: a whole request on a kept-alive connection, however many
// reads its response takes, allocates zero bytes once the buffers have grown.
func TestExchangeAllocatesNothing(t *testing.T) {
	for _, events := range []int{1, 64, 512} {
		x := newExchangeBench(t, rawServer(t, events))
		x.do(t) // grow buffers
		x.do(t)
		if n := testing.AllocsPerRun(20, func() { x.do(t) }); n != 0 {
			t.Fatalf("%d events: %v allocations per request (%d reads)", events, n, len(x.q.ReadNs))
		}
		if countSSEData(x.q.Body) != events || len(x.q.ReadNs) == 0 {
			t.Fatalf("%d events: body has %d", events, countSSEData(x.q.Body))
		}
	}
	// Nor does the look at a pooled connection before its reuse (conn.unsolicited).
	x := newExchangeBench(t, rawServer(t, 8))
	c, err := dial(context.Background(), &net.Dialer{}, x.t, 0, time.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer c.nc.Close()
	x.c = c
	x.do(t)
	x.do(t)
	if n := testing.AllocsPerRun(20, func() {
		if x.c.unsolicited() {
			t.Fatal("a kept-alive connection with nothing on it looks unsolicited")
		}
		x.do(t)
	}); n != 0 {
		t.Fatalf("%v allocations per reuse", n)
	}
}

// Once the head is parsed, each read lands straight in the request's body buffer, where it
// stays: a Content-Length body is never copied, and a chunked one only moves left over its
// framing, in the same buffer. The reads' pieces are split at every offset, so pieces that
// cut a chunk-size line, its CRLF or the data all take the same path.
func TestReadsLandInBody(t *testing.T) {
	ev := strings.Repeat("data: {\"choices\":[{\"delta\":{\"content\":\"tok\"}}]}\n\n", 3)
	var chunked, want strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&chunked, "%x\r\n%s\r\n", len(ev), ev)
		want.WriteString(ev)
	}
	chunked.WriteString("0\r\n\r\n")
	for _, c := range []struct{ name, head, body string }{
		{"length", fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", want.Len()), want.String()},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", chunked.String()},
	} {
		for _, split := range []int{1, 7, 100, 4096} {
			var eb exchangeBuffers
			eb.rbuf = make([]byte, readBufSize)
			var q rawlog.Request
			resetResponse(&q)
			var rp respParser
			rp.reset(&eb)
			// the head alone, through the read buffer
			sp := rp.space(&eb, &q)
			n := copy(sp, c.head)
			if end, _, err := rp.onRead(&conn{}, &eb, n, 1, &q); end || err != nil || !rp.headDone {
				t.Fatalf("%s: head: end %v, %v", c.name, end, err)
			}
			wire := c.body
			for len(wire) > 0 {
				sp := rp.space(&eb, &q)
				if len(sp) == 0 || &sp[0] != &q.Body[:len(q.Body)+1][len(q.Body)] {
					t.Fatalf("%s split %d: the read goes elsewhere than the body's end", c.name, split)
				}
				n := copy(sp, wire[:min(split, len(wire))])
				wire = wire[n:]
				base := &q.Body[:1][0]
				end, res, err := rp.onRead(&conn{}, &eb, n, 2, &q)
				if &q.Body[:1][0] != base {
					t.Fatalf("%s split %d: the body moved to another buffer while decoding", c.name, split)
				}
				if end != (len(wire) == 0) || res != exOK || err != nil {
					t.Fatalf("%s split %d: %d bytes left: end %v %v %v", c.name, split, len(wire), end, res, err)
				}
			}
			if string(q.Body) != want.String() {
				t.Fatalf("%s split %d: body %d bytes, want %d", c.name, split, len(q.Body), want.Len())
			}
		}
	}
}

// memConn is an in-memory connection that answers each request with a canned response
// delivered one segment per Read, so a benchmark measures a client's own cost per read
// without the kernel's.
type memConn struct {
	mu      sync.Mutex
	cond    *sync.Cond
	segs    [][]byte
	next    int
	off     int
	pending bool
	closed  bool
	reads   int
}

func newMemConn(segs [][]byte) *memConn {
	c := &memConn{segs: segs}
	c.cond = sync.NewCond(&c.mu)
	return c
}

func (c *memConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	if !c.pending {
		c.pending, c.next, c.off = true, 0, 0
		c.cond.Broadcast()
	}
	c.mu.Unlock()
	return len(p), nil
}

func (c *memConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for !c.pending && !c.closed {
		c.cond.Wait()
	}
	if c.closed {
		return 0, io.EOF
	}
	n := copy(p, c.segs[c.next][c.off:])
	c.off += n
	c.reads++
	if c.off == len(c.segs[c.next]) {
		c.next, c.off = c.next+1, 0
		if c.next == len(c.segs) {
			c.pending = false
		}
	}
	return n, nil
}

func (c *memConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.cond.Broadcast()
	c.mu.Unlock()
	return nil
}

func (c *memConn) LocalAddr() net.Addr              { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1} }
func (c *memConn) RemoteAddr() net.Addr             { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 2} }
func (c *memConn) SetDeadline(time.Time) error      { return nil }
func (c *memConn) SetReadDeadline(time.Time) error  { return nil }
func (c *memConn) SetWriteDeadline(time.Time) error { return nil }

// sseSegments is a chunked SSE response of n events, one segment per event.
func sseSegments(n int) [][]byte {
	ev := "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" token\"}}]}\n\n"
	segs := [][]byte{[]byte("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")}
	for i := 0; i < n; i++ {
		segs = append(segs, []byte(fmt.Sprintf("%x\r\n%s\r\n", len(ev), ev)))
	}
	return append(segs, []byte("0\r\n\r\n"))
}

// BenchmarkReadPath compares the worker's client with net/http reading the same streamed
// response (256 SSE events, one per read) from an in-memory connection: the client's own
// CPU time and allocations per read, each read timestamped, bytes kept.
func BenchmarkReadPath(b *testing.B) {
	const events = 256
	b.Run("lean", func(b *testing.B) {
		mc := newMemConn(sseSegments(events))
		x := &exchangeBench{c: &conn{nc: mc}, body: []byte(`{"model":"m","stream":true}`), start: time.Now()}
		hc := &headConfig{method: "POST", paths: []string{"/v1/chat/completions"}}
		x.t, _ = newTarget("http://127.0.0.1:9", hc, &tls.Config{})
		x.eb.rbuf = make([]byte, readBufSize)
		x.now = func() int64 { return int64(time.Since(x.start)) }
		x.after = func(int64) {}
		x.do(b)
		mc.reads = 0
		b.ReportAllocs()
		b.ResetTimer()
		u0, s0 := cpuTime()
		for i := 0; i < b.N; i++ {
			x.do(b)
		}
		u1, s1 := cpuTime()
		b.ReportMetric(float64(mc.reads)/float64(b.N), "reads/op")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(mc.reads), "ns/read")
		b.ReportMetric(float64(u1-u0+s1-s0)/float64(mc.reads), "cpu-ns/read")
	})
	b.Run("nethttp", func(b *testing.B) {
		mc := newMemConn(sseSegments(events))
		tr := &http.Transport{MaxIdleConnsPerHost: 1, DialContext: func(context.Context, string, string) (net.Conn, error) { return mc, nil }}
		cl := &http.Client{Transport: tr}
		body := []byte(`{"model":"m","stream":true}`)
		buf := make([]byte, readBufSize)
		var times []int64
		var all []byte
		start := time.Now()
		once := func() {
			req, _ := http.NewRequest("POST", "http://127.0.0.1:9/v1/chat/completions", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := cl.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			times, all = times[:0], all[:0]
			for {
				k, err := resp.Body.Read(buf)
				times = append(times, int64(time.Since(start)))
				all = append(all, buf[:k]...)
				if err != nil {
					break
				}
			}
			resp.Body.Close()
			if countSSEData(all) != events {
				b.Fatalf("net/http read %d events", countSSEData(all))
			}
		}
		once()
		mc.mu.Lock()
		mc.reads = 0
		mc.mu.Unlock()
		b.ReportAllocs()
		b.ResetTimer()
		u0, s0 := cpuTime()
		for i := 0; i < b.N; i++ {
			once()
		}
		u1, s1 := cpuTime()
		b.StopTimer()
		mc.mu.Lock()
		reads := mc.reads
		mc.mu.Unlock()
		b.ReportMetric(float64(reads)/float64(b.N), "reads/op")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(reads), "ns/read")
		b.ReportMetric(float64(u1-u0+s1-s0)/float64(reads), "cpu-ns/read")
	})
}

// https URLs work through crypto/tls, with a CA file.
func TestTLS(t *testing.T) {
	ts := &testServer{}
	ts.Server = httptest.NewUnstartedServer(http.HandlerFunc(ts.handle))
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the failed handshakes below are expected
	ts.StartTLS()
	defer ts.Close()
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw})
	if err := os.WriteFile(ca, pemBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	plan := singleTurn(3, job{N: 20, Stream: true}, func(i int) int64 { return int64(i) * 1e6 }).write(t, dir)
	res, reqs, _ := runInProcess(t, workerConfig{Plan: plan, URLs: []string{ts.URL}, TLSCAFile: ca}, nil)
	if res.Counts.Completed != 3 || countSSEData(reqs[2].Body) != 20 {
		t.Fatalf("counts %+v err %q", res.Counts, reqs[0].Err)
	}
	// Without the CA the handshake fails, and that is a logged outcome.
	res, reqs, _ = runInProcess(t, workerConfig{Plan: plan, URLs: []string{ts.URL}}, nil)
	if res.Counts.Failed != 3 || !strings.Contains(reqs[0].Err, "certificate") {
		t.Fatalf("untrusted: counts %+v err %q", res.Counts, reqs[0].Err)
	}
}

// A pooled connection the server closed while idle is replaced without failing the request.
func TestStaleConnectionRetried(t *testing.T) {
	srv := newTestServer(t, func(s *http.Server) { s.IdleTimeout = 30 * time.Millisecond })
	plan := singleTurn(4, job{N: 1, Stream: true}, func(i int) int64 { return int64(i) * 100e6 }).write(t, t.TempDir())
	res, reqs, _ := runInProcess(t, workerConfig{Plan: plan, URLs: []string{srv.URL}}, nil)
	if res.Counts.Completed != 4 {
		t.Fatalf("counts %+v: %q %q", res.Counts, reqs[1].Err, reqs[2].Err)
	}
	if srv.conns.Load() != 4 {
		t.Fatalf("%d connections", srv.conns.Load())
	}
}

func TestMergeHeaders(t *testing.T) {
	got, err := mergeHeaders(map[string]string{"Content-Type": "application/json", "openai-organization": "1"},
		[]string{"content-type: text/x", "X-A:  b "}, "sk-1")
	if err != nil {
		t.Fatal(err)
	}
	// Plan headers sorted (upper case first), user headers replace in place, then the key.
	want := [][2]string{{"content-type", "text/x"}, {"openai-organization", "1"}, {"X-A", "b"}, {"Authorization", "Bearer sk-1"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v want %v", got, want)
	}
	// The Messages API (anthropic-version, from the plan or the user) takes the key as x-api-key.
	got, _ = mergeHeaders(map[string]string{"anthropic-version": "2023-06-01"}, nil, "sk-1")
	if fmt.Sprint(got) != fmt.Sprint([][2]string{{"anthropic-version", "2023-06-01"}, {"x-api-key", "sk-1"}, {"Content-Type", "application/json"}}) {
		t.Fatalf("anthropic key: %v", got)
	}
	got, _ = mergeHeaders(nil, []string{"Anthropic-Version: 2023-06-01", "X-Api-Key: other"}, "sk-1")
	if fmt.Sprint(got) != fmt.Sprint([][2]string{{"Anthropic-Version", "2023-06-01"}, {"X-Api-Key", "other"}, {"Content-Type", "application/json"}}) {
		t.Fatalf("user x-api-key not kept: %v", got)
	}
	got, _ = mergeHeaders(nil, []string{"Authorization: Basic x"}, "sk-1")
	if fmt.Sprint(got) != fmt.Sprint([][2]string{{"Authorization", "Basic x"}, {"Content-Type", "application/json"}}) {
		t.Fatalf("user Authorization not kept: %v", got)
	}
	for _, bad := range []string{"NoColon", "Content-Length: 5", "Bad Name: x", ": v", "Host: x"} {
		if _, err := mergeHeaders(nil, []string{bad}, ""); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := mergeHeaders(nil, []string{"Authorization: secret-token"}, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := mergeHeaders(nil, []string{"Authorization secret-token"}, ""); err == nil || strings.Contains(err.Error(), "secret") {
		t.Fatalf("malformed header error leaks or is missing: %v", err)
	}
}

func TestRedactArgs(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"replay --api-key sk-1 --plan p", "replay --api-key REDACTED --plan p"},
		{"replay --api-key=sk-1", "replay --api-key=REDACTED"},
		{"replay -H Authorization:Bearer-x -H X-A:b", "replay -H Authorization: REDACTED -H X-A:b"},
		{"replay --header=x-api-key:k", "replay --header=x-api-key: REDACTED"},
		{"replay -Hcookie:a=b", "replay -Hcookie: REDACTED"},
		{"replay --url http://u:pw@h:1/", "replay --url http://REDACTED@h:1/"},
		{"replay --plan p", "replay --plan p"},
	} {
		got := strings.Join(RedactArgs(strings.Fields(c.in)), " ")
		if got != c.want {
			t.Errorf("%q: got %q want %q", c.in, got, c.want)
		}
	}
}

func TestParseCPUList(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
		err  bool
	}{
		{"0", "[0]", false},
		{"0-3,6", "[0 1 2 3 6]", false},
		{" 1 , 2 ", "[1 2]", false},
		{"3-1", "", true},
		{"1,1", "", true},
		{"a", "", true},
		{"1,", "", true},
		{"", "", true},
	} {
		got, err := ParseCPUList(c.in)
		if (err != nil) != c.err || (!c.err && fmt.Sprint(got) != c.want) {
			t.Errorf("%q: got %v %v", c.in, got, err)
		}
	}
}

func TestJSONEscapeAndSplice(t *testing.T) {
	got := jsonwire.AppendStringBody(nil, []byte("a\"b\\c\nd\x01\xffé\u2028\b\f"))
	if want := `a\"b\\c\nd\u0001\ufffdé\u2028\b\f`; string(got) != want {
		t.Fatalf("escape: %s want %s", got, want)
	}
	l := live{marker: []byte("@@")}
	hist := [][]byte{[]byte("one"), []byte("two"), []byte("thr\"ee")}
	for _, c := range []struct {
		body      string
		firstTurn uint32
		want      string
	}{
		{`{"a":"@@"}`, 0, `{"a":"one"}`},
		{`["@@","@@","@@"]`, 0, `["one","two","thr\"ee"]`},
		{`["@@","@@","@@","@@"]`, 1, `["","one","two","thr\"ee"]`},
		{`no marker`, 0, `no marker`},
		{`@@@@@@@@`, 0, `onetwothr\"ee`},
	} {
		if got := l.splice(nil, []byte(c.body), hist, c.firstTurn); string(got) != c.want {
			t.Errorf("%s: got %s want %s", c.body, got, c.want)
		}
	}
}

// Sessions are numbered in order of first appearance and dealt to workers and URLs whole;
// a worker's part chains each session's turns into one unit.
func TestWorkerPartAssignment(t *testing.T) {
	ps := &planSpec{}
	// Sessions 9, 5, 9, 7, 5, 9 (turns), then singles.
	sessions := []uint32{9, 5, 9, 7, 5, 9, 1, 2, 3}
	turns := map[uint32]uint32{}
	for i, s := range sessions {
		delay := int64(-1)
		if turns[s] > 0 {
			delay = 0
		}
		ps.add(mmapds.Record{SendOffsetNs: int64(i), DelayNs: delay, Session: s, Turn: turns[s], Phase: mmapds.PhaseProfile}, []byte("{}"))
		turns[s]++
	}
	p, err := mmapds.Open(ps.write(t, t.TempDir()), mmapds.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ord, n, err := sessionOrdinals(p)
	if err != nil || n != 6 || fmt.Sprint(ord) != "[0 1 0 2 1 0 3 4 5]" {
		t.Fatalf("ordinals %v %d %v", ord, n, err)
	}
	if s := recordsPerWorker(ord, 2); fmt.Sprint(s) != "[5 4]" {
		t.Fatalf("sizes %v", s)
	}
	g, err := schedule.LoadChains(p, ord, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	var records []int32
	for i := int32(0); i < int32(g.Len()); i++ {
		records = append(records, g.Node(i).Index)
	}
	// Ordinals 0 (session 9: records 0, 2, 5), 2 (session 7: 3) and 4 (session 2: 7).
	if fmt.Sprint(records) != "[0 2 3 5 7]" || g.Units() != 3 {
		t.Fatalf("records %v, %d units", records, g.Units())
	}
	// Session 9 is one unit of three records: 0 -> 2 -> 5.
	if g.Parents(1)[0] != 0 || g.Parents(3)[0] != 1 || len(g.Children(3)) != 0 || g.Node(3).Unit() != 0 {
		t.Fatalf("chain: parents %v %v, children of the last %v", g.Parents(1), g.Parents(3), g.Children(3))
	}
	for u := int32(0); u < int32(g.Units()); u++ {
		if k := g.Unit(u).Session; schedule.WorkerOf(k, 2) != 0 || urlOf(k, 3) != int(k)%3 {
			t.Fatalf("unit %d (ordinal %d) on the wrong worker or URL", u, k)
		}
	}
}

// The request line keeps the base URL's path prefix and query on every request, after any
// query the plan's path carries (a base like http://h/openai?api-version=x, as Azure wants).
func TestTargetRequestLine(t *testing.T) {
	for _, c := range []struct{ base, path, want string }{
		{"http://h:8000", "/v1/chat/completions", "POST /v1/chat/completions HTTP/1.1"},
		{"http://h:8000/", "v1/completions", "POST /v1/completions HTTP/1.1"},
		{"http://h/openai/", "/v1/chat/completions", "POST /openai/v1/chat/completions HTTP/1.1"},
		{"http://h/v1?api-version=2024-06-01", "/chat/completions", "POST /v1/chat/completions?api-version=2024-06-01 HTTP/1.1"},
		{"https://h?a=1&b=%20x", "/v1/embeddings", "POST /v1/embeddings?a=1&b=%20x HTTP/1.1"},
		{"http://h/v1?api-version=x", "/generate?stream=1", "POST /v1/generate?stream=1&api-version=x HTTP/1.1"},
		// An OpenAI SDK base_url: its /v1 is not doubled (endpoint.Base).
		{"http://h:8000/v1", "/v1/chat/completions", "POST /v1/chat/completions HTTP/1.1"},
		{"h:8000/openai/v1/", "/v1/responses", "POST /openai/v1/responses HTTP/1.1"},
	} {
		hc := &headConfig{method: "POST", paths: []string{c.path}}
		tg, err := newTarget(c.base, hc, &tls.Config{})
		if err != nil {
			t.Fatalf("%s: %v", c.base, err)
		}
		line, _, _ := strings.Cut(string(tg.heads[0]), "\r\n")
		if line != c.want {
			t.Errorf("base %q path %q: request line %q, want %q", c.base, c.path, line, c.want)
		}
	}
}

// errText never logs a credential of the request URL: an HTTP client's errors hold it.
func TestErrTextRedacts(t *testing.T) {
	err := &url.Error{Op: "Post", URL: "http://h:1/v1/chat/completions?api_key=s3cr3t", Err: errors.New("http: server gave HTTP response to HTTPS client")}
	got := errText(err)
	if strings.Contains(got, "s3cr3t") || !strings.Contains(got, "api_key=REDACTED") || !strings.Contains(got, "HTTP response to HTTPS client") {
		t.Errorf("errText = %q", got)
	}
}
