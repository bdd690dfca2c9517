package http1

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay/internal/testserver"
)

type exchangeBench struct {
	c     *NetConn
	t     *Target
	eb    Buffers
	q     rawlog.Request
	body  []byte
	start time.Time
	now   func() int64
	after func(int64)
}

func newExchangeBench(t testing.TB, addr string) *exchangeBench {
	hc := &HeadConfig{Method: "POST", Paths: []string{"/v1/chat/completions"}, Headers: [][2]string{{"Content-Type", "application/json"}}}
	tg, err := NewTarget("http://"+addr, hc, &tls.Config{})
	if err != nil {
		t.Fatal(err)
	}
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	x := &exchangeBench{c: &NetConn{NC: nc}, t: tg, body: []byte(`{"model":"m","stream":true}`), start: time.Now()}
	x.eb.rbuf = make([]byte, readBufSize)
	x.now = func() int64 { return int64(time.Since(x.start)) }
	x.after = func(int64) {}
	return x
}

func (x *exchangeBench) do(t testing.TB) {
	x.q.ReadNs, x.q.ReadEnd, x.q.Body = x.q.ReadNs[:0], x.q.ReadEnd[:0], x.q.Body[:0]
	res, err := Exchange(x.c, x.t.Heads[0], x.body, "X-Correlation-ID", 42, &x.eb, &x.q, x.now, x.after)
	if res != OK || x.c.Broken {
		t.Fatalf("exchange: %v %v broken=%v", res, err, x.c.Broken)
	}
	x.c.Used = true
}

