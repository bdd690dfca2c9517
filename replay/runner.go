package replay

import (
	"math"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay/http1"
	"github.com/llmbench/llmbench/replay/schedule"
)

// The net client (ClientNet). One dispatcher drives the worker's scheduler (package
// schedule) and a pool of runner goroutines sends what it releases, one request each at a
// time, over Go's net package. The scheduler sits behind the dispatcher's lock and moves on
// two kinds of event: the dispatcher's timer (a timerfd in Go's poller) for planned
// instants, ramp steps, think times and the duration's end, and the end of a request, which
// the runner that sent it hands in itself. That runner then goes on with the first request
// the end made due, so a closed loop passes no message between goroutines per request.

// netUnit is what the net client keeps of a unit while it runs: its sticky connection and
// the responses live history splices into its later turns.
type netUnit struct {
	mu     sync.Mutex // a graph's branches may run in several runners at once
	sticky *http1.NetConn
	hist   history
}

// netWork is a release handed to a runner, with its unit's state.
type netWork struct {
	rel  schedule.Release
	unit *netUnit
}

// dispatcher drives the worker's scheduler for the net client.
type dispatcher struct {
	w *worker
	// mu guards the scheduler and everything below up to work.
	mu       sync.Mutex
	s        *schedule.Scheduler
	units    []*netUnit // per unit, while it runs
	free     []*netUnit
	armed    int64 // what the dispatcher's timer waits for; math.MinInt64 once poked
	stopSeen bool

	sl *sleeper
	// poke, then a kick of sl, wakes the dispatcher before armed (its sleeper's stop flag).
	poke    atomic.Bool
	work    chan netWork
	running sync.WaitGroup // releases handed out and not yet handed back
}

func newDispatcher(w *worker) (*dispatcher, error) {
	d := &dispatcher{w: w, s: w.sched, units: make([]*netUnit, w.g.Units()), armed: math.MinInt64, work: make(chan netWork)}
	sl, err := newSleeper(&d.poke)
	if err != nil {
		return nil, err
	}
	d.sl = sl
	return d, nil
}

// wake makes the dispatcher look at the scheduler now (stop and abort call it).
func (d *dispatcher) wake() {
	d.poke.Store(true)
	d.sl.kick()
}

// run sleeps until the scheduler's next instant, hands out what is due then, and returns once
// nothing runs and nothing more will.
func (d *dispatcher) run() {
	w := d.w
	defer w.dispatchers.Done()
	for {
		d.mu.Lock()
		d.poke.Store(false)
		_, _, ev := d.pump(false)
		at, open := d.s.NextWake()
		finished := d.s.Finished()
		d.armed = at
		d.mu.Unlock()
		ev.act(w)
		if finished {
			return
		}
		spin := int64(0)
		if open {
			spin = w.cfg.SpinNs
		}
		w.sleepUntil(d.sl, at, spin)
	}
}

// schedEvents is what a pass over the scheduler asks of the worker, done after the lock.
type schedEvents struct {
	duration, abort bool
	drop            *http1.NetConn // a sticky connection whose unit is over
}

func (ev schedEvents) act(w *worker) {
	if ev.drop != nil {
		ev.drop.NC.Close()
	}
	if ev.duration {
		w.durationElapsed()
	}
	if ev.abort {
		w.durationAbort()
	}
}

// pump hands out what the scheduler has due. With keep, the first release is the caller's:
// a runner that just ended a request goes on with it. Under d.mu.
func (d *dispatcher) pump(keep bool) (kept netWork, have bool, ev schedEvents) {
	w := d.w
	for !d.stopped() {
		rel, ok := d.s.Due(w.nowNs())
		if !ok {
			break
		}
		wk := netWork{rel: rel, unit: d.unitOf(rel)}
		d.running.Add(1)
		if keep && !have {
			kept, have = wk, true
			continue
		}
		d.hand(wk)
	}
	d.stopped()
	ev.duration = d.s.Stopped() == schedule.DurationElapsed
	ev.abort = d.s.AbortDue(w.nowNs())
	return kept, have, ev
}

// stopped tells the scheduler of a stop once, drops the units that are over with it, and
// says whether the scheduler releases nothing more.
func (d *dispatcher) stopped() bool {
	if !d.stopSeen && (d.w.stopping.Load() || d.s.Stopped() != schedule.Running) {
		d.stopSeen = true
		d.s.Stop()
		for u, nu := range d.units {
			if nu != nil && d.s.UnitOver(int32(u)) {
				if c := d.dropUnit(int32(u)); c != nil {
					c.NC.Close()
				}
			}
		}
	}
	return d.stopSeen
}

