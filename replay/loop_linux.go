//go:build linux

package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"syscall"
	"unsafe"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
	"golang.org/x/sys/unix"
)

// The event-loop client (--client loop). One goroutine locked to one OS thread runs all of a
// worker's sockets, its schedule and its deadlines: an edge-triggered epoll set holds every
// connection and one timerfd, armed at the earliest of the next planned send, the next
// concurrency-ramp step and the earliest request deadline or next-turn instant. Each wake-up
// handles every ready socket; each socket is read until the kernel has no more (a short read
// says so without the extra EAGAIN read), each read stamped with one clock read, straight into
// the request's own buffer, and parsed by the same respParser the net client uses. Connects
// are non-blocking, writes are one writev from the plan mapping that resumes on EPOLLOUT.
// Nothing here switches goroutines or allocates per read: the Go scheduler only runs the log
// writer, the command reader and the progress ticker, while the loop sleeps in epoll_wait.
// Request semantics (HTTP/1.1, reuse strategies, stale-connection retry, timeouts,
// cancel-after, aborts, Sent records, outcomes) are the runner's, through the same helpers.

// lstate is where a loop request stands.
type lstate uint8

const (
	lsSleep   lstate = iota // waiting for its unit's next turn (timer)
	lsConnect               // non-blocking connect in progress
	lsWrite                 // request being written
	lsRead                  // response being read
)

// lconn is one of the loop's connections.
type lconn struct {
	conn      // target, used, broken (nc is nil)
	fd        int
	slot      int32 // index in evloop.conns: the epoll event's data
	req       *lreq // request using it; nil while idle
	pendingIn bool  // a readable edge came while nobody was reading
	fin       bool  // the server's FIN was reported (EPOLLRDHUP or EPOLLHUP)
}

// lreq is one unit in flight on the loop: the runner's state, as data.
type lreq struct {
	unit      int32
	idx       int32 // plan index of the current record
	firstTurn uint32
	ready     int64
	state     lstate
	c         *lconn
	sticky    *lconn
	marked    bool // the Sent record is written
	attempt   int
	url       int
	session   uint32
	head      []byte
	body      []byte
	woff      int   // bytes of head, suffix and body written
	deadline  int64 // run clock: the request timeout
	cancelNs  int64
	cancelAt  int64
	timerAt   int64 // when its timer fires (heap key)
	hidx      int   // index in the timer heap, -1 when not in it
	eb        exchangeBuffers
	rp        respParser
	q         rawlog.Request
	lv        live
	spliced   []byte
	hist      [][]byte
	iov       [3]unix.Iovec
	rdhupSeen bool
}

// evloop is a worker's event loop.
type evloop struct {
	w      *worker
	ep     int
	tfd    int
	kick   *sleeper // the timerfd, as stop and abort kick it
	events []unix.EpollEvent
	addrs  []unix.Sockaddr // per target
	family []int
	picker *LocalAddrPicker

	conns    []*lconn
	freeSlot []int32
	// closedSlots are slots freed during the current batch of events: they are reused only
	// after it, so a later event of the batch for a closed connection never reaches a new one.
	closedSlots []int32
	idle        [][]*lconn // pooled keep-alive connections per target, LIFO
	free        []*lreq
	all         []*lreq // every lreq ever made, for the abort sweep
	heap        []*lreq

	monoOff int64 // CLOCK_MONOTONIC minus run clock
	armedAt int64 // absolute run-clock instant the timerfd is armed for; -1 none, -2 unknown

	slots       int // free concurrency slots; -1: unbounded
	rampAt      []int64
	rampNext    int
	openNext    int
	openBlocked bool // the due open unit found no free slot
	closedNext  int
	active      int
	sawStop     bool
	sawAbort    bool
}

const noTimer = -1

