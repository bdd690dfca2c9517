//go:build linux

package replay

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay/schedule"
	"golang.org/x/sys/unix"
)

// The event-loop client (--client loop). One goroutine locked to one OS thread runs all of a
// worker's sockets, drives its scheduler (package schedule) and keeps its deadlines: an
// edge-triggered epoll set holds every connection and one timerfd, armed at the earliest of
// the scheduler's next instant (a planned send, a ramp step, a think time, the duration's
// end) and the earliest request deadline. Each wake-up handles every ready socket, hands the
// requests that ended to the scheduler and sends what it then has due; each socket is read
// until the kernel has no more (a short read says so without the extra EAGAIN read), each
// read stamped with one clock read, straight into the request's own buffer, and parsed by
// the same respParser the net client uses (loopconn_linux.go). Nothing here switches
// goroutines or allocates per read: the Go scheduler only runs the log writer, the command
// reader and the progress ticker, while the loop sleeps in epoll_wait. Request semantics
// (HTTP/1.1, reuse strategies, stale-connection retry, timeouts, cancel-after, aborts, Sent
// records, outcomes) are the runner's, through the same helpers.

// lstate is where a loop request stands.
type lstate uint8

const (
	lsIdle    lstate = iota // not started, or ended
	lsConnect               // non-blocking connect in progress
	lsWrite                 // request being written
	lsRead                  // response being read
)

// loopConn is one connection in the loop's epoll set.
type loopConn struct {
	conn      // target, used, broken (nc is nil)
	fd        int
	slot      int32        // index in evloop.conns: the epoll event's data
	req       *loopRequest // request using it; nil while idle
	pendingIn bool         // a readable edge came while nobody was reading
}

// loopRequest is one request on the loop, from its release by the scheduler to its record:
// what a net-client runner keeps on its stack, as data.
type loopRequest struct {
	rel       schedule.Release
	unit      *loopUnit
	state     lstate
	c         *loopConn
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
	timerAt   int64 // when its deadline fires (heap key)
	hidx      int   // index in the deadline heap, -1 when not in it
	eb        exchangeBuffers
	rp        respParser
	q         rawlog.Request
	spliced   []byte
	iov       [3]unix.Iovec
	rdhupSeen bool
	prefilled bool       // its first token was handed to the scheduler (rel.Prefill)
	ft        firstToken // finds it
}

// loopUnit is what the loop keeps of a unit while it runs: its sticky connection and the
// responses live history splices into its later turns.
type loopUnit struct {
	sticky *loopConn
	hist   history
}

// evloop is a worker's event loop.
type evloop struct {
	w      *worker
	s      *schedule.Scheduler
	ep     int
	tfd    int
	kick   *sleeper // the timerfd, as stop and abort kick it
	events []unix.EpollEvent
	addrs  []unix.Sockaddr // per target
	family []int
	picker *LocalAddrPicker

	conns    []*loopConn
	freeSlot []int32
	// closedSlots are slots freed during the current batch of events: they are reused only
	// after it, so a later event of the batch for a closed connection never reaches a new one.
	closedSlots []int32
	idle        [][]*loopConn // pooled keep-alive connections per target, LIFO
	free        []*loopRequest
	all         []*loopRequest // every loopRequest ever made, for the abort sweep
	heap        []*loopRequest
	units       []*loopUnit // per unit, while it runs
	freeUnits   []*loopUnit
	lv          live // live history scratch: the loop splices one body at a time

	monoOff int64 // CLOCK_MONOTONIC minus run clock
	armedAt int64 // run-clock instant the timerfd is armed for; schedule.Never: disarmed

	sawStop  bool // w.stopping seen
	stopSeen bool // the scheduler told of the stop
	sawAbort bool
}

// armUnknown is armedAt when the timerfd may have been re-armed (it fired, or a kick).
const armUnknown = math.MinInt64