// unitOf returns the state of rel's unit, new when rel starts it.
func (d *dispatcher) unitOf(rel schedule.Release) *netUnit {
	if !rel.Entry {
		return d.units[rel.Unit]
	}
	var nu *netUnit
	if n := len(d.free); n > 0 {
		nu, d.free = d.free[n-1], d.free[:n-1]
	} else {
		nu = &netUnit{}
	}
	d.units[rel.Unit] = nu
	return nu
}

// dropUnit forgets unit u's state and returns its sticky connection, for the caller to close.
func (d *dispatcher) dropUnit(u int32) *http1.NetConn {
	nu := d.units[u]
	d.units[u] = nil
	c := nu.sticky
	nu.sticky = nil
	d.free = append(d.free, nu)
	return c
}

// hand gives wk to an idle runner, starting a new one when none is idle.
func (d *dispatcher) hand(wk netWork) {
	select {
	case d.work <- wk:
		return
	default:
	}
	go newRunner(d.w).loop()
	d.work <- wk
}

// ended hands in the end of wk's request at endNs (ok: it completed) and returns what the
// runner sends next, if anything.
func (d *dispatcher) ended(wk netWork, endNs int64, ok bool) (netWork, bool) {
	d.mu.Lock()
	var drop *http1.NetConn
	if d.s.Ended(wk.rel.Node, endNs, ok) {
		drop = d.dropUnit(wk.rel.Unit)
	}
	next, have, ev := d.pump(true)
	ev.drop = drop
	// The end may have moved the next instant earlier (a think time), or ended the run.
	if at, _ := d.s.NextWake(); d.armed != math.MinInt64 && (at < d.armed || d.s.Finished()) {
		d.armed = math.MinInt64
		d.wake()
	}
	d.mu.Unlock()
	d.running.Done()
	ev.act(d.w)
	return next, have
}

// prefilled hands in that node's request got its first token: its prefill slot is free, and
// what waited for it goes out now.
func (d *dispatcher) prefilled(node int32) {
	d.mu.Lock()
	d.s.Prefilled(node)
	_, _, ev := d.pump(false)
	if at, _ := d.s.NextWake(); d.armed != math.MinInt64 && at < d.armed {
		d.armed = math.MinInt64
		d.wake()
	}
	d.mu.Unlock()
	ev.act(d.w)
}

// runner sends what the dispatcher releases, one request at a time. Runners are pooled by
// the dispatcher and keep their buffers, so a request allocates nothing once they have grown.
type runner struct {
	w *worker

	mu     sync.Mutex // guards active against abort
	active *http1.NetConn

	eb http1.Buffers
	q  rawlog.Request

	// Per request, read by afterWrite.
	deadline time.Time // request timeout
	cancelNs int64     // CancelAfterNs of the current record
	cancelAt int64     // run-clock instant the cancel-after fires, or maxInt64
	after    func(int64)

	unit *netUnit // the unit of the request being sent
	node int32    // its node, for onBody
	// ft finds the first token of the request being sent under a prefill cap; onBodyFn is
	// r.onBody, bound once (the exchange's hook).
	ft       firstToken
	onBodyFn func([]byte) bool

	inRequest bool // between do's start and the request's record: fault logs it

	lv   live   // live history state (only for live-history plans)
	body []byte // spliced body
}

func newRunner(w *worker) *runner {
	r := &runner{w: w, lv: w.lr.fresh()}
	r.eb.Init(w.cfg.MaxResponseBytes)
	r.resetResponse()
	r.after = r.afterWrite
	r.onBodyFn = r.onBody
	w.register(r, nil)
	return r
}

// onBody looks for the first token of the request being sent in its body so far; once it
// came, the dispatcher is told (its prefill slot frees) and onBody is done.
func (r *runner) onBody(body []byte) bool {
	if !r.ft.feed(body) {
		return false
	}
	r.w.disp.prefilled(r.node)
	return true
}

func (r *runner) loop() {
	// Runners are the goroutines that read the plan's mapping (records, and bodies for TLS
	// and live history): a plan truncated mid-run must fail the run, not kill the worker
	// with SIGBUS. fault turns the fault into that failure.
	debug.SetPanicOnFault(true)
	d := r.w.disp
	for wk := range d.work {
		for more := true; more; {
			end, ok := r.send(wk)
			wk, more = d.ended(wk, end, ok)
		}
	}
}

