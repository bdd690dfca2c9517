package replay

import (
	"sync/atomic"
	"time"

	"github.com/llmbench/llmbench/rawlog"
)

// Servers that close after each response. Some servers close a connection right after its
// response while announcing keep-alive (llama.cpp's llama-server after every streamed
// response: "Keep-Alive: timeout=5, max=100", no "Connection: close"). A pooled client then
// writes its next request on a dead connection, meets EOF and sends it again on a new one:
// every request pays a reconnect, which lands in its dispatch lag. A worker learns the
// policy instead of paying it: once a connection is found closed by the server soon after
// the end of its first and only response (closeWindow), the URL closes after each response,
// and the worker opens a new connection per request to it from then on and closes it after
// the response, so no request waits on a dead connection. The preflight (replay/probe)
// teaches the workers the same before the first request. docs/run-format.md, "Servers that
// close after each response".

// closeWindow is how soon after a connection's first response the server must close it for
// the worker to conclude that the server closes after each response. Idle timeouts are
// seconds (llama.cpp 5 s, uvicorn 5 s, nginx 75 s); the close this looks for comes within
// microseconds of the response.
const closeWindow = int64(time.Second)

// connPolicy is what a worker knows of each URL's server: whether it closes every
// connection after one response. Safe for concurrent use (net client runners).
type connPolicy struct {
	closes []atomic.Bool
}

// init sizes p for n URLs; the URLs in known close after each response from the start (the
// preflight's finding).
func (p *connPolicy) init(n int, known []int) {
	p.closes = make([]atomic.Bool, n)
	for _, u := range known {
		if u >= 0 && u < n {
			p.closes[u].Store(true)
		}
	}
}

// closesAfterResponse says URL url's server closes every connection after one response.
func (p *connPolicy) closesAfterResponse(url int) bool {
	return url < len(p.closes) && p.closes[url].Load()
}

// serverClosed takes a connection the server closed, noticed at now (run clock): the FIN
// came while it was idle, or the next request found it dead. A connection that carried one
// response and was closed within closeWindow of its end teaches that its URL closes after
// each response.
func (p *connPolicy) serverClosed(c *conn, now int64) {
	if c.uses == 1 && c.target < len(p.closes) && now-c.idleSinceNs <= closeWindow {
		p.closes[c.target].Store(true)
	}
}

// reused marks c as having carried a response that ended cleanly at endNs (run clock).
func (c *conn) reused(endNs int64) {
	c.used = true
	c.uses++
	c.idleSinceNs = endNs
}

// keep says a connection that carried a clean response may be reused under strategy reuse:
// not when the server closes after each response (p learned it), so that the next request
// opens a new one instead of finding this one dead.
func (p *connPolicy) keep(c *conn, reuse string) bool {
	return !c.broken && reuse != ReuseNever && !p.closesAfterResponse(c.target)
}

// markReconnect records on q that its first attempt, begun at q.WriteStartNs, went out on a
// connection the server had closed, before q's fields are reset for the second attempt.
func markReconnect(q *rawlog.Request) {
	if q.Reconnects == 0 {
		q.FirstWriteStartNs = q.WriteStartNs
	}
	q.Reconnects++
	q.ServerClosed = true
}

// resetReconnect clears q's reconnect fields for a new request.
func resetReconnect(q *rawlog.Request) {
	q.Reconnects, q.FirstWriteStartNs, q.ServerClosed = 0, -1, false
}