// newEvloop prepares the event loop for w, or says why this run cannot use it (then the
// worker keeps the net client).
func newEvloop(w *worker) (*evloop, error) {
	l := &evloop{w: w, armedAt: noTimer, slots: -1, picker: NewLocalAddrPicker(w.cfg.LocalAddrs, w.cfg.ID)}
	for _, t := range w.targets {
		if t.tls != nil {
			return nil, errTLSNet
		}
		host, port, err := net.SplitHostPort(t.addr)
		if err != nil {
			return nil, fmt.Errorf("target %s: %w", t.addr, err)
		}
		ap, err := net.DefaultResolver.LookupNetIP(context.Background(), "ip", host)
		if err != nil || len(ap) == 0 {
			return nil, fmt.Errorf("resolve %s: %v", host, err)
		}
		pn, err := net.LookupPort("tcp", port)
		if err != nil {
			return nil, fmt.Errorf("target %s: %w", t.addr, err)
		}
		a := ap[0].Unmap()
		for _, x := range ap {
			if x.Unmap().Is4() { // the dialer tries IPv4 first on loopback-style dual answers
				a = x.Unmap()
				break
			}
		}
		if a.Is4() {
			l.addrs = append(l.addrs, &unix.SockaddrInet4{Port: pn, Addr: a.As4()})
			l.family = append(l.family, unix.AF_INET)
		} else {
			l.addrs = append(l.addrs, &unix.SockaddrInet6{Port: pn, Addr: a.As16()})
			l.family = append(l.family, unix.AF_INET6)
		}
		if l.picker.Len() > 0 && l.picker.addrs[0].Is4() != a.Is4() {
			return nil, fmt.Errorf("local-addr %s and target %s are of different IP families", l.picker.addrs[0], t.addr)
		}
	}
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	// A blocking timerfd: it is read only after epoll says it fired.
	tfd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_CLOEXEC)
	if err != nil {
		unix.Close(ep)
		return nil, fmt.Errorf("timerfd_create: %w", err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: -1}
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, tfd, &ev); err != nil {
		unix.Close(ep)
		unix.Close(tfd)
		return nil, fmt.Errorf("epoll_ctl timerfd: %w", err)
	}
	l.ep, l.tfd = ep, tfd
	// The worker closes its sleepers (this file, and so the timerfd) after the run.
	l.kick = &sleeper{fd: tfd, f: os.NewFile(uintptr(tfd), "timerfd"), stop: &w.stopping}
	l.events = make([]unix.EpollEvent, 512)
	l.idle = make([][]*lconn, len(w.targets))
	if w.slots != nil {
		l.slots = cap(w.slots)
	}
	w.register(nil, l.kick)
	return l, nil
}

// run is the loop; it returns when every unit it started has ended and nothing more will
// start (sent all, stopped, or aborted).
func (l *evloop) run() {
	w := l.w
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if w.cfg.CPU >= 0 && runtime.GOMAXPROCS(0) == 1 {
		// A second P for everything else (command reader, tickers, log writer), on the same
		// pinned CPU. With one P, the loop's thread would give it up each time it sleeps in
		// epoll_wait (sysmon retakes a P held in a syscall when no other is idle) and wait
		// for it back on every wake-up: measured, that hand-off and the 20 µs sysmon polling
		// it keeps alive cost more than everything else the loop does (the note to #17).
		runtime.GOMAXPROCS(2)
	}
	debug.SetPanicOnFault(true) // a truncated plan: see guard
	defer w.dispatchers.Done()
	defer l.closeAll()
	defer unix.Close(l.ep)
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	l.monoOff = ts.Nano() - w.nowNs()
	l.initRamp()
	var buf [8]byte
	for {
		now := w.nowNs()
		l.flags(now)
		l.fireTimers(now)
		l.dispatch(now)
		if l.finished() {
			return
		}
		l.arm(now)
		if w.stopping.Load() != l.sawStop || w.aborting.Load() != l.sawAbort {
			continue // a kick may have come before the timer was armed over it
		}
		// One wake-up of the log writer for what this pass logged (ownerFlush): the frames
		// reach the kernel from its thread while the loop sleeps.
		w.sink.kick()
		n, err := unix.EpollWait(l.ep, l.events, -1)
		if err != nil {
			if err == unix.EINTR {
				continue
			}
			w.fail(fmt.Errorf("epoll_wait: %w", err))
			continue
		}
		for i := 0; i < n; i++ {
			ev := &l.events[i]
			if ev.Fd < 0 {
				unix.Read(l.tfd, buf[:])
				l.armedAt = -2 // a kick may have re-armed it
				continue
			}
			l.onEvent(l.conns[ev.Fd], ev.Events)
		}
		l.freeSlot = append(l.freeSlot, l.closedSlots...)
		l.closedSlots = l.closedSlots[:0]
	}
}

