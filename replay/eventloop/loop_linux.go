//go:build linux

package eventloop

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay/driver"
	"github.com/llmbench/llmbench/replay/http1"
	"github.com/llmbench/llmbench/replay/schedule"
	"golang.org/x/sys/unix"
)

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
	http1.Conn // target, used, broken
	fd         int
	slot       int32        // index in evloop.conns: the epoll event's data
	req        *loopRequest // request using it; nil while idle
	pendingIn  bool         // a readable edge came while nobody was reading
	fin        bool         // the server's FIN was reported (EPOLLRDHUP or EPOLLHUP)
	// connecting says a spare (opened ahead, in the idle pool) has not yet reported its
	// handshake done: a request that takes it waits for the EPOLLOUT edge, as after a dial.
	connecting bool
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
	eb        http1.Buffers
	rp        http1.Parser
	q         rawlog.Request
	spliced   []byte
	iov       [3]unix.Iovec
	rdhupSeen bool
	prefilled bool              // its first token was handed to the scheduler (rel.Prefill)
	ft        driver.FirstToken // finds it
}

// loopUnit is what the loop keeps of a unit while it runs: its sticky connection and the
// responses live history splices into its later turns.
type loopUnit struct {
	sticky *loopConn
	hist   driver.History
}

// Loop is a worker's event loop.
type Loop struct {
	// holding is set while a dispatch pass starts requests: their Sent records are queued
	// and the requests held (held) until the pass flushes the records once (releaseHeld).
	holding bool
	held    []*loopRequest
	w       *driver.Worker
	s       *schedule.Scheduler
	ep      int
	tfd     int
	kick    *driver.Sleeper // the timerfd, as stop and abort kick it
	events  []unix.EpollEvent
	addrs   []unix.Sockaddr // per target
	family  []int
	picker  *driver.LocalAddrPicker

	conns    []*loopConn
	freeSlot []int32
	// closedSlots are slots freed during the current batch of events: they are reused only
	// after it, so a later event of the batch for a closed connection never reaches a new one.
	closedSlots []int32
	idle        [][]*loopConn // pooled keep-alive connections per target, LIFO
	free        []*loopRequest
	all         []*loopRequest // every loopRequest ever made, for the abort sweep
	heap        []*loopRequest
	units       *driver.Units[loopUnit]
	dropFn      func(u int32) // l.dropUnit, bound once
	lv          driver.Live   // live history scratch: the loop splices one body at a time

	monoOff int64 // CLOCK_MONOTONIC minus run clock
	armedAt int64 // run-clock instant the timerfd is armed for; schedule.Never: disarmed

	// polledNs is when this pass took its events; lateNs is how long the loop worked
	// without taking any before it (0 after it parked: the poller woke it at once). A fresh
	// connection the server closed before the loop got back to it counts against the client
	// when lateNs is long (closedFirst).
	polledNs, lateNs int64
	parked           bool
	// moreDue says dispatch stopped at maxDispatchBurst with requests still due.
	moreDue bool
	// spareDue says a request took from (or missed) a URL's pool this pass: the pass opens
	// the spares it lacks after its sends (replenish).
	spareDue bool

	sawStop  bool // w.stopping seen
	stopSeen bool // the scheduler told of the stop
	sawAbort bool

	// epf is the epoll set as Go's poller holds it, rc its raw access (run).
	epf *os.File
	rc  syscall.RawConn
}

// armUnknown is armedAt when the timerfd may have been re-armed (it fired, or a kick).
const armUnknown = math.MinInt64

