package replay

import (
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

	lv   live     // live history state (only for live-history plans)
	body []byte   // spliced body
	hist [][]byte // the unit's response texts so far, from its first turn on
}

func newRunner(w *worker) (*runner, error) {
	r := &runner{w: w}
	r.eb.rbuf = make([]byte, readBufSize)
	r.q.ReadNs = make([]int64, 0, 256)
	r.q.ReadEnd = make([]uint32, 0, 256)
	r.q.Body = make([]byte, 0, 16<<10)
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
	for d := range r.w.work {
		r.runUnit(d)
		r.w.units.Done()
	}
}

// runUnit sends a unit's records in order. A later turn goes out at the later of its planned
// instant (when it has one) and the previous turn's end plus its delay.
func (r *runner) runUnit(d dispatch) {
	w := r.w
	u := &w.sh.units[d.unit]
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
			w.fatal(err)
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
				w.fatal(err)
				break
			}
			if !w.sleepUntil(sl, at, 0) {
				break
			}
			ready = at
		}
		if w.stopping.Load() || ready > w.sendUntil.Load() {
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
	q.ReadNs, q.ReadEnd, q.Body = q.ReadNs[:0], q.ReadEnd[:0], q.Body[:0]
	q.Err = ""
	q.URLIndex = url
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
				c.nc.Close()
				r.finish(nil, exNetError, err, "log: ")
				return
			}
		}
		q.ConnReused = c.used
		r.setActive(c)
		res, err := exchange(c, head, body, w.cfg.SessionHeader, rec.Session, &r.eb, q, w.nowFn, r.after)
		if res == exStaleConn && attempt == 0 {
			// The server closed an idle keep-alive connection as we reused it; nothing of
			// the request reached it, so send it again on a new connection.
			r.setActive(nil)
			c.nc.Close()
			if r.sticky == c {
				r.sticky = nil
			}
			q.Status, q.WriteStartNs, q.WriteEndNs, q.HeaderNs = 0, -1, -1, -1
			q.ReadNs, q.ReadEnd, q.Body = q.ReadNs[:0], q.ReadEnd[:0], q.Body[:0]
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

// prepareRetry makes the next attempt dial: pooled idle connections are as stale as the one
// that failed.
func (r *runner) prepareRetry() bool {
	w := r.w
	if w.reuse == ReusePooled {
		w.pool.closeAll()
	}
	return !w.aborting.Load()
}

// getConn returns a connection to reuse, or nil to dial.
func (r *runner) getConn(url int) *conn {
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
	r.setActive(nil)
	switch res {
	case exOK:
		q.Outcome = rawlog.OutcomeCompleted
	case exDeadline:
		switch {
		case w.aborting.Load():
			q.Outcome = rawlog.OutcomeAborted
			q.Err = *w.abortWhy.Load()
		case r.cancelAt != maxInt64 && q.EndNs >= r.cancelAt:
			q.Outcome = rawlog.OutcomeCancelled
			q.Err = "cancelled by plan after send"
		default:
			q.Outcome = rawlog.OutcomeFailed
			q.Err = "timeout"
		}
	default:
		if w.aborting.Load() {
			q.Outcome = rawlog.OutcomeAborted
			q.Err = *w.abortWhy.Load()
		} else {
			q.Outcome = rawlog.OutcomeFailed
			q.Err = prefix + errText(err)
		}
	}
	if c != nil {
		c.used = true
		switch {
		case c.broken || w.reuse == ReuseNever || res != exOK:
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
	w.done.Add(1)
	if q.Outcome != rawlog.OutcomeCompleted || q.Status >= 400 {
		w.errs.Add(1)
	}
	w.logRequest(q)
}
