package replay

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
)

// Servers that answer with bytes meant to hurt the client: a response that never ends, in
// one shape or another. Each must end its request on its own (never by the request
// timeout) and keep the worker's memory within the documented bound.

// hostileServer accepts connections on loopback and hands each to serve after reading the
// request (its head, and its body by Content-Length) unless early is set.
func hostileServer(t testing.TB, early bool, serve func(c net.Conn, br *bufio.Reader)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				if !early && !readRequest(br) {
					return
				}
				serve(c, br)
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// readRequest reads one request's head and body; false at EOF or on a malformed one.
func readRequest(br *bufio.Reader) bool {
	n := 0
	for {
		l, err := br.ReadString('\n')
		if err != nil {
			return false
		}
		l = strings.TrimRight(l, "\r\n")
		if l == "" {
			break
		}
		if k, v, ok := strings.Cut(l, ":"); ok && strings.EqualFold(k, "content-length") {
			n, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	_, err := io.CopyN(io.Discard, br, int64(n))
	return err == nil
}

// endlessly writes head, then piece until the client goes away (or 60 s).
func endlessly(c net.Conn, head string, piece []byte) {
	c.SetWriteDeadline(time.Now().Add(60 * time.Second))
	if _, err := io.WriteString(c, head); err != nil {
		return
	}
	for {
		if _, err := c.Write(piece); err != nil {
			return
		}
	}
}

// runOne replays records (body {}) against url with client, at --max-response-bytes limit
// (0: the default), and returns the manifest and the records.
func runOne(t *testing.T, url, client string, limit int64, recs ...mmapds.Record) (*rawlog.Manifest, map[uint32]rawlog.Request) {
	t.Helper()
	ps := &planSpec{}
	for _, r := range recs {
		ps.add(r, []byte(`{}`))
	}
	ps.meta.Concurrency = 1
	o := testOptions(t, ps.write(t, t.TempDir()), url)
	o.Workers, o.Client, o.MaxResponseBytes = 1, client, limit
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := r.Run()
	if m == nil {
		t.Fatal("no run")
	}
	return m, readRun(t, m, o.OutputDir)
}

var closedLoop = mmapds.Record{SendOffsetNs: mmapds.NoSendOffset, DelayNs: -1, Phase: mmapds.PhaseProfile}

// Responses that never end, in every shape, against both clients, at the default 64 MiB
// --max-response-bytes: each request ends on its own, at once (never by the request
// timeout), with a reason, and the worker's peak memory (run.json max_rss_bytes) stays
// within the documented bound: twice the limit plus the log's buffers (32 MiB) over what
// the same worker costs for a two-byte response. Under the race detector, whose shadow
// memory multiplies every byte, the limit is 4 MiB and memory is not judged.
func TestEndlessResponsesBounded(t *testing.T) {
	limit := int64(DefaultMaxResponseBytes)
	if raceEnabled {
		limit = 4 << 20
	}
	x64k := bytes.Repeat([]byte("x"), 64<<10)
	ev := []byte("data: {\"choices\":[{\"delta\":{\"content\":\"" + strings.Repeat("y", 1000) + "\"}}]}\n\n")
	evs := bytes.Repeat(ev, 64)
	tooLarge := fmt.Sprintf("response too large: body over max-response-bytes (%d bytes); the first %d bytes are kept", limit, limit)
	cases := []struct {
		name  string
		serve func(c net.Conn, br *bufio.Reader)
		want  string // the request's err
	}{
		{"endless stream", func(c net.Conn, _ *bufio.Reader) {
			endlessly(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n", evs)
		}, tooLarge},
		{"one SSE line without a newline", func(c net.Conn, _ *bufio.Reader) {
			endlessly(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: ", x64k)
		}, tooLarge},
		{"chunked, endless", func(c net.Conn, _ *bufio.Reader) {
			endlessly(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", append([]byte("10000\r\n"), append(x64k, "\r\n"...)...))
		}, tooLarge},
		{"endless header", func(c net.Conn, _ *bufio.Reader) {
			endlessly(c, "HTTP/1.1 200 OK\r\nX-Big: ", x64k)
		}, "response headers exceed the 32 KiB read buffer"},
		{"endless chunk extension", func(c net.Conn, _ *bufio.Reader) {
			endlessly(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;ext=", x64k)
		}, "chunk size line longer than 4096 bytes"},
		{"endless trailer", func(c net.Conn, _ *bufio.Reader) {
			endlessly(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-Trailer: ", x64k)
		}, "chunked trailers exceed 32 KiB"},
		{"endless trailers", func(c net.Conn, _ *bufio.Reader) {
			endlessly(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n", bytes.Repeat([]byte("X-T: v\r\n"), 4096))
		}, "chunked trailers exceed 32 KiB"},
		{"1xx flood", func(c net.Conn, _ *bufio.Reader) {
			endlessly(c, "", bytes.Repeat([]byte("HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n"), 1000))
		}, "interim (1xx) response heads exceed the 32 KiB read buffer"},
	}
	for _, client := range []string{ClientLoop, ClientNet} {
		t.Run(client, func(t *testing.T) {
			small := hostileServer(t, false, func(c net.Conn, _ *bufio.Reader) {
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
			})
			m, _ := runOne(t, small, client, limit, closedLoop)
			base := m.Workers[0].MaxRSSBytes
			if runtime.GOOS == "linux" && base == 0 {
				t.Fatal("run.json has no max_rss_bytes")
			}
			bound := base + 2*limit + 32<<20
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					m, reqs := runOne(t, hostileServer(t, false, c.serve), client, limit, closedLoop)
					q := reqs[0]
					rss := m.Workers[0].MaxRSSBytes
					t.Logf("peak RSS %d MiB (%d MiB for a two-byte response; bound %d MiB); %d body bytes, %d reads", rss>>20, base>>20, bound>>20, len(q.Body), len(q.ReadNs))
					if q.Outcome != rawlog.OutcomeFailed || q.Err != c.want {
						t.Errorf("outcome %v, err %q; want failed, %q", q.Outcome, q.Err, c.want)
					}
					if rss > bound && !raceEnabled {
						t.Errorf("worker peak RSS %d MiB, over the bound %d MiB (2 × %d MiB + 32 MiB over %d MiB)", rss>>20, bound>>20, limit>>20, base>>20)
					}
				})
			}
		})
	}
}

// A server that sends ahead: a response on an idle keep-alive connection, before the next
// request was written, is an answer to no request: the next request goes on a new
// connection and gets its own answer, for both clients. A response sent on a fresh
// connection before the request arrives (a server may answer early) is that request's, and
// its reads come after the request was written.
func TestResponsesSentAhead(t *testing.T) {
	for _, client := range []string{ClientLoop, ClientNet} {
		t.Run(client+"/unsolicited on an idle connection", func(t *testing.T) {
			var conns atomic.Int32
			url := hostileServer(t, false, func(c net.Conn, br *bufio.Reader) {
				if conns.Add(1) == 1 {
					io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nFIRST")
					time.Sleep(50 * time.Millisecond) // the client has pooled the connection
					io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nSTALE")
				} else {
					io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nFRESH")
				}
				for readRequest(br) { // and any later request on this connection
					io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nLATER")
				}
			})
			at := func(ms int64) mmapds.Record {
				return mmapds.Record{SendOffsetNs: ms * 1e6, DelayNs: -1, Phase: mmapds.PhaseProfile}
			}
			_, reqs := runOne(t, url, client, 0, at(0), at(400))
			a, b := reqs[0], reqs[1]
			if string(a.Body) != "FIRST" || string(b.Body) != "FRESH" || b.ConnReused {
				t.Errorf("bodies %q, %q (second reused its connection: %v): want FIRST, then FRESH on a new connection", a.Body, b.Body, b.ConnReused)
			}
		})
		t.Run(client+"/early on a fresh connection", func(t *testing.T) {
			url := hostileServer(t, true, func(c net.Conn, br *bufio.Reader) {
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nEARLY")
				readRequest(br)
			})
			_, reqs := runOne(t, url, client, 0, closedLoop)
			q := reqs[0]
			if q.Outcome != rawlog.OutcomeCompleted || string(q.Body) != "EARLY" || q.HeaderNs < q.WriteEndNs || len(q.ReadNs) == 0 || q.ReadNs[0] < q.WriteEndNs {
				t.Errorf("outcome %v %q, body %q, write end %d, head %d, reads %v", q.Outcome, q.Err, q.Body, q.WriteEndNs, q.HeaderNs, q.ReadNs)
			}
		})
	}
}