// initRamp holds back the concurrency slots the ramp has not opened yet (see worker.ramp).
func (l *evloop) initRamp() {
	w := l.w
	n, W, id := w.meta.Concurrency, w.cfg.Workers, w.cfg.ID
	r := w.meta.ConcurrencyRampNs
	if l.slots < 0 || r <= 0 || n <= 1 {
		return
	}
	for j := id; j < n; j += W {
		if t := r * int64(j) / int64(n-1); t > 0 {
			l.rampAt = append(l.rampAt, t)
		}
	}
	l.slots -= len(l.rampAt)
}

// flags acts on stop and abort, once each.
func (l *evloop) flags(now int64) {
	w := l.w
	if !l.sawStop && w.stopping.Load() {
		l.sawStop = true
		// Units waiting for a later turn end: nothing new starts.
		for _, r := range l.all {
			if r.hidx >= 0 && r.state == lsSleep {
				l.stopTimer(r)
				l.endUnit(r)
			}
		}
	}
	if !l.sawAbort && w.aborting.Load() {
		l.sawAbort = true
		for _, r := range l.all {
			if r.c == nil || r.c.req != r {
				continue
			}
			switch r.state {
			case lsConnect:
				l.dialFailed(r, errAbortedDial)
			case lsWrite, lsRead:
				l.exchangeEnd(r, exDeadline, os.ErrDeadlineExceeded)
			}
		}
	}
}

// errTLSNet says why a run with an https URL keeps the net client (documented, not reported).
var errTLSNet = errors.New("TLS targets use the net client")

// errAbortedDial is the dial error of a connect the abort cut.
var errAbortedDial = errors.New("operation was canceled")

// finished says the loop has nothing left to do.
func (l *evloop) finished() bool {
	if l.active > 0 {
		return false
	}
	sh := l.w.sh
	return l.sawStop || (l.openNext >= len(sh.open) && l.closedNext >= len(sh.closed))
}

// dispatch starts what is due: open-loop units at their instants, closed-loop units while
// slots are free, ramp slots as they open.
func (l *evloop) dispatch(now int64) {
	w := l.w
	for l.rampNext < len(l.rampAt) && l.rampAt[l.rampNext] <= now {
		l.rampNext++
		l.slots++
	}
	sh := w.sh
	for l.openNext < len(sh.open) && !w.stopping.Load() {
		u := sh.open[l.openNext]
		at := sh.units[u].offset
		if at > w.sendUntil.Load() {
			w.durationElapsed()
			return
		}
		if spin := w.cfg.SpinNs; spin > 0 && at > now && at-now <= spin {
			for now < at && !w.stopping.Load() {
				now = w.nowNs()
			}
		}
		if at > now {
			break
		}
		if !l.takeSlot() {
			l.openBlocked = true
			break
		}
		ready := at
		if l.openBlocked {
			ready, l.openBlocked = w.nowNs(), false
		}
		l.openNext++
		l.startUnit(u, ready)
	}
	if now < 0 {
		return // closed-loop units start at the run's start
	}
	for l.closedNext < len(sh.closed) && !w.stopping.Load() {
		u := sh.closed[l.closedNext]
		if sh.units[u].phase == mmapds.PhaseProfile && w.warmupLeft.Load() > 0 {
			return
		}
		if !l.takeSlot() {
			return
		}
		t := w.nowNs()
		if t > w.sendUntil.Load() {
			l.releaseSlot()
			w.durationElapsed()
			return
		}
		l.closedNext++
		l.startUnit(u, t)
	}
}

func (l *evloop) takeSlot() bool {
	switch {
	case l.slots < 0:
		return true
	case l.slots == 0:
		return false
	}
	l.slots--
	return true
}

func (l *evloop) releaseSlot() {
	if l.slots >= 0 {
		l.slots++
	}
}

// arm sets the timerfd to the earliest instant the loop must wake for.
func (l *evloop) arm(now int64) {
	w := l.w
	next := int64(noTimer)
	take := func(t int64) {
		if next == noTimer || t < next {
			next = t
		}
	}
	if len(l.heap) > 0 {
		take(l.heap[0].timerAt)
	}
	if !w.stopping.Load() {
		if l.openNext < len(w.sh.open) && !l.openBlocked {
			take(w.sh.units[w.sh.open[l.openNext]].offset - w.cfg.SpinNs)
		}
		if l.rampNext < len(l.rampAt) {
			take(l.rampAt[l.rampNext])
		}
		if now < 0 && l.closedNext < len(w.sh.closed) {
			take(0)
		}
	}
	if next == l.armedAt {
		return
	}
	var its unix.ItimerSpec
	if next != noTimer {
		at := max(next+l.monoOff, 1)
		its.Value = unix.NsecToTimespec(at)
	}
	if err := unix.TimerfdSettime(l.tfd, unix.TFD_TIMER_ABSTIME, &its, nil); err != nil {
		w.fail(fmt.Errorf("timerfd_settime: %w", err))
	}
	l.armedAt = next
}