// newEvloop prepares the event loop for w, or says why this run cannot use it (then the
// worker keeps the net client).
func newEvloop(w *worker) (*evloop, error) {
	l := &evloop{w: w, s: w.sched, armedAt: armUnknown, picker: NewLocalAddrPicker(w.cfg.LocalAddrs, w.cfg.ID),
		units: make([]*loopUnit, w.g.Units()), lv: w.lr.fresh()}
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
	l.idle = make([][]*loopConn, len(w.targets))
	w.register(nil, l.kick)
	return l, nil
}

// run is the loop; it returns when every request it started has ended and the scheduler
// releases nothing more (sent all, stopped, or aborted).
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
	var buf [8]byte
	for {
		l.flags()
		l.fireTimers(w.nowNs())
		l.dispatch()
		if l.s.Finished() {
			return
		}
		l.arm()
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
				l.armedAt = armUnknown // a kick may have re-armed it
				continue
			}
			l.onEvent(l.conns[ev.Fd], ev.Events)
		}
		l.freeSlot = append(l.freeSlot, l.closedSlots...)
		l.closedSlots = l.closedSlots[:0]
	}
}

// flags acts on stop and abort, once each.
func (l *evloop) flags() {
	w := l.w
	if !l.sawStop && w.stopping.Load() {
		l.sawStop = true
	}
	if !l.stopSeen && (l.sawStop || l.s.Stopped() != schedule.Running) {
		// Nothing new starts; units with nothing running are over.
		l.stopSeen = true
		l.s.Stop()
		for u, lu := range l.units {
			if lu != nil && l.s.UnitOver(int32(u)) {
				l.dropUnit(int32(u))
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

// dispatch starts everything the scheduler has due, spinning up to the worker's spin for an
// open-loop instant that is that close, and acts on the scheduler's own stop (the duration)
// and its abort.
func (l *evloop) dispatch() {
	w, s := l.w, l.s
	for !l.stopSeen && !w.stopping.Load() {
		now := w.nowNs()
		rel, ok := s.Due(now)
		if !ok {
			at, open := s.NextWake()
			if spin := w.cfg.SpinNs; !open || spin <= 0 || at <= now || at-now > spin {
				break
			}
			for now < at && !w.stopping.Load() {
				now = w.nowNs()
			}
			continue
		}
		l.start(rel)
	}
	if s.Stopped() == schedule.DurationElapsed {
		w.durationElapsed()
	}
	if s.AbortDue(w.nowNs()) {
		w.durationAbort()
	}
}

// arm sets the timerfd to the earliest instant the loop must wake for: the scheduler's next
// instant (its spin earlier for an open-loop send) and the earliest deadline.
func (l *evloop) arm() {
	w := l.w
	next, open := l.s.NextWake()
	if open && next != schedule.Never {
		next -= w.cfg.SpinNs
	}
	if len(l.heap) > 0 {
		next = min(next, l.heap[0].timerAt)
	}
	if next == l.armedAt {
		return
	}
	var its unix.ItimerSpec
	if next != schedule.Never {
		its.Value = unix.NsecToTimespec(max(next+l.monoOff, 1))
	}
	if err := unix.TimerfdSettime(l.tfd, unix.TFD_TIMER_ABSTIME, &its, nil); err != nil {
		w.fail(fmt.Errorf("timerfd_settime: %w", err))
	}
	l.armedAt = next
}

// start begins the request the scheduler released.
func (l *evloop) start(rel schedule.Release) {
	var r *loopRequest
	if n := len(l.free); n > 0 {
		r, l.free = l.free[n-1], l.free[:n-1]
	} else {
		r = &loopRequest{hidx: -1}
		r.eb.rbuf = make([]byte, readBufSize)
		r.eb.maxBody = int(l.w.cfg.MaxResponseBytes)
		l.all = append(l.all, r)
	}
	if rel.Entry {
		var lu *loopUnit
		if n := len(l.freeUnits); n > 0 {
			lu, l.freeUnits = l.freeUnits[n-1], l.freeUnits[:n-1]
		} else {
			lu = &loopUnit{}
		}
		l.units[rel.Unit] = lu
	}
	r.rel, r.unit, r.url = rel, l.units[rel.Unit], l.w.urlOfUnit(rel.Unit)
	l.startTurn(r)
}

// guard handles a fault on the plan's mapping while reading it for r: r ends unsent and the
// worker fails, as the runner's fault does.
func (l *evloop) guard(r *loopRequest) {
	v := recover()
	if v == nil {
		return
	}
	err := l.w.plan.FaultError(v)
	if err == nil {
		panic(v)
	}
	l.w.fail(err)
	l.ended(r, false)
}

// startTurn sends r's record.
func (l *evloop) startTurn(r *loopRequest) {
	defer l.guard(r)
	w := l.w
	rec, body, err := w.plan.Record(int(r.rel.Index))
	if err != nil {
		w.fail(err)
		l.ended(r, false)
		return
	}
	if r.rel.Entry {
		r.unit.hist.reset(rec.Turn)
	}
	if rec.Flags&mmapds.FlagLiveHistory != 0 && l.lv.enabled() {
		r.spliced = r.unit.hist.splice(&l.lv, r.spliced[:0], body)
		body = r.spliced
	}
	q := &r.q
	q.Index = rec.Index
	q.Outcome, q.Status, q.ConnReused = 0, 0, false
	q.IntendedNs = max(rec.SendOffsetNs, -1)
	q.ReadyNs = r.rel.Ready
	q.WriteStartNs, q.WriteEndNs, q.HeaderNs, q.EndNs = -1, -1, -1, -1
	q.ConnectStartNs, q.ConnectEndNs = -1, -1
	resetResponse(q)
	q.Err = ""
	q.URLIndex = r.url
	r.cancelNs, r.cancelAt = rec.CancelAfterNs, maxInt64
	r.deadline = w.nowNs() + int64(w.timeout)
	r.head, r.body, r.session = w.targets[r.url].heads[rec.PathID], body, rec.Session
	r.marked, r.attempt, r.prefilled = false, 0, false
	if r.rel.Prefill {
		r.ft.reset(w.ep)
	}
	w.sent.Add(1)
	l.connect(r)
}

// ended hands r's end to the scheduler (ok: it completed) and frees r; when its unit is
// over, the unit's sticky connection closes.
func (l *evloop) ended(r *loopRequest, ok bool) {
	l.stopTimer(r)
	if r.c != nil {
		l.closeConn(r.c)
		r.c = nil
	}
	end := r.q.EndNs
	if end < 0 {
		end = l.w.nowNs()
	}
	if l.s.Ended(r.rel.Node, end, ok) {
		l.dropUnit(r.rel.Unit)
	}
	r.state, r.body, r.unit = lsIdle, nil, nil
	l.free = append(l.free, r)
}

// dropUnit forgets unit u's state; its sticky connection closes.
func (l *evloop) dropUnit(u int32) {
	lu := l.units[u]
	if lu.sticky != nil {
		l.closeConn(lu.sticky)
		lu.sticky = nil
	}
	l.units[u] = nil
	l.freeUnits = append(l.freeUnits, lu)
}

// fireTimers acts on every deadline due at now.
func (l *evloop) fireTimers(now int64) {
	for len(l.heap) > 0 && l.heap[0].timerAt <= now {
		r := l.heap[0]
		l.stopTimer(r)
		switch r.state {
		case lsConnect:
			// As a dial past its deadline fails: "connect: i/o timeout".
			l.dialFailed(r, os.ErrDeadlineExceeded)
		case lsWrite, lsRead:
			r.c.broken = true
			l.exchangeEnd(r, exDeadline, os.ErrDeadlineExceeded)
		}
	}
}

// The deadline heap: one entry per loopRequest at most, keyed by timerAt.

func (l *evloop) setTimer(r *loopRequest, at int64) {
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

func (l *evloop) stopTimer(r *loopRequest) {
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