// send sends wk's request and logs it; it returns when the request ended and whether it
// completed (a 2xx response read to its end). A request the scheduler released just before
// the run stopped is not sent: the worker logs it with the others never sent.
func (r *runner) send(wk netWork) (end int64, ok bool) {
	w := r.w
	defer func() {
		if v := recover(); v != nil {
			r.fault(v)
			end, ok = w.nowNs(), false
		}
	}()
	rel, nu := wk.rel, wk.unit
	rec, body, err := w.plan.Record(int(rel.Index))
	if err != nil {
		w.fail(err)
		return w.nowNs(), false
	}
	if w.stopping.Load() {
		return w.nowNs(), false
	}
	r.unit = nu
	if rel.Entry {
		nu.hist.reset(rec.Turn)
	}
	if rec.Flags&mmapds.FlagLiveHistory != 0 && r.lv.enabled() {
		nu.mu.Lock()
		r.body = nu.hist.splice(&r.lv, r.body[:0], body, rec.Index)
		nu.mu.Unlock()
		body = r.body
	}
	r.node = rel.Node
	if rel.Prefill {
		r.ft.reset(w.ep)
		r.eb.OnBody = r.onBodyFn
	}
	r.do(&rec, body, rel.Ready, w.urlOfUnit(rel.Unit))
	r.eb.OnBody = nil
	if r.lv.enabled() && len(w.g.Children(rel.Node)) > 0 {
		nu.mu.Lock()
		nu.hist.add(&r.lv, rec.Index, r.q.Body)
		nu.mu.Unlock()
	}
	end = r.q.EndNs
	if end < 0 {
		end = w.nowNs()
	}
	return end, countedOutcome(&r.q) == rawlog.OutcomeCompleted
}

// fault handles a fault on the plan's mapping (v, recovered by send): the request in
// progress ends failed, its connection is closed, and the worker fails. Other panics go on.
func (r *runner) fault(v any) {
	err := r.w.plan.FaultError(v)
	if err == nil {
		panic(v)
	}
	r.mu.Lock()
	c := r.active
	r.mu.Unlock()
	if c != nil {
		c.NC.Close()
	}
	if r.inRequest {
		r.finish(nil, http1.NetError, err, "")
	}
	r.w.fail(err)
}

// do sends one request and logs its outcome.
func (r *runner) do(rec *mmapds.Record, body []byte, ready int64, url int) {
	w := r.w
	q := &r.q
	q.Index = rec.Index
	q.Outcome = 0
	q.Status = 0
	q.ConnReused = false
	q.IntendedNs = rec.SendOffsetNs
	if q.IntendedNs < 0 {
		q.IntendedNs = -1
	}
	q.ReadyNs = ready
	q.WriteStartNs, q.WriteEndNs, q.HeaderNs, q.EndNs = -1, -1, -1, -1
	q.ConnectStartNs, q.ConnectEndNs = -1, -1
	http1.ResetReconnect(q)
	r.resetResponse()
	q.Err = ""
	q.URLIndex = url
	r.inRequest = true
	r.cancelNs = rec.CancelAfterNs
	r.cancelAt = maxInt64
	r.deadline = time.Now().Add(w.timeout)
	t := w.targets[url]
	head := t.Heads[rec.PathID]

	w.sent.Add(1)
	marked := false
	for attempt := 0; ; attempt++ {
		c := r.getConn(url)
		if c == nil {
			q.ConnectStartNs = w.nowNs()
			nc, err := http1.Dial(w.ctx, &w.dialer, t, url, r.deadline)
			q.ConnectEndNs = w.nowNs()
			if err != nil && !marked && w.aborting.Load() {
				// The abort cut the dial: nothing reached the server.
				r.notSent(url, "not sent: "+*w.abortWhy.Load())
				return
			}
			if err != nil {
				r.finish(nil, http1.NetError, err, "connect: ")
				return
			}
			c = nc
		}
		if !marked {
			// From here on the server may see the request: if this worker dies before its
			// Request record is written, the Sent record makes it lost (in flight), not
			// not_sent. A retry on a fresh connection is the same request.
			marked = true
			if err := w.logSent(q.Index); err != nil {
				// Without its Sent record the request must not reach the server: a crash
				// would count it never sent. It is not sent, and the run fails.
				c.NC.Close()
				r.notSent(url, "not sent: "+err.Error())
				return
			}
		}
		q.ConnReused = c.Used
		r.setActive(c)
		res, err := http1.Exchange(c, head, body, w.cfg.SessionHeader, rec.Session, &r.eb, q, w.nowFn, r.after)
		if res == http1.StaleConn && attempt == 0 {
			// The server closed an idle keep-alive connection as we reused it; nothing of
			// the request reached it, so send it again on a new connection.
			http1.MarkReconnect(q)
			w.conns.ServerClosed(&c.Conn, w.nowNs())
			r.setActive(nil)
			c.NC.Close()
			q.Status, q.WriteStartNs, q.WriteEndNs, q.HeaderNs = 0, -1, -1, -1
			r.resetResponse()
			r.cancelAt = maxInt64
			c = nil
			if !r.prepareRetry() {
				r.finish(nil, http1.NetError, err, "")
				return
			}
			continue
		}
		r.finish(c, res, err, "")
		return
	}
}