// startUnit begins unit u, ready at ready.
func (l *evloop) startUnit(u int32, ready int64) {
	var r *lreq
	if n := len(l.free); n > 0 {
		r, l.free = l.free[n-1], l.free[:n-1]
	} else {
		r = &lreq{hidx: -1}
		r.eb.rbuf = make([]byte, readBufSize)
		r.eb.maxBody = int(l.w.cfg.MaxResponseBytes)
		if l.w.lr.enabled() {
			if err := r.lv.init(l.w.meta); err != nil {
				l.w.fail(err)
				l.releaseSlot()
				return
			}
		}
		l.all = append(l.all, r)
	}
	un := &l.w.sh.units[u]
	r.unit, r.idx, r.ready, r.url = u, un.first, ready, int(un.url)
	r.hist = r.hist[:0]
	l.active++
	l.startTurn(r, true)
}

// guard handles a fault on the plan's mapping while reading it for r's unit: the unit ends
// and the worker fails, as the runner's recoverFault does.
func (l *evloop) guard(r *lreq) {
	v := recover()
	if v == nil {
		return
	}
	err := l.w.plan.FaultError(v)
	if err == nil {
		panic(v)
	}
	l.w.fail(err)
	l.endUnit(r)
}

// startTurn sends r's current record, or ends the unit when nothing more may start.
func (l *evloop) startTurn(r *lreq, first bool) {
	defer l.guard(r)
	w := l.w
	rec, body, err := w.plan.Record(int(r.idx))
	if err != nil {
		w.fail(err)
		l.endUnit(r)
		return
	}
	if first {
		r.firstTurn = rec.Turn
	}
	if w.stopping.Load() {
		l.endUnit(r)
		return
	}
	if r.ready > w.sendUntil.Load() {
		w.durationElapsed()
		l.endUnit(r)
		return
	}
	if rec.Flags&mmapds.FlagLiveHistory != 0 && r.lv.enabled() {
		r.spliced = r.lv.splice(r.spliced[:0], body, r.hist, r.firstTurn)
		body = r.spliced
	}
	q := &r.q
	q.Index = rec.Index
	q.Outcome, q.Status, q.ConnReused = 0, 0, false
	q.IntendedNs = max(rec.SendOffsetNs, -1)
	q.ReadyNs = r.ready
	q.WriteStartNs, q.WriteEndNs, q.HeaderNs, q.EndNs = -1, -1, -1, -1
	q.ConnectStartNs, q.ConnectEndNs = -1, -1
	resetReconnect(q)
	resetResponse(q)
	q.Err = ""
	q.URLIndex = r.url
	r.cancelNs, r.cancelAt = rec.CancelAfterNs, maxInt64
	r.deadline = w.nowNs() + int64(w.timeout)
	r.head, r.body, r.session = w.targets[r.url].heads[rec.PathID], body, rec.Session
	r.marked, r.attempt = false, 0
	w.sent.Add(1)
	l.connect(r)
}

