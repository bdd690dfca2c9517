//go:build linux

package eventloop

import (
	"fmt"
	"io"
	"syscall"

	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay/driver"
	"github.com/llmbench/llmbench/replay/http1"
	"golang.org/x/sys/unix"
)

// The event loop's connections and exchanges: non-blocking connects, one writev from the
// plan mapping that resumes on EPOLLOUT, reads until the kernel has no more, and the end of
// each exchange, with the net client's semantics through the same driver and http1 (loop_linux.go).

// connect gives r a connection: a reused one, or a new non-blocking connect (always for a
// URL whose server closes after each response: http1.ConnPolicy).
func (l *Loop) connect(r *loopRequest) {
	w := l.w
	var c *loopConn
	switch reuse := w.Reuse; {
	case reuse != http1.ReuseNever && w.Conns.ClosesAfterResponse(r.url):
		r.q.ServerClosed = true
		l.dropIdle(r)
	case reuse == http1.ReusePooled:
		for s := l.idle[r.url]; len(s) > 0 && c == nil; s = l.idle[r.url] {
			c, s[len(s)-1] = s[len(s)-1], nil
			l.idle[r.url] = s[:len(s)-1]
			if c.pendingIn { // bytes or a close came while idle: see conn.unsolicited
				l.closeConn(c)
				c = nil
			}
		}
		l.spareDue = l.spareDue || w.SpareConns > 0
		if c != nil && c.connecting {
			// A spare still in its handshake: the request waits for it as after a dial,
			// from now (the connect began before the request).
			c.connecting = false // from here on the request's (lsConnect)
			c.req, r.c = r, c
			r.q.ConnectStartNs = w.Now()
			r.state = lsConnect
			l.setTimer(r, r.deadline)
			return
		}
	case reuse == http1.ReuseSticky:
		// The unit's connection is the request's until it ends (finish gives it back).
		c, r.unit.sticky = r.unit.sticky, nil
		if c != nil && c.pendingIn {
			l.closeConn(c)
			c = nil
			r.q.ServerClosed = true
		}
	}
	if c != nil {
		c.req, r.c = r, c
		l.send(r)
		return
	}
	r.q.ConnectStartNs = w.Now()
	c, err := l.dial(r.url)
	if err != nil {
		r.c = nil
		l.dialFailed(r, err)
		return
	}
	c.req, r.c = r, c
	r.state = lsConnect
	l.setTimer(r, r.deadline)
}

// replenish opens, for every URL whose connections are pooled, at most most of the spares
// its idle pool lacks (Worker.SpareConns): after a pass's sends, and before the start
// instant, so that no request waits on a connect the loop could have begun earlier. Spares
// go to the bottom of the pool (idle is LIFO): a connection that carried a response is
// reused first, a spare only when none is idle. A failed dial opens none; the request that
// needs the connection dials and reports the error itself.
func (l *Loop) replenish(most int) {
	w := l.w
	l.spareDue = false
	if w.SpareConns <= 0 || w.Reuse != http1.ReusePooled || w.Stop.Stopping() {
		return
	}
	for url := range l.idle {
		if w.Conns.ClosesAfterResponse(url) {
			continue
		}
		for n := 0; n < most && len(l.idle[url]) < w.SpareConns; n++ {
			c, err := l.dial(url)
			if err != nil {
				break
			}
			c.connecting = true
			l.idle[url] = append(l.idle[url], nil)
			copy(l.idle[url][1:], l.idle[url])
			l.idle[url][0] = c
		}
	}
}