// New prepares the event loop for w, or says why this run cannot use it (then the worker
// keeps the net client; ErrTLS for an https URL).
func New(w *driver.Worker) (*Loop, error) {
	l := &Loop{w: w, s: w.Sched, armedAt: armUnknown, parked: true, picker: w.Source,
		units: driver.NewUnits[loopUnit](w.Graph.Units()), lv: w.Live.Fresh()}
	l.dropFn = l.dropUnit
	for _, t := range w.Targets {
		if t.TLS != nil {
			return nil, ErrTLS
		}
		ap, err := http1.ResolveAddr(t.Addr)
		if err != nil {
			return nil, err
		}
		a, pn := ap.Addr(), int(ap.Port())
		if a.Is4() {
			l.addrs = append(l.addrs, &unix.SockaddrInet4{Port: pn, Addr: a.As4()})
			l.family = append(l.family, unix.AF_INET)
		} else {
			l.addrs = append(l.addrs, &unix.SockaddrInet6{Port: pn, Addr: a.As16()})
			l.family = append(l.family, unix.AF_INET6)
		}
		if l.picker.Len() > 0 && l.picker.First().Is4() != a.Is4() {
			return nil, fmt.Errorf("local-addr %s and target %s are of different IP families", l.picker.First(), t.Addr)
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
	// The epoll set itself goes into Go's poller (run): a non-blocking descriptor that
	// os.NewFile registers there, and that takes a deadline only once registered.
	if err := unix.SetNonblock(ep, true); err != nil {
		unix.Close(ep)
		unix.Close(tfd)
		return nil, fmt.Errorf("epoll set: set non-blocking: %w", err)
	}
	l.epf = os.NewFile(uintptr(ep), "epoll")
	rc, err := l.epf.SyscallConn()
	if err == nil {
		err = l.epf.SetReadDeadline(time.Time{})
	}
	if err != nil {
		l.epf.Close()
		unix.Close(tfd)
		return nil, fmt.Errorf("epoll set in Go's poller: %w", err)
	}
	l.rc = rc
	// Close closes this file, and so the timerfd, after the run.
	l.kick = driver.SleeperOn(tfd, nil)
	l.events = make([]unix.EpollEvent, 512)
	l.idle = make([][]*loopConn, len(w.Targets))
	return l, nil
}

// run is the loop; it returns when every request it started has ended and the scheduler
// releases nothing more (sent all, stopped, or aborted).
//
// The loop waits on its epoll set through Go's poller, where the set is registered as one
// readable descriptor: when a pass leaves nothing ready, the goroutine parks, the worker's
// only P goes idle and its thread blocks in the runtime's own epoll_wait until a socket or
// the timerfd is ready. So the loop's thread never sleeps holding a P, sysmon has none to
// retake and falls into its deep sleep, and the log writer, command reader and tickers run
// on the same thread between the loop's passes: no second thread is runnable on the
// worker's CPU. Each wake-up costs the runtime's epoll_wait, its non-blocking poll before
// parking, and the loop's own non-blocking epoll_wait that takes the events: measured
// against a blocking epoll_wait on a locked thread with a second P (#17's design), it
// halves the context switches per request and removes sysmon's polling (replay/doc.go,
// Clients, has the figures).
func (l *Loop) Run() {
	w := l.w
	debug.SetPanicOnFault(true) // a truncated plan: see guard
	defer l.closeAll()
	defer l.epf.Close()
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	l.monoOff = ts.Nano() - w.Now()
	// Before the start instant: the first sends find their connections made.
	l.replenish(w.SpareConns)
	// RawConn.Read parks the goroutine whenever turn returns false and calls it again once
	// the set is readable; it returns when turn says the loop is over.
	if err := l.rc.Read(l.turn); err != nil {
		// Only a closed descriptor makes it fail, and nothing closes it before run returns.
		panic(fmt.Sprintf("replay: the event loop's epoll set in the poller: %v", err))
	}
}

// Wake makes the loop look at the run's Stop now: its timerfd fires.
func (l *Loop) Wake() { l.kick.Kick() }

// Abort makes the loop cut what is in flight (it sees the Stop aborting) now.
func (l *Loop) Abort() { l.kick.Kick() }

// Close closes the loop's timerfd once Run returned (Run closes the rest).
func (l *Loop) Close() { l.kick.Close() }

// turn takes every event ready now, acts on them, then makes a pass over the timers and the
// scheduler and arms the timerfd. It says whether the loop is over; false parks it until
// the epoll set is readable again.
func (l *Loop) turn(uintptr) bool {
	w := l.w
	for {
		if t := w.Now(); l.parked {
			l.parked, l.lateNs, l.polledNs = false, 0, t
		} else {
			l.lateNs, l.polledNs = t-l.polledNs, t
		}
		n, err := rawEpollWaitNow(l.ep, l.events)
		if err != nil && err != unix.EINTR {
			w.Log.Fail(fmt.Errorf("epoll_wait: %w", err))
		}
		l.handle(n)
		l.flags()
		now := w.Now() // the pass's one clock read
		l.fireTimers(now)
		l.dispatch(now)
		if l.spareDue {
			l.replenish(sparesPerPass)
		}
		if l.s.Finished() {
			return true
		}
		l.arm()
		if n == len(l.events) || l.moreDue || w.Stop.Stopping() != l.sawStop || w.Stop.Aborting() != l.sawAbort {
			// More events than the batch held (they raise no new edge in the poller),
			// requests still due after a burst, or a kick that may have come before the
			// timer was armed over it.
			continue
		}
		// One wake-up of the log writer for what this pass logged (ownerFlush): it writes
		// the frames on this thread once the loop has parked.
		w.Log.Flush()
		l.parked = true
		return false
	}
}

// handle acts on the first n events of l.events.
func (l *Loop) handle(n int) {
	var buf [8]byte
	for i := 0; i < n; i++ {
		ev := &l.events[i]
		if ev.Fd < 0 {
			rawRead(l.tfd, buf[:])
			l.armedAt = armUnknown // a kick may have re-armed it
			continue
		}
		l.onEvent(l.conns[ev.Fd], ev.Events)
		if i%dueCheckEvery == dueCheckEvery-1 && i+1 < n {
			l.dispatchDue()
		}
	}
	// Slots freed by this batch's events may be reused from now on.
	l.freeSlot = append(l.freeSlot, l.closedSlots...)
	l.closedSlots = l.closedSlots[:0]
}

// dueCheckEvery is how many events of a batch the loop handles between looks at the
// schedule: a long batch (a burst of chunks, or the thread back from a descheduling) would
// otherwise hold the sends that fell due meanwhile until its end, and send them back to back.
const dueCheckEvery = 16

// dispatchDue starts the requests already due, mid-batch: no spin, no timer (dispatch does
// those after the batch). Slots closed in the batch are not reused before its end
// (closedSlots), so a send here cannot take a slot a later event of the batch names.
func (l *Loop) dispatchDue() {
	w, s := l.w, l.s
	if l.stopSeen || w.Stop.Stopping() {
		return
	}
	now := w.Now()
	l.holding = true
	defer l.releaseHeld()
	for from := now; now-from <= maxDispatchBurst; now = w.Now() {
		rel, ok := s.Due(now)
		if !ok {
			return
		}
		l.start(rel, now)
	}
}

// flags acts on stop and abort, once each.
func (l *Loop) flags() {
	w := l.w
	if !l.sawStop && w.Stop.Stopping() {
		l.sawStop = true
	}
	// Nothing new starts; units with nothing running are over.
	l.stopSeen = l.units.Stopped(l.s, l.sawStop, l.dropFn)
	if !l.sawAbort && w.Stop.Aborting() {
		l.sawAbort = true
		for _, r := range l.all {
			if r.c == nil || r.c.req != r {
				continue
			}
			switch r.state {
			case lsConnect:
				l.dialFailed(r, errAbortedDial)
			case lsWrite, lsRead:
				l.exchangeEnd(r, http1.Deadline, os.ErrDeadlineExceeded)
			}
		}
	}
}

// ErrTLS says why a run with an https URL keeps the net client (documented, not reported).
var ErrTLS = errors.New("TLS targets use the net client")

// errAbortedDial is the dial error of a connect the abort cut.
var errAbortedDial = errors.New("operation was canceled")

// maxDispatchBurst bounds how long one pass starts requests before it takes the events that
// came meanwhile. A burst of thousands of connects (a closed-loop run's first instant) would
// otherwise leave the first connections unwritten until the last connect returned: seconds,
// when connect() itself slows (connbudget.go), and a server that waits that long for a
// request's headers closes them (closedFirst).
const maxDispatchBurst = int64(5 * time.Millisecond)

// dispatch starts everything the scheduler has due at now (maxDispatchBurst at a time), spinning up to the worker's spin
// for an open-loop instant that is that close, and acts on the scheduler's own stop (the
// duration) and its abort. The clock is read again only after a request starts (its start
// took time) and while spinning.
func (l *Loop) dispatch(now int64) {
	w, s := l.w, l.s
	l.moreDue = false
	l.holding = true
	defer l.releaseHeld()
	for from := now; !l.stopSeen && !w.Stop.Stopping(); {
		if now-from > maxDispatchBurst {
			l.moreDue = true // the rest after this pass's events
			break
		}
		rel, ok := s.Due(now)
		if !ok {
			// What the pass started goes out before any wait for the next instant.
			l.releaseHeld()
			l.holding = true
			at, open := s.NextWake()
			var spun bool
			if now, spun = w.SpinTo(at, open, now); !spun {
				break
			}
			continue
		}
		l.start(rel, now)
		now = w.Now()
	}
	if s.Stopped() == schedule.DurationElapsed {
		w.Log.DurationElapsed()
	}
	if s.AbortDue(now) {
		w.Log.DurationAbort()
	}
}

// arm sets the timerfd to the earliest instant the loop must wake for: the scheduler's next
// instant (its spin earlier for an open-loop send) and the earliest deadline.
func (l *Loop) arm() {
	w := l.w
	next := w.WakeAt(l.s.NextWake())
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
	if err := rawTimerfdSettime(l.tfd, unix.TFD_TIMER_ABSTIME, &its); err != nil {
		w.Log.Fail(fmt.Errorf("timerfd_settime: %w", err))
	}
	l.armedAt = next
}

// start begins the request the scheduler released at now.
func (l *Loop) start(rel schedule.Release, now int64) {
	var r *loopRequest
	if n := len(l.free); n > 0 {
		r, l.free = l.free[n-1], l.free[:n-1]
	} else {
		r = l.newRequest()
	}
	r.rel, r.unit, r.url = rel, l.units.Of(rel), l.w.URLOfUnit(rel.Unit)
	l.startTurn(r, now)
}

// newRequest makes a loopRequest with its buffers (a read buffer and the response's first
// storage). Their pages are mapped by the reads that use them: touched here, a burst of sends
// that makes its requests (concurrency 256 at the first instant) held the reads of the first
// responses back, +12 ms on TTFT p99 against the wire.
func (l *Loop) newRequest() *loopRequest {
	r := &loopRequest{hidx: -1}
	r.eb.Init(l.w.MaxResponseBytes)
	r.eb.Trace = l.w.Trace
	l.all = append(l.all, r)
	return r
}

// sparesPerPass is the most spare connections per URL a pass opens (replenish), so that one
// pass does not hold the next sends for long.
const sparesPerPass = 2

// guard handles a fault on the plan's mapping while reading it for r: r ends unsent and the
// worker fails, as the runner's fault does.
func (l *Loop) guard(r *loopRequest) {
	v := recover()
	if v == nil {
		return
	}
	err := l.w.Plan.FaultError(v)
	if err == nil {
		panic(v)
	}
	l.w.Log.Fail(err)
	l.ended(r, false)
}

// startTurn sends r's record; its timeout counts from now.
func (l *Loop) startTurn(r *loopRequest, now int64) {
	defer l.guard(r)
	w := l.w
	rec, body, err := w.Plan.Record(int(r.rel.Index))
	if err != nil {
		w.Log.Fail(err)
		l.ended(r, false)
		return
	}
	if r.rel.Entry {
		r.unit.hist.Reset(rec.Turn)
	}
	if rec.Flags&mmapds.FlagLiveHistory != 0 && l.lv.Enabled() {
		r.spliced = r.unit.hist.Splice(&l.lv, r.spliced[:0], body, rec.Index)
		body = r.spliced
	}
	q := &r.q
	driver.BeginRecord(q, &rec, r.rel.Ready, r.url)
	r.cancelNs, r.cancelAt = rec.CancelAfterNs, driver.MaxInt64
	r.deadline = now + int64(w.Timeout)
	r.head, r.body, r.session = w.Targets[r.url].Heads[rec.PathID], body, rec.Session
	r.marked, r.attempt, r.prefilled = false, 0, false
	if r.rel.Prefill {
		r.ft.Reset(w.FirstToken)
	}
	w.Sent.Add(1)
	l.connect(r)
}

// ended hands r's end to the scheduler (ok: it completed) and frees r; when its unit is
// over, the unit's sticky connection closes.
func (l *Loop) ended(r *loopRequest, ok bool) {
	l.stopTimer(r)
	if r.c != nil {
		l.closeConn(r.c)
		r.c = nil
	}
	end := r.q.EndNs
	if end < 0 {
		end = l.w.Now()
	}
	if l.s.Ended(r.rel.Node, end, ok) {
		l.dropUnit(r.rel.Unit)
	}
	r.state, r.body, r.unit = lsIdle, nil, nil
	l.free = append(l.free, r)
}

// dropUnit forgets unit u's state; its sticky connection closes.
func (l *Loop) dropUnit(u int32) {
	lu := l.units.Drop(u)
	if lu.sticky != nil {
		l.closeConn(lu.sticky)
		lu.sticky = nil
	}
}

// fireTimers acts on every deadline due at now.
func (l *Loop) fireTimers(now int64) {
	for len(l.heap) > 0 && l.heap[0].timerAt <= now {
		r := l.heap[0]
		l.stopTimer(r)
		switch r.state {
		case lsConnect:
			// As a dial past its deadline fails: "connect: i/o timeout".
			l.dialFailed(r, os.ErrDeadlineExceeded)
		case lsWrite, lsRead:
			r.c.Broken = true
			l.exchangeEnd(r, http1.Deadline, os.ErrDeadlineExceeded)
		}
	}
}

// The deadline heap: one entry per loopRequest at most, keyed by timerAt.

func (l *Loop) setTimer(r *loopRequest, at int64) {
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

func (l *Loop) stopTimer(r *loopRequest) {
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

func (l *Loop) heapSwap(i, j int) {
	h := l.heap
	h[i], h[j] = h[j], h[i]
	h[i].hidx, h[j].hidx = i, j
}

func (l *Loop) heapFix(i int) {
	if !l.heapDown(i) {
		l.heapUp(i)
	}
}

func (l *Loop) heapUp(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if l.heap[p].timerAt <= l.heap[i].timerAt {
			return
		}
		l.heapSwap(i, p)
		i = p
	}
}

func (l *Loop) heapDown(i0 int) bool {
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