// connect gives r a connection: a reused one, or a new non-blocking connect (always for a
// URL whose server closes after each response: connpolicy.go).
func (l *evloop) connect(r *lreq) {
	w := l.w
	var c *lconn
	switch {
	case w.reuse != ReuseNever && w.conns.closesAfterResponse(r.url):
		r.q.ServerClosed = true
		if r.sticky != nil {
			l.closeConn(r.sticky)
			r.sticky = nil
		}
	case w.reuse == ReusePooled:
		if s := l.idle[r.url]; len(s) > 0 {
			c, s[len(s)-1] = s[len(s)-1], nil
			l.idle[r.url] = s[:len(s)-1]
		}
	case w.reuse == ReuseSticky:
		c = r.sticky
		if c != nil && c.fd < 0 {
			// The server closed it between the session's turns (idleClosed).
			r.sticky, c = nil, nil
			r.q.ServerClosed = true
		}
	}
	if c != nil {
		c.req, r.c = r, c
		l.send(r)
		return
	}
	r.q.ConnectStartNs = w.nowNs()
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

// dial opens a non-blocking socket to target url and starts connecting it.
func (l *evloop) dial(url int) (*lconn, error) {
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
		if err := BindSource(uintptr(fd), a); err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("local-addr %s: %w", a, err)
		}
	}
	if err := unix.Connect(fd, l.addrs[url]); err != nil && err != unix.EINPROGRESS {
		unix.Close(fd)
		return nil, err
	}
	c := &lconn{fd: fd}
	c.target = url
	if n := len(l.freeSlot); n > 0 {
		c.slot, l.freeSlot = l.freeSlot[n-1], l.freeSlot[:n-1]
		l.conns[c.slot] = c
	} else {
		c.slot = int32(len(l.conns))
		l.conns = append(l.conns, c)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET, Fd: c.slot}
	if err := unix.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		l.closeConn(c)
		return nil, err
	}
	return c, nil
}

// dialFailed ends r's request after its connect failed (or the abort or its deadline cut it).
func (l *evloop) dialFailed(r *lreq, err error) {
	w := l.w
	if r.c != nil {
		l.closeConn(r.c)
		r.c = nil
	}
	r.q.ConnectEndNs = w.nowNs()
	if !r.marked && w.aborting.Load() {
		l.notSent(r, "not sent: "+*w.abortWhy.Load())
		return
	}
	l.finish(r, nil, exNetError, err, "connect: ")
}

// onEvent handles one epoll event of connection c.
func (l *evloop) onEvent(c *lconn, events uint32) {
	if c == nil {
		return
	}
	r := c.req
	in := events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0
	c.fin = c.fin || events&(unix.EPOLLRDHUP|unix.EPOLLHUP) != 0
	if r == nil {
		if in {
			l.idleClosed(c)
		}
		return
	}
	switch r.state {
	case lsConnect:
		soerr, err := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_ERROR)
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
		r.q.ConnectEndNs = l.w.nowNs()
		c.pendingIn = c.pendingIn || in
		l.stopTimer(r)
		l.send(r)
	case lsWrite:
		c.pendingIn = c.pendingIn || in
		l.write(r)
	case lsRead:
		r.rdhupSeen = events&(unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0
		l.read(r)
	}
}

// send starts writing r's request on r.c, after writing its Sent record.
func (l *evloop) send(r *lreq) {
	w := l.w
	if !r.marked {
		r.marked = true
		if err := w.logSent(r.q.Index); err != nil {
			l.closeConn(r.c)
			r.c = nil
			l.notSent(r, "not sent: "+err.Error())
			return
		}
	}
	r.q.ConnReused = r.c.used
	r.eb.renderSuffix(r.body, w.cfg.SessionHeader, r.session)
	r.woff = 0
	r.state = lsWrite
	l.setTimer(r, r.deadline)
	r.q.WriteStartNs = w.nowNs()
	l.write(r)
}

// write writes what is left of r's request; EPOLLOUT resumes it.
func (l *evloop) write(r *lreq) {
	parts := [3][]byte{r.head, r.eb.suffix, r.body}
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
		n, _, e := unix.Syscall(unix.SYS_WRITEV, uintptr(r.c.fd), uintptr(unsafe.Pointer(&r.iov[0])), uintptr(niov))
		r.iov = [3]unix.Iovec{} // do not keep the mapping referenced
		if e != 0 {
			if e == unix.EAGAIN {
				return
			}
			if e == unix.EINTR {
				continue
			}
			r.q.WriteEndNs = l.w.nowNs()
			res, err := classifyNetErr(&r.c.conn, e, false)
			l.exchangeEnd(r, res, err)
			return
		}
		r.woff += int(n)
	}
	w := l.w
	r.q.WriteEndNs = w.nowNs()
	if r.cancelNs > 0 {
		r.cancelAt = r.q.WriteEndNs + r.cancelNs
	}
	l.setTimer(r, min(r.deadline, r.cancelAt))
	r.rp.reset(&r.eb)
	r.state = lsRead
	if r.c.pendingIn {
		r.c.pendingIn = false
		r.rdhupSeen = true // read to EAGAIN: the edge is gone
		l.read(r)
	}
}

