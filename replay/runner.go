package replay

import (
	"runtime/debug"
	"sync"
	"time"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
)

// runner sends units (a session's chained turns) one request at a time. Runners are pooled
// by the worker and keep their buffers, so a request allocates nothing once they have grown.
type runner struct {
	w  *worker
	sl *sleeper

	mu     sync.Mutex // guards active against abort
	active *conn

	eb exchangeBuffers
	q  rawlog.Request

	// Per request, read by afterWrite.
	deadline time.Time // request timeout
	cancelNs int64     // CancelAfterNs of the current record
	cancelAt int64     // run-clock instant the cancel-after fires, or maxInt64
	after    func(int64)

	sticky *conn // sticky-user-sessions: the unit's connection

	inRequest bool // between do's start and the request's record: recoverFault logs it

	lv   live     // live history state (only for live-history plans)
	body []byte   // spliced body
	hist [][]byte // the unit's response texts so far, from its first turn on
}

func newRunner(w *worker) (*runner, error) {
	r := &runner{w: w}
	r.eb.rbuf = make([]byte, readBufSize)
	r.eb.maxBody = int(w.cfg.MaxResponseBytes)
	r.resetResponse()
	r.after = r.afterWrite
	if w.lr.enabled() {
		if err := r.lv.init(w.meta); err != nil {
			return nil, err
		}
	}
	w.register(r, nil)
	return r, nil
}

// sleeper returns the runner's timer, created on first use: only sessions with later turns
// wait, and a timerfd per runner would cost a file descriptor per concurrent request.
func (r *runner) sleeper() (*sleeper, error) {
	if r.sl == nil {
		sl, err := newSleeper(&r.w.stopping)
		if err != nil {
			return nil, err
		}
		r.sl = sl
		r.w.register(nil, sl)
	}
	return r.sl, nil
}

func (r *runner) loop() {
	// Runners are the goroutines that read the plan's mapping (records, and bodies for TLS
	// and live history): a plan truncated mid-run must fail the run, not kill the worker
	// with SIGBUS. recoverFault turns the fault into that failure.
	debug.SetPanicOnFault(true)
	for d := range r.w.work {
		r.runUnit(d)
		r.w.units.Done()
	}
}

// recoverFault, deferred by runUnit, handles a fault on the plan's mapping: the request in
// progress ends failed, its connection is closed, and the worker fails. Other panics go on.
func (r *runner) recoverFault() {
	v := recover()
	if v == nil {
		return
	}
	err := r.w.plan.FaultError(v)
	if err == nil {
		panic(v)
	}
	r.mu.Lock()
	c := r.active
	r.mu.Unlock()
	if c != nil {
		c.nc.Close()
	}
	if r.sticky != nil {
		r.sticky.nc.Close()
		r.sticky = nil
	}
	if r.inRequest {
		r.finish(nil, exNetError, err, "")
	}
	r.w.fail(err)
}

