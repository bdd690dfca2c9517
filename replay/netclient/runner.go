package netclient

import (
	"runtime/debug"
	"sync"
	"time"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay/driver"
	"github.com/llmbench/llmbench/replay/http1"
)

// runner sends what the dispatcher releases, one request at a time. Runners are pooled by
// the dispatcher and keep their buffers, so a request allocates nothing once they have grown.
type runner struct {
	w *driver.Worker
	d *Client

	mu     sync.Mutex // guards active against abort
	active *http1.NetConn

	eb http1.Buffers
	q  rawlog.Request

	// Per request, read by afterWrite.
	deadline time.Time // request timeout
	cancelNs int64     // CancelAfterNs of the current record
	cancelAt int64     // run-clock instant the cancel-after fires, or driver.MaxInt64
	after    func(int64)

	unit *netUnit // the unit of the request being sent
	node int32    // its node, for onBody
	// ft finds the first token of the request being sent under a prefill cap; onBodyFn is
	// r.onBody, bound once (the exchange's hook).
	ft       driver.FirstToken
	onBodyFn func([]byte) bool

	now func() int64 // w.Now, bound once

	inRequest bool // between do's start and the request's record: fault logs it

	lv   driver.Live // live history state (only for live-history plans)
	body []byte      // spliced body
}

func newRunner(d *Client) *runner {
	w := d.w
	r := &runner{w: w, d: d, lv: w.Live.Fresh(), now: w.Now}
	r.eb.Init(w.MaxResponseBytes)
	r.eb.Trace = w.Trace
	r.resetResponse()
	r.after = r.afterWrite
	r.onBodyFn = r.onBody
	d.runnersMu.Lock()
	d.runners = append(d.runners, r)
	d.runnersMu.Unlock()
	return r
}

// onBody looks for the first token of the request being sent in its body so far; once it
// came, the dispatcher is told (its prefill slot frees) and onBody is done.
func (r *runner) onBody(body []byte) bool {
	if !r.ft.Feed(body) {
		return false
	}
	r.d.prefilled(r.node)
	return true
}

func (r *runner) loop() {
	// Runners are the goroutines that read the plan's mapping (records, and bodies for TLS
	// and live history): a plan truncated mid-run must fail the run, not kill the worker
	// with SIGBUS. fault turns the fault into that failure.
	debug.SetPanicOnFault(true)
	d := r.d
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
			end, ok = w.Now(), false
		}
	}()
	rel, nu := wk.rel, wk.unit
	rec, body, err := w.Plan.Record(int(rel.Index))
	if err != nil {
		w.Log.Fail(err)
		return w.Now(), false
	}
	if w.Stop.Stopping() {
		return w.Now(), false
	}
	r.unit = nu
	if rel.Entry {
		nu.hist.Reset(rec.Turn)
	}
	if rec.Flags&mmapds.FlagLiveHistory != 0 && r.lv.Enabled() {
		nu.mu.Lock()
		r.body = nu.hist.Splice(&r.lv, r.body[:0], body, rec.Index)
		nu.mu.Unlock()
		body = r.body
	}
	r.node = rel.Node
	if rel.Prefill {
		r.ft.Reset(w.FirstToken)
		r.eb.OnBody = r.onBodyFn
	}
	r.do(&rec, body, rel.Ready, w.URLOfUnit(rel.Unit))
	r.eb.OnBody = nil
	if r.lv.Enabled() && len(w.Graph.Children(rel.Node)) > 0 {
		nu.mu.Lock()
		nu.hist.Add(&r.lv, rec.Index, r.q.Body)
		nu.mu.Unlock()
	}
	end = r.q.EndNs
	if end < 0 {
		end = w.Now()
	}
	return end, driver.CountedOutcome(&r.q) == rawlog.OutcomeCompleted
}

// fault handles a fault on the plan's mapping (v, recovered by send): the request in
// progress ends failed, its connection is closed, and the worker fails. Other panics go on.
func (r *runner) fault(v any) {
	err := r.w.Plan.FaultError(v)
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
	r.w.Log.Fail(err)
}