// dial opens a non-blocking socket to target url and starts connecting it.
func (l *Loop) dial(url int) (*loopConn, error) {
	fd, err := unix.Socket(l.family[url], unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	// As net.Dialer{KeepAlive: 30s} does.
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1)
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, 30)
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, 30)
	if a := l.picker.Next(); a.IsValid() {
		if err := driver.BindSource(uintptr(fd), a); err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("local-addr %s: %w", a, err)
		}
	}
	if err := unix.Connect(fd, l.addrs[url]); err != nil && err != unix.EINPROGRESS {
		unix.Close(fd)
		return nil, err
	}
	c := &loopConn{fd: fd}
	c.Target = url
	if n := len(l.freeSlot); n > 0 {
		c.slot, l.freeSlot = l.freeSlot[n-1], l.freeSlot[:n-1]
		l.conns[c.slot] = c
	} else {
		c.slot = int32(len(l.conns))
		l.conns = append(l.conns, c)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET, Fd: c.slot}
	if err := rawEpollCtl(l.ep, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		l.closeConn(c)
		return nil, err
	}
	return c, nil
}

// dialFailed ends r's request after its connect failed (or the abort or its deadline cut it).
func (l *Loop) dialFailed(r *loopRequest, err error) {
	w := l.w
	if r.c != nil {
		l.closeConn(r.c)
		r.c = nil
	}
	r.q.ConnectEndNs = w.Now()
	if !r.marked && w.Stop.Aborting() {
		l.notSent(r, "not sent: "+w.Stop.AbortWhy())
		return
	}
	l.finish(r, nil, http1.NetError, err, "connect: ")
}