// read reads r's socket until the kernel has nothing more, timestamping each read.
func (l *evloop) read(r *lreq) {
	w := l.w
	c := r.c
	for {
		space := r.rp.space(&r.eb)
		n, err := unix.Read(c.fd, space)
		if n > 0 {
			t := w.nowNs()
			if end, res, perr := r.rp.onRead(&c.conn, &r.eb, n, t, &r.q); end {
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
		res, perr := r.rp.onEnd(&c.conn, err)
		l.exchangeEnd(r, res, perr)
		return
	}
}

// exchangeEnd takes how r's exchange on r.c ended: a stale reused connection is retried once
// on a fresh one, as the runner does; anything else finishes the request.
func (l *evloop) exchangeEnd(r *lreq, res exchangeResult, err error) {
	w := l.w
	if res == exStaleConn && r.attempt == 0 {
		r.attempt++
		c := r.c
		markReconnect(&r.q)
		w.conns.serverClosed(&c.conn, w.nowNs())
		l.closeConn(c)
		r.c = nil
		if r.sticky == c {
			r.sticky = nil
		}
		q := &r.q
		q.Status, q.WriteStartNs, q.WriteEndNs, q.HeaderNs = 0, -1, -1, -1
		resetResponse(q)
		r.cancelAt = maxInt64
		if w.reuse == ReusePooled {
			l.closeIdle()
		}
		if w.aborting.Load() {
			l.finish(r, nil, exNetError, err, "")
			return
		}
		l.connect(r)
		return
	}
	l.finish(r, r.c, res, err, "")
}

// finish decides r's outcome, disposes of c and logs the request, then moves r's unit on.
func (l *evloop) finish(r *lreq, c *lconn, res exchangeResult, err error, prefix string) {
	w := l.w
	q := &r.q
	q.EndNs = w.nowNs()
	l.stopTimer(r)
	w.settle(q, res, err, prefix, r.cancelAt, &r.eb)
	if c != nil {
		c.reused(q.EndNs)
		c.req = nil
		if res == exOK && c.fin && !c.broken {
			// The server closed it with the response, the FIN with the last bytes, though
			// the response said the connection would stay open.
			c.broken = true
			w.conns.serverClosed(&c.conn, q.EndNs)
		}
		switch {
		case res != exOK || !w.conns.keep(&c.conn, w.reuse):
			l.closeConn(c)
			if r.sticky == c {
				r.sticky = nil
			}
		case w.reuse == ReuseSticky:
			r.sticky = c
		default:
			l.idle[c.target] = append(l.idle[c.target], c)
		}
	}
	r.c = nil
	r.body = nil
	w.logDone(q)
	l.nextTurn(r)
}

// notSent logs r's current request as never sent, then moves its unit on.
func (l *evloop) notSent(r *lreq, why string) {
	q := &r.q
	l.stopTimer(r)
	l.w.sent.Add(-1)
	rn, re, rb := q.ReadNs[:0], q.ReadEnd[:0], q.Body[:0]
	*q = notSentRecord(q.Index, q.IntendedNs, r.url, why)
	q.ReadNs, q.ReadEnd, q.Body = rn, re, rb
	l.w.logRequest(q)
	l.nextTurn(r)
}

// nextTurn schedules the next record of r's unit, or ends the unit.
func (l *evloop) nextTurn(r *lreq) {
	defer l.guard(r)
	w := l.w
	next := w.sh.nextOf(r.idx)
	if next < 0 || w.stopping.Load() {
		l.endUnit(r)
		return
	}
	if r.lv.enabled() {
		r.hist = append(r.hist, nil)
		h := &r.hist[len(r.hist)-1]
		*h = r.lv.responseText((*h)[:0], r.q.Body)
	}
	rec, _, err := w.plan.Record(int(next))
	if err != nil {
		w.fail(err)
		l.endUnit(r)
		return
	}
	at := r.q.EndNs + rec.DelayNs
	if rec.SendOffsetNs > at {
		at = rec.SendOffsetNs
	}
	r.idx, r.ready, r.state = next, at, lsSleep
	l.setTimer(r, at)
}

// endUnit ends r's unit: its sticky connection closes and its slot frees.
func (l *evloop) endUnit(r *lreq) {
	w := l.w
	l.stopTimer(r)
	if r.sticky != nil {
		l.closeConn(r.sticky)
		r.sticky = nil
	}
	if r.c != nil {
		l.closeConn(r.c)
		r.c = nil
	}
	u := &w.sh.units[r.unit]
	if u.phase == mmapds.PhaseWarmup && u.offset < 0 {
		if w.warmupLeft.Add(-1) == 0 {
			close(w.warmupDone)
		}
	}
	r.state = lsSleep
	r.body = nil
	l.active--
	l.releaseSlot()
	l.free = append(l.free, r)
}

// fireTimers runs every timer due at now.
func (l *evloop) fireTimers(now int64) {
	for len(l.heap) > 0 && l.heap[0].timerAt <= now {
		r := l.heap[0]
		l.stopTimer(r)
		switch r.state {
		case lsSleep:
			l.startTurn(r, false)
		case lsConnect:
			// As a dial past its deadline fails: "connect: i/o timeout".
			l.dialFailed(r, os.ErrDeadlineExceeded)
		case lsWrite, lsRead:
			r.c.broken = true
			l.exchangeEnd(r, exDeadline, os.ErrDeadlineExceeded)
		}
	}
}

// closeConn closes c (which leaves the epoll set) and frees its slot.
func (l *evloop) closeConn(c *lconn) {
	if c.fd < 0 {
		return
	}
	unix.Close(c.fd)
	c.fd = -1
	c.req = nil
	l.conns[c.slot] = nil
	l.closedSlots = append(l.closedSlots, c.slot)
}

// idleClosed takes an idle connection that became readable: the server closed it (FIN, or
// a reset) or sent bytes nobody asked for (a 408 before closing). Either way it cannot carry
// another request: it leaves the pool (a sticky one is dropped at its session's next turn)
// and is closed, and a close soon after its only response teaches the URL's policy.
func (l *evloop) idleClosed(c *lconn) {
	if s := l.idle[c.target]; len(s) > 0 {
		for i, x := range s {
			if x == c {
				copy(s[i:], s[i+1:])
				s[len(s)-1] = nil
				l.idle[c.target] = s[:len(s)-1]
				break
			}
		}
	}
	l.w.conns.serverClosed(&c.conn, l.w.nowNs())
	l.closeConn(c)
}

// closeIdle closes every pooled idle connection: after a stale one, the rest are as stale.
func (l *evloop) closeIdle() {
	for i, s := range l.idle {
		for j, c := range s {
			l.closeConn(c)
			s[j] = nil
		}
		l.idle[i] = s[:0]
	}
}

// closeAll closes every connection the loop holds.
func (l *evloop) closeAll() {
	for _, c := range l.conns {
		if c != nil {
			l.closeConn(c)
		}
	}
	for i := range l.idle {
		l.idle[i] = nil
	}
}

// The timer heap: one entry per lreq at most, keyed by timerAt.

func (l *evloop) setTimer(r *lreq, at int64) {
	if r.hidx >= 0 {
		r.timerAt = at
		l.heapFix(r.hidx)
		return
	}
	r.timerAt = at
	r.hidx = len(l.heap)
	l.heap = append(l.heap, r)
	l.heapUp(r.hidx)
}

func (l *evloop) stopTimer(r *lreq) {
	i := r.hidx
	if i < 0 {
		return
	}
	last := len(l.heap) - 1
	if i != last {
		l.heapSwap(i, last)
	}
	l.heap[last] = nil
	l.heap = l.heap[:last]
	r.hidx = -1
	if i != last {
		l.heapFix(i)
	}
}

func (l *evloop) heapSwap(i, j int) {
	h := l.heap
	h[i], h[j] = h[j], h[i]
	h[i].hidx, h[j].hidx = i, j
}

func (l *evloop) heapFix(i int) {
	if !l.heapDown(i) {
		l.heapUp(i)
	}
}

func (l *evloop) heapUp(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if l.heap[p].timerAt <= l.heap[i].timerAt {
			return
		}
		l.heapSwap(i, p)
		i = p
	}
}

func (l *evloop) heapDown(i0 int) bool {
	i, n := i0, len(l.heap)
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && l.heap[c+1].timerAt < l.heap[c].timerAt {
			c++
		}
		if l.heap[i].timerAt <= l.heap[c].timerAt {
			break
		}
		l.heapSwap(i, c)
		i = c
	}
	return i > i0
}
