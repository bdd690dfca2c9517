// Package testserver holds the HTTP servers the replay packages' tests talk to over
// loopback, shared so that each is written once. Only tests import it.
package testserver

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// RawSSE answers every request on a connection with a chunked SSE response of n events,
// each written with its own write call, so the client sees many reads. Keep-alive.
func RawSSE(t testing.TB, events int) (addr string) {
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

// BigJob asks Big for a response of Bytes body bytes framed as Framing: "length"
// (Content-Length), "chunked", "close" (until the server closes) or "endless" (SSE events
// until the client goes away).
type BigJob struct {
	Bytes   int    `json:"bytes"`
	Framing string `json:"framing"`
}

// Big answers BigJobs. An endless response stops when the client closes or after 30 s.
func Big(t testing.TB) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var j BigJob
		if err := json.NewDecoder(r.Body).Decode(&j); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		piece := bytes.Repeat([]byte("0123456789abcdef"), 1024) // 16 KiB
		switch j.Framing {
		case "length", "chunked":
			if j.Framing == "length" {
				w.Header().Set("Content-Length", strconv.Itoa(j.Bytes))
			}
			for left := j.Bytes; left > 0; left -= len(piece) {
				if _, err := w.Write(piece[:min(left, len(piece))]); err != nil {
					return
				}
			}
		case "close":
			c, bw, _ := w.(http.Hijacker).Hijack()
			defer c.Close()
			bw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n\r\n")
			for left := j.Bytes; left > 0; left -= len(piece) {
				if _, err := bw.Write(piece[:min(left, len(piece))]); err != nil {
					return
				}
			}
			bw.Flush()
		case "endless":
			w.Header().Set("Content-Type", "text/event-stream")
			ev := []byte("data: {\"choices\":[{\"delta\":{\"content\":\"" + strings.Repeat("x", 1000) + "\"}}]}\n\n")
			ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
			defer cancel()
			for ctx.Err() == nil {
				if _, err := w.Write(ev); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// CountSSEData counts the SSE data events in a response body these servers sent.
func CountSSEData(b []byte) int { return strings.Count(string(b), "data: {") }