// notSent logs the current request as never sent, with why, instead of its exchange.
func (r *runner) notSent(url int, why string) {
	q := &r.q
	r.w.sent.Add(-1)
	r.inRequest = false
	rn, re, rb := q.ReadNs[:0], q.ReadEnd[:0], q.Body[:0] // keep the buffers
	*q = notSentRecord(q.Index, q.IntendedNs, url, why)
	q.ReadNs, q.ReadEnd, q.Body = rn, re, rb
	r.w.logRequest(q)
}

// prepareRetry makes the next attempt dial: pooled idle connections are as stale as the one
// that failed.
func (r *runner) prepareRetry() bool {
	w := r.w
	if w.reuse == ReusePooled {
		w.pool.closeAll()
	}
	return !w.aborting.Load()
}

// getConn returns a connection to reuse, or nil to dial: always nil for a URL whose server
// closes after each response (connpolicy.go), and the request says why.
func (r *runner) getConn(url int) *http1.NetConn {
	if r.w.reuse != ReuseNever && r.w.conns.ClosesAfterResponse(url) {
		r.q.ServerClosed = true
		r.w.pool.drop(url) // dead, or about to be
		if r.w.reuse == ReuseSticky {
			r.unit.mu.Lock()
			c := r.unit.sticky
			r.unit.sticky = nil
			r.unit.mu.Unlock()
			if c != nil {
				c.NC.Close()
			}
		}
		return nil
	}
	switch r.w.reuse {
	case ReusePooled:
		return r.w.pool.get(url)
	case ReuseSticky:
		// The unit's connection is the request's until it ends (finish gives it back).
		r.unit.mu.Lock()
		c := r.unit.sticky
		r.unit.sticky = nil
		r.unit.mu.Unlock()
		if c != nil && c.Unsolicited() {
			c.NC.Close() // see pool.get
			r.w.conns.ServerClosed(&c.Conn, r.w.nowNs())
			r.q.ServerClosed = true
			c = nil
		}
		return c
	}
	return nil
}

// setActive registers c as the runner's in-flight connection (so abort can cut it) and
// gives it the request's deadline.
func (r *runner) setActive(c *http1.NetConn) {
	r.mu.Lock()
	r.active = c
	if c != nil {
		c.NC.SetDeadline(r.deadline)
		if r.w.aborting.Load() {
			c.NC.SetDeadline(aLongTimeAgo)
		}
	}
	r.mu.Unlock()
}

// afterWrite arms the cancel-after deadline once the whole request is written.
func (r *runner) afterWrite(writeEnd int64) {
	if r.cancelNs <= 0 {
		return
	}
	r.cancelAt = writeEnd + r.cancelNs
	at := r.w.start.Add(time.Duration(r.cancelAt))
	if at.Before(r.deadline) {
		r.mu.Lock()
		if r.active != nil && !r.w.aborting.Load() {
			r.active.NC.SetReadDeadline(at)
		}
		r.mu.Unlock()
	}
}

// finish decides the outcome, disposes of the connection and logs the request.
func (r *runner) finish(c *http1.NetConn, res http1.Result, err error, prefix string) {
	w := r.w
	q := &r.q
	q.EndNs = w.nowNs()
	r.inRequest = false
	r.setActive(nil)
	w.settle(q, res, err, prefix, r.cancelAt, &r.eb)
	if c != nil {
		c.Reused(q.EndNs)
		switch {
		case res != http1.OK || !w.conns.Keep(&c.Conn, w.reuse):
			c.NC.Close()
		case w.reuse == ReuseSticky:
			r.unit.mu.Lock()
			if r.unit.sticky == nil {
				r.unit.sticky, c = c, nil
			}
			r.unit.mu.Unlock()
			if c != nil {
				c.NC.Close() // another request of the unit gave its connection back first
			}
		default:
			w.pool.put(c)
		}
	}
	w.logDone(q)
}

// resetResponse empties the response fields of the runner's record (http1.ResetResponse).
func (r *runner) resetResponse() { http1.ResetResponse(&r.q) }