// runUnit sends a unit's records in order. A later turn goes out at the later of its planned
// instant (when it has one) and the previous turn's end plus its delay.
func (r *runner) runUnit(d dispatch) {
	w := r.w
	u := &w.sh.units[d.unit]
	defer r.recoverFault()
	defer w.release()
	if u.phase == mmapds.PhaseWarmup && u.offset < 0 {
		defer func() {
			if w.warmupLeft.Add(-1) == 0 {
				close(w.warmupDone)
			}
		}()
	}
	r.hist = r.hist[:0]
	ready := d.ready
	firstTurn := uint32(0)
	for idx := u.first; idx >= 0; idx = w.sh.nextOf(idx) {
		rec, body, err := w.plan.Record(int(idx))
		if err != nil {
			w.fail(err)
			break
		}
		if idx == u.first {
			firstTurn = rec.Turn
		} else {
			at := r.q.EndNs + rec.DelayNs
			if rec.SendOffsetNs > at {
				at = rec.SendOffsetNs
			}
			sl, err := r.sleeper()
			if err != nil {
				w.fail(err)
				break
			}
			if !w.sleepUntil(sl, at, 0) {
				break
			}
			ready = at
		}
		if w.stopping.Load() {
			break
		}
		if ready > w.sendUntil.Load() {
			w.durationElapsed()
			break
		}
		if rec.Flags&mmapds.FlagLiveHistory != 0 && r.lv.enabled() {
			r.body = r.lv.splice(r.body[:0], body, r.hist, firstTurn)
			body = r.body
		}
		r.do(&rec, body, ready, int(u.url))
		if r.lv.enabled() && w.sh.nextOf(idx) >= 0 {
			r.hist = append(r.hist, nil)
			h := &r.hist[len(r.hist)-1]
			*h = r.lv.responseText((*h)[:0], r.q.Body)
		}
	}
	if r.sticky != nil {
		r.sticky.nc.Close()
		r.sticky = nil
	}
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
	resetReconnect(q)
	r.resetResponse()
	q.Err = ""
	q.URLIndex = url
	r.inRequest = true
	r.cancelNs = rec.CancelAfterNs
	r.cancelAt = maxInt64
	r.deadline = time.Now().Add(w.timeout)
	t := w.targets[url]
	head := t.heads[rec.PathID]

	w.sent.Add(1)
	marked := false
	for attempt := 0; ; attempt++ {
		c := r.getConn(url)
		if c == nil {
			q.ConnectStartNs = w.nowNs()
			nc, err := dial(w.ctx, &w.dialer, t, url, r.deadline)
			q.ConnectEndNs = w.nowNs()
			if err != nil && !marked && w.aborting.Load() {
				// The abort cut the dial: nothing reached the server.
				r.notSent(url, "not sent: "+*w.abortWhy.Load())
				return
			}
			if err != nil {
				r.finish(nil, exNetError, err, "connect: ")
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
				c.nc.Close()
				r.notSent(url, "not sent: "+err.Error())
				return
			}
		}
		q.ConnReused = c.used
		r.setActive(c)
		res, err := exchange(c, head, body, w.cfg.SessionHeader, rec.Session, &r.eb, q, w.nowFn, r.after)
		if res == exStaleConn && attempt == 0 {
			// The server closed an idle keep-alive connection as we reused it; nothing of
			// the request reached it, so send it again on a new connection.
			markReconnect(q)
			w.conns.serverClosed(c, w.nowNs())
			r.setActive(nil)
			c.nc.Close()
			if r.sticky == c {
				r.sticky = nil
			}
			q.Status, q.WriteStartNs, q.WriteEndNs, q.HeaderNs = 0, -1, -1, -1
			r.resetResponse()
			r.cancelAt = maxInt64
			c = nil
			if !r.prepareRetry() {
				r.finish(nil, exNetError, err, "")
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
func (r *runner) getConn(url int) *conn {
	if r.w.reuse != ReuseNever && r.w.conns.closesAfterResponse(url) {
		r.q.ServerClosed = true
		if r.sticky != nil {
			r.sticky.nc.Close()
			r.sticky = nil
		}
		return nil
	}
	switch r.w.reuse {
	case ReusePooled:
		return r.w.pool.get(url)
	case ReuseSticky:
		return r.sticky
	}
	return nil
}

// setActive registers c as the runner's in-flight connection (so abort can cut it) and
// gives it the request's deadline.
func (r *runner) setActive(c *conn) {
	r.mu.Lock()
	r.active = c
	if c != nil {
		c.nc.SetDeadline(r.deadline)
		if r.w.aborting.Load() {
			c.nc.SetDeadline(aLongTimeAgo)
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
			r.active.nc.SetReadDeadline(at)
		}
		r.mu.Unlock()
	}
}

// finish decides the outcome, disposes of the connection and logs the request.
func (r *runner) finish(c *conn, res exchangeResult, err error, prefix string) {
	w := r.w
	q := &r.q
	q.EndNs = w.nowNs()
	r.inRequest = false
	r.setActive(nil)
	w.settle(q, res, err, prefix, r.cancelAt, &r.eb)
	if c != nil {
		c.reused(q.EndNs)
		switch {
		case res != exOK || !w.conns.keep(c, w.reuse):
			c.nc.Close()
			if r.sticky == c {
				r.sticky = nil
			}
		case w.reuse == ReuseSticky:
			r.sticky = c
		default:
			w.pool.put(c)
		}
	}
	w.logDone(q)
}

// retainBody and retainReads bound the response buffers a runner keeps between requests: one
// huge response must not pin its memory for the rest of the run.
const (
	retainBody  = 1 << 20
	retainReads = 1 << 16
)

// resetResponse empties the response fields of the runner's record (see resetResponse).
func (r *runner) resetResponse() { resetResponse(&r.q) }

// resetResponse empties q's response fields, keeping their buffers unless there are none yet
// or a large response grew them past what is worth keeping.
func resetResponse(q *rawlog.Request) {
	q.ReadNs, q.ReadEnd, q.Body = q.ReadNs[:0], q.ReadEnd[:0], q.Body[:0]
	if cap(q.Body) == 0 || cap(q.Body) > retainBody {
		q.Body = make([]byte, 0, 16<<10)
	}
	if cap(q.ReadNs) == 0 || cap(q.ReadNs) > retainReads || cap(q.ReadEnd) > retainReads {
		q.ReadNs, q.ReadEnd = make([]int64, 0, 256), make([]uint32, 0, 256)
	}
}