// onEvent handles one epoll event of connection c.
func (l *Loop) onEvent(c *loopConn, events uint32) {
	if c == nil {
		return
	}
	r := c.req
	in := events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0
	c.fin = c.fin || events&(unix.EPOLLRDHUP|unix.EPOLLHUP) != 0
	if r == nil {
		if c.connecting && events&unix.EPOLLOUT != 0 && events&(unix.EPOLLERR|unix.EPOLLHUP) == 0 {
			c.connecting = false // a spare's handshake done (a failed one shows as in)
		}
		c.pendingIn = c.pendingIn || in
		if c.fin {
			// The server closed it while idle: a close soon after its only response
			// teaches the URL's policy (the connection itself goes at its next use).
			l.w.Conns.ServerClosed(&c.Conn, l.w.Now())
		}
		return
	}
	switch r.state {
	case lsConnect:
		soerr, err := rawSoError(c.fd)
		if err == nil && soerr != 0 {
			err = syscall.Errno(soerr)
		}
		if err != nil {
			l.dialFailed(r, err)
			return
		}
		if events&(unix.EPOLLOUT|unix.EPOLLHUP|unix.EPOLLERR) == 0 {
			return
		}
		r.q.ConnectEndNs = l.w.Now()
		c.pendingIn = c.pendingIn || in
		l.stopTimer(r)
		if c.fin {
			// Closed before a byte of the request went out: writing it now would only
			// draw the server's reset.
			l.dialFailed(r, &http1.ClosedFirst{After: r.q.ConnectEndNs - r.q.ConnectStartNs, Late: l.lateNs})
			return
		}
		l.send(r)
	case lsWrite:
		c.pendingIn = c.pendingIn || in
		l.write(r)
	case lsRead:
		if !in {
			return // EPOLLOUT alone (acknowledged bytes freed send space): nothing to read
		}
		r.rdhupSeen = events&(unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0
		l.read(r)
	}
}

// send starts writing r's request on r.c, after writing its Sent record.
func (l *Loop) send(r *loopRequest) {
	w := l.w
	if !r.marked {
		r.marked = true
		if l.holding {
			// A dispatch pass: the record now, the request once the pass's records are
			// in the kernel (releaseHeld).
			if err := w.Log.SentQueued(r.q.Index); err != nil {
				l.unsent(r, err)
				return
			}
			l.held = append(l.held, r)
			return
		}
		if err := w.Log.Sent(r.q.Index); err != nil {
			l.unsent(r, err)
			return
		}
	}
	l.writeRequest(r)
}

// unsent ends r, whose Sent record could not be written, unsent.
func (l *Loop) unsent(r *loopRequest, err error) {
	l.closeConn(r.c)
	r.c = nil
	l.notSent(r, "not sent: "+err.Error())
}

// releaseHeld flushes the Sent records of the requests a dispatch pass held and writes them,
// in the order they were started (or ends them unsent when the records could not be).
func (l *Loop) releaseHeld() {
	l.holding = false
	if len(l.held) == 0 {
		return
	}
	err := l.w.Log.FlushSent()
	for i, r := range l.held {
		l.held[i] = nil
		if err != nil {
			l.unsent(r, err)
			continue
		}
		l.writeRequest(r)
	}
	l.held = l.held[:0]
}

// writeRequest starts writing r's request, its Sent record in the kernel.
func (l *Loop) writeRequest(r *loopRequest) {
	w := l.w
	r.q.ConnReused = r.c.Used
	r.eb.RenderSuffix(r.body, w.SessionHeader, r.session, r.q.Index)
	r.woff = 0
	r.state = lsWrite
	l.setTimer(r, r.deadline)
	r.q.WriteStartNs = w.Now()
	l.write(r)
}

// write writes what is left of r's request; EPOLLOUT resumes it.
func (l *Loop) write(r *loopRequest) {
	parts := [3][]byte{r.head, r.eb.Suffix(), r.body}
	for {
		niov, off := 0, r.woff
		for _, p := range parts {
			if off >= len(p) {
				off -= len(p)
				continue
			}
			p = p[off:]
			off = 0
			r.iov[niov].Base = &p[0]
			r.iov[niov].SetLen(len(p))
			niov++
		}
		if niov == 0 {
			break
		}
		n, e := rawWritev(r.c.fd, r.iov[:niov])
		r.iov = [3]unix.Iovec{} // do not keep the mapping referenced
		if e != 0 {
			if e == unix.EAGAIN {
				return
			}
			if e == unix.EINTR {
				continue
			}
			r.q.WriteEndNs = l.w.Now()
			res, err := http1.ClassifyNetErr(&r.c.Conn, e, false)
			l.exchangeEnd(r, res, err)
			return
		}
		r.woff += int(n)
	}
	w := l.w
	r.q.WriteEndNs = w.Now()
	if r.cancelNs > 0 {
		r.cancelAt = r.q.WriteEndNs + r.cancelNs
	}
	l.setTimer(r, min(r.deadline, r.cancelAt))
	r.rp.Reset(&r.eb)
	r.state = lsRead
	if r.c.pendingIn {
		r.c.pendingIn = false
		r.rdhupSeen = true // read to EAGAIN: the edge is gone
		l.read(r)
	}
}

// read reads r's socket until the kernel has nothing more, timestamping each read.
func (l *Loop) read(r *loopRequest) {
	w := l.w
	c := r.c
	for {
		space := r.rp.Space(&r.eb, &r.q)
		n, err := rawRead(c.fd, space)
		if n > 0 {
			t := w.Now()
			end, res, perr := r.rp.OnRead(&c.Conn, &r.eb, n, t, &r.q)
			if r.rel.Prefill && !r.prefilled && len(r.q.Body) > 0 && r.ft.Feed(r.q.Body) {
				// The first token: the request leaves prefill, its slot frees for the next
				// dispatch.
				r.prefilled = true
				l.s.Prefilled(r.rel.Node)
			}
			if end {
				l.exchangeEnd(r, res, perr)
				return
			}
			if n < len(space) && !r.rdhupSeen {
				return // drained: the next arrival is a new edge
			}
			continue
		}
		switch {
		case n == 0 && err == nil:
			err = io.EOF
		case err == unix.EAGAIN:
			return
		case err == unix.EINTR:
			continue
		}
		res, perr := r.rp.OnEnd(&c.Conn, err)
		l.exchangeEnd(r, res, perr)
		return
	}
}

// exchangeEnd takes how r's exchange on r.c ended: a stale reused connection is retried once
// on a fresh one, as the runner does; anything else finishes the request.
func (l *Loop) exchangeEnd(r *loopRequest, res http1.Result, err error) {
	w := l.w
	if res == http1.StaleConn && r.attempt == 0 {
		r.attempt++
		c := r.c
		http1.Retry(&r.q)
		w.Conns.ServerClosed(&c.Conn, w.Now())
		l.closeConn(c)
		r.c = nil
		r.cancelAt = driver.MaxInt64
		if w.Reuse == http1.ReusePooled {
			l.closeIdle()
		}
		if w.Stop.Aborting() {
			l.finish(r, nil, http1.NetError, err, "")
			return
		}
		l.connect(r)
		return
	}
	l.finish(r, r.c, res, err, "")
}

// finish decides r's outcome, disposes of c and logs the request, then hands its end to the
// scheduler.
func (l *Loop) finish(r *loopRequest, c *loopConn, res http1.Result, err error, prefix string) {
	w := l.w
	q := &r.q
	q.EndNs = w.Now()
	l.stopTimer(r)
	w.Settle(q, res, err, prefix, r.cancelAt, &r.eb)
	if c != nil {
		c.Reused(q.EndNs)
		c.req = nil
		if res == http1.OK && c.fin && !c.Broken {
			// The server closed it with the response, the FIN with the last bytes, though
			// the response said the connection would stay open.
			c.Broken = true
			w.Conns.ServerClosed(&c.Conn, q.EndNs)
		}
		switch {
		case res != http1.OK || !w.Conns.Keep(&c.Conn, w.Reuse):
			l.closeConn(c)
		case w.Reuse == http1.ReuseSticky && r.unit.sticky == nil:
			r.unit.sticky = c
		case w.Reuse == http1.ReuseSticky:
			l.closeConn(c) // another request of the unit gave its connection back first
		default:
			l.idle[c.Target] = append(l.idle[c.Target], c)
		}
	}
	r.c = nil
	r.body = nil
	w.Log.Done(q)
	if l.lv.Enabled() && len(w.Graph.Children(r.rel.Node)) > 0 {
		r.unit.hist.Add(&l.lv, q.Index, q.Body)
	}
	l.ended(r, driver.CountedOutcome(q) == rawlog.OutcomeCompleted)
}

// notSent logs r's current request as never sent, then hands its end to the scheduler.
func (l *Loop) notSent(r *loopRequest, why string) {
	l.stopTimer(r)
	l.w.NotSent(&r.q, r.url, why)
	l.ended(r, false)
}

// closeConn closes c (which leaves the epoll set) and frees its slot.
func (l *Loop) closeConn(c *loopConn) {
	if c.fd < 0 {
		return
	}
	unix.Close(c.fd)
	c.fd = -1
	c.req = nil
	l.conns[c.slot] = nil
	l.closedSlots = append(l.closedSlots, c.slot)
}

// dropIdle closes what r would have reused of a URL whose server closes after each
// response: the pooled connections to it (dead, or about to be) and r's unit's.
func (l *Loop) dropIdle(r *loopRequest) {
	s := l.idle[r.url]
	for i, c := range s {
		l.closeConn(c)
		s[i] = nil
	}
	l.idle[r.url] = s[:0]
	if c := r.unit.sticky; c != nil {
		l.closeConn(c)
		r.unit.sticky = nil
	}
}

// closeIdle closes every pooled idle connection: after a stale one, the rest are as stale.
func (l *Loop) closeIdle() {
	for i, s := range l.idle {
		for j, c := range s {
			l.closeConn(c)
			s[j] = nil
		}
		l.idle[i] = s[:0]
	}
}

// closeAll closes every connection the loop holds.
func (l *Loop) closeAll() {
	for _, c := range l.conns {
		if c != nil {
			l.closeConn(c)
		}
	}
	for i := range l.idle {
		l.idle[i] = nil
	}
}