// The read path allocates nothing: a whole request on a kept-alive connection, however many
// reads its response takes, allocates zero bytes once the buffers have grown.
func TestExchangeAllocatesNothing(t *testing.T) {
	for _, events := range []int{1, 64, 512} {
		x := newExchangeBench(t, testserver.RawSSE(t, events))
		x.do(t) // grow buffers
		x.do(t)
		if n := testing.AllocsPerRun(20, func() { x.do(t) }); n != 0 {
			t.Fatalf("%d events: %v allocations per request (%d reads)", events, n, len(x.q.ReadNs))
		}
		if testserver.CountSSEData(x.q.Body) != events || len(x.q.ReadNs) == 0 {
			t.Fatalf("%d events: body has %d", events, testserver.CountSSEData(x.q.Body))
		}
	}
	// Nor does the look at a pooled connection before its reuse (conn.unsolicited).
	x := newExchangeBench(t, testserver.RawSSE(t, 8))
	c, err := Dial(context.Background(), &net.Dialer{}, x.t, 0, time.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer c.NC.Close()
	x.c = c
	x.do(t)
	x.do(t)
	if n := testing.AllocsPerRun(20, func() {
		if x.c.Unsolicited() {
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
			var eb Buffers
			eb.rbuf = make([]byte, readBufSize)
			var q rawlog.Request
			ResetResponse(&q)
			var rp Parser
			rp.Reset(&eb)
			// the head alone, through the read buffer
			sp := rp.Space(&eb, &q)
			n := copy(sp, c.head)
			if end, _, err := rp.OnRead(&Conn{}, &eb, n, 1, &q); end || err != nil || !rp.headDone {
				t.Fatalf("%s: head: end %v, %v", c.name, end, err)
			}
			wire := c.body
			for len(wire) > 0 {
				sp := rp.Space(&eb, &q)
				if len(sp) == 0 || &sp[0] != &q.Body[:len(q.Body)+1][len(q.Body)] {
					t.Fatalf("%s split %d: the read goes elsewhere than the body's end", c.name, split)
				}
				n := copy(sp, wire[:min(split, len(wire))])
				wire = wire[n:]
				base := &q.Body[:1][0]
				end, res, err := rp.OnRead(&Conn{}, &eb, n, 2, &q)
				if &q.Body[:1][0] != base {
					t.Fatalf("%s split %d: the body moved to another buffer while decoding", c.name, split)
				}
				if end != (len(wire) == 0) || res != OK || err != nil {
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
		x := &exchangeBench{c: &NetConn{NC: mc}, body: []byte(`{"model":"m","stream":true}`), start: time.Now()}
		hc := &HeadConfig{Method: "POST", Paths: []string{"/v1/chat/completions"}}
		x.t, _ = NewTarget("http://127.0.0.1:9", hc, &tls.Config{})
		x.eb.rbuf = make([]byte, readBufSize)
		x.now = func() int64 { return int64(time.Since(x.start)) }
		x.after = func(int64) {}
		x.do(b)
		mc.reads = 0
		b.ReportAllocs()
		b.ResetTimer()
		u0, s0 := processCPU()
		for i := 0; i < b.N; i++ {
			x.do(b)
		}
		u1, s1 := processCPU()
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
			if testserver.CountSSEData(all) != events {
				b.Fatalf("net/http read %d events", testserver.CountSSEData(all))
			}
		}
		once()
		mc.mu.Lock()
		mc.reads = 0
		mc.mu.Unlock()
		b.ReportAllocs()
		b.ResetTimer()
		u0, s0 := processCPU()
		for i := 0; i < b.N; i++ {
			once()
		}
		u1, s1 := processCPU()
		b.StopTimer()
		mc.mu.Lock()
		reads := mc.reads
		mc.mu.Unlock()
		b.ReportMetric(float64(reads)/float64(b.N), "reads/op")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(reads), "ns/read")
		b.ReportMetric(float64(u1-u0+s1-s0)/float64(reads), "cpu-ns/read")
	})
}

func TestMergeHeaders(t *testing.T) {
	got, err := MergeHeaders(map[string]string{"Content-Type": "application/json", "openai-organization": "1"},
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
	got, _ = MergeHeaders(map[string]string{"anthropic-version": "2023-06-01"}, nil, "sk-1")
	if fmt.Sprint(got) != fmt.Sprint([][2]string{{"anthropic-version", "2023-06-01"}, {"x-api-key", "sk-1"}, {"Content-Type", "application/json"}}) {
		t.Fatalf("anthropic key: %v", got)
	}
	got, _ = MergeHeaders(nil, []string{"Anthropic-Version: 2023-06-01", "X-Api-Key: other"}, "sk-1")
	if fmt.Sprint(got) != fmt.Sprint([][2]string{{"Anthropic-Version", "2023-06-01"}, {"X-Api-Key", "other"}, {"Content-Type", "application/json"}}) {
		t.Fatalf("user x-api-key not kept: %v", got)
	}
	got, _ = MergeHeaders(nil, []string{"Authorization: Basic x"}, "sk-1")
	if fmt.Sprint(got) != fmt.Sprint([][2]string{{"Authorization", "Basic x"}, {"Content-Type", "application/json"}}) {
		t.Fatalf("user Authorization not kept: %v", got)
	}
	for _, bad := range []string{"NoColon", "Content-Length: 5", "Bad Name: x", ": v", "Host: x"} {
		if _, err := MergeHeaders(nil, []string{bad}, ""); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := MergeHeaders(nil, []string{"Authorization: secret-token"}, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := MergeHeaders(nil, []string{"Authorization secret-token"}, ""); err == nil || strings.Contains(err.Error(), "secret") {
		t.Fatalf("malformed header error leaks or is missing: %v", err)
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
		hc := &HeadConfig{Method: "POST", Paths: []string{c.path}}
		tg, err := NewTarget(c.base, hc, &tls.Config{})
		if err != nil {
			t.Fatalf("%s: %v", c.base, err)
		}
		line, _, _ := strings.Cut(string(tg.Heads[0]), "\r\n")
		if line != c.want {
			t.Errorf("base %q path %q: request line %q, want %q", c.base, c.path, line, c.want)
		}
	}
}

// errText never logs a credential of the request URL: an HTTP client's errors hold it.
func TestErrTextRedacts(t *testing.T) {
	err := &url.Error{Op: "Post", URL: "http://h:1/v1/chat/completions?api_key=s3cr3t", Err: errors.New("http: server gave HTTP response to HTTPS client")}
	got := ErrText(err)
	if strings.Contains(got, "s3cr3t") || !strings.Contains(got, "api_key=REDACTED") || !strings.Contains(got, "HTTP response to HTTPS client") {
		t.Errorf("errText = %q", got)
	}
}

// The exchange itself never holds more than the limit: the body's buffer stops growing at
// it, however long the stream, and the connection is closed (the rest is never read).
func TestEndlessStreamMemoryBounded(t *testing.T) {
	srv := testserver.Big(t)
	x := newExchangeBench(t, strings.TrimPrefix(srv.URL, "http://"))
	x.body, _ = json.Marshal(testserver.BigJob{Framing: "endless"})
	const limit = 1<<20 + 12345
	x.eb.maxBody = limit
	x.q.Body = make([]byte, 0, 16<<10)
	res, err := Exchange(x.c, x.t.Heads[0], x.body, "", 0, &x.eb, &x.q, x.now, x.after)
	if res != TooLarge || err != errBodyTooLarge || !x.c.Broken {
		t.Fatalf("exchange: %v %v broken=%v", res, err, x.c.Broken)
	}
	if len(x.q.Body) != limit || cap(x.q.Body) > limit {
		t.Fatalf("body %d bytes in a buffer of %d, limit %d", len(x.q.Body), cap(x.q.Body), limit)
	}
	if got := FailText(res, err, "", len(x.q.Body), &x.eb); got != fmt.Sprintf("response too large: body over max-response-bytes (%d bytes); the first %d bytes are kept", limit, limit) {
		t.Fatalf("err text %q", got)
	}
}

// Reads are bounded too: a response dribbled one byte per read (or only framing, which adds
// no body byte) cannot grow the read table past one read per 12 bytes of the limit.
func TestTooManyReads(t *testing.T) {
	segs := [][]byte{[]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")}
	for range 3000 {
		segs = append(segs, []byte("1\r\nx\r\n"))
	}
	segs = append(segs, []byte("0\r\n\r\n"))
	mc := newMemConn(segs)
	x := &exchangeBench{c: &NetConn{NC: mc}, body: []byte(`{}`), start: time.Now()}
	x.t, _ = NewTarget("http://127.0.0.1:9", &HeadConfig{Method: "POST", Paths: []string{"/"}}, &tls.Config{})
	x.eb.rbuf = make([]byte, readBufSize)
	x.eb.maxBody = 24 << 10 // 2,048 reads
	x.now = func() int64 { return int64(time.Since(x.start)) }
	x.after = func(int64) {}
	res, err := Exchange(x.c, x.t.Heads[0], x.body, "", 0, &x.eb, &x.q, x.now, x.after)
	if res != TooLarge || err != errTooManyReads || len(x.q.ReadNs) != 2048 {
		t.Fatalf("exchange: %v %v, %d reads", res, err, len(x.q.ReadNs))
	}
	if got := FailText(res, err, "", len(x.q.Body), &x.eb); !strings.HasPrefix(got, "response too large: more than 2048 reads") {
		t.Fatalf("err text %q", got)
	}
}

// The decoder keeps exactly the limit, for every framing and however the bytes are split.
func TestBodyDecoderLimit(t *testing.T) {
	for _, c := range []struct {
		name string
		h    respHead
		in   string
		want string
		over bool
	}{
		{"length under", respHead{framing: frameLength, length: 5}, "hello", "hello", false},
		{"length at", respHead{framing: frameLength, length: 8}, "abcdefgh", "abcdefgh", false},
		{"length over", respHead{framing: frameLength, length: 12}, "abcdefghijkl", "abcdefgh", true},
		{"close over", respHead{framing: frameClose}, "abcdefghijkl", "abcdefgh", true},
		{"chunked at", respHead{framing: frameChunked}, "4\r\nabcd\r\n4\r\nefgh\r\n0\r\n\r\n", "abcdefgh", false},
		{"chunked over", respHead{framing: frameChunked}, "4\r\nabcd\r\n6\r\nefghij\r\n0\r\n\r\n", "abcdefgh", true},
	} {
		for split := 1; split <= len(c.in); split++ {
			var d bodyDecoder
			d.reset(&c.h, 8)
			var out []byte
			for i := 0; i < len(c.in); i += split {
				var err error
				if out, err = d.feed(out, []byte(c.in[i:min(i+split, len(c.in))])); err != nil {
					t.Fatalf("%s split %d: %v", c.name, split, err)
				}
			}
			if string(out) != c.want || d.over != c.over || cap(out) > 8 {
				t.Fatalf("%s split %d: %q over=%v cap %d, want %q over=%v", c.name, split, out, d.over, cap(out), c.want, c.over)
			}
		}
	}
}

// processCPU is the process's user and system CPU time so far, in nanoseconds.
func processCPU() (user, sys int64) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return -1, -1
	}
	return ru.Utime.Nano(), ru.Stime.Nano()
}