// do sends one request and logs its outcome.
func (r *runner) do(rec *mmapds.Record, body []byte, ready int64, url int) {
	w := r.w
	q := &r.q
	driver.BeginRecord(q, rec, ready, url)
	r.inRequest = true
	r.cancelNs = rec.CancelAfterNs
	r.cancelAt = driver.MaxInt64
	r.deadline = time.Now().Add(w.Timeout)
	t := w.Targets[url]
	head := t.Heads[rec.PathID]

	w.Sent.Add(1)
	marked := false
	for attempt := 0; ; attempt++ {
		c := r.getConn(url)
		if c == nil {
			q.ConnectStartNs = w.Now()
			nc, err := http1.Dial(r.d.ctx, &w.Dialer, t, url, r.deadline)
			q.ConnectEndNs = w.Now()
			if err != nil && !marked && w.Stop.Aborting() {
				// The abort cut the dial: nothing reached the server.
				r.notSent(url, "not sent: "+w.Stop.AbortWhy())
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
			if err := w.Log.Sent(q.Index); err != nil {
				// Without its Sent record the request must not reach the server: a crash
				// would count it never sent. It is not sent, and the run fails.
				c.NC.Close()
				r.notSent(url, "not sent: "+err.Error())
				return
			}
		}
		q.ConnReused = c.Used
		r.setActive(c)
		res, err := http1.Exchange(c, head, body, w.SessionHeader, rec.Session, &r.eb, q, r.now, r.after)
		if res == http1.StaleConn && attempt == 0 {
			// The server closed an idle keep-alive connection as we reused it; nothing of
			// the request reached it, so send it again on a new connection.
			http1.Retry(q)
			w.Conns.ServerClosed(&c.Conn, w.Now())
			r.setActive(nil)
			c.NC.Close()
			r.cancelAt = driver.MaxInt64
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
	r.inRequest = false
	r.w.NotSent(&r.q, url, why)
}

// prepareRetry makes the next attempt dial: pooled idle connections are as stale as the one
// that failed.
func (r *runner) prepareRetry() bool {
	w := r.w
	if w.Reuse == http1.ReusePooled {
		r.d.pool.closeAll()
	}
	return !w.Stop.Aborting()
}

// getConn returns a connection to reuse, or nil to dial: always nil for a URL whose server
// closes after each response (http1.ConnPolicy), and the request says why.
func (r *runner) getConn(url int) *http1.NetConn {
	if r.w.Reuse != http1.ReuseNever && r.w.Conns.ClosesAfterResponse(url) {
		r.q.ServerClosed = true
		r.d.pool.drop(url) // dead, or about to be
		if r.w.Reuse == http1.ReuseSticky {
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
	switch r.w.Reuse {
	case http1.ReusePooled:
		return r.d.pool.get(url)
	case http1.ReuseSticky:
		// The unit's connection is the request's until it ends (finish gives it back).
		r.unit.mu.Lock()
		c := r.unit.sticky
		r.unit.sticky = nil
		r.unit.mu.Unlock()
		if c != nil && c.Unsolicited() {
			c.NC.Close() // see pool.get
			r.w.Conns.ServerClosed(&c.Conn, r.w.Now())
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
		if r.w.Stop.Aborting() {
			c.NC.SetDeadline(http1.LongAgo)
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
	at := r.w.Start.Add(time.Duration(r.cancelAt))
	if at.Before(r.deadline) {
		r.mu.Lock()
		if r.active != nil && !r.w.Stop.Aborting() {
			r.active.NC.SetReadDeadline(at)
		}
		r.mu.Unlock()
	}
}

// finish decides the outcome, disposes of the connection and logs the request.
func (r *runner) finish(c *http1.NetConn, res http1.Result, err error, prefix string) {
	w := r.w
	q := &r.q
	q.EndNs = w.Now()
	r.inRequest = false
	r.setActive(nil)
	w.Settle(q, res, err, prefix, r.cancelAt, &r.eb)
	if c != nil {
		c.Reused(q.EndNs)
		switch {
		case res != http1.OK || !w.Conns.Keep(&c.Conn, w.Reuse):
			c.NC.Close()
		case w.Reuse == http1.ReuseSticky:
			r.unit.mu.Lock()
			if r.unit.sticky == nil {
				r.unit.sticky, c = c, nil
			}
			r.unit.mu.Unlock()
			if c != nil {
				c.NC.Close() // another request of the unit gave its connection back first
			}
		default:
			r.d.pool.put(c)
		}
	}
	w.Log.Done(q)
}

// resetResponse empties the response fields of the runner's record (http1.ResetResponse).
func (r *runner) resetResponse() { http1.ResetResponse(&r.q) }
