package netclient

import (
	"context"
	"math"
	"sync"
	"sync/atomic"

	"github.com/llmbench/llmbench/replay/driver"
	"github.com/llmbench/llmbench/replay/http1"
	"github.com/llmbench/llmbench/replay/schedule"
)

// netUnit is what the net client keeps of a unit while it runs: its sticky connection and
// the responses live history splices into its later turns.
type netUnit struct {
	mu     sync.Mutex // a graph's branches may run in several runners at once
	sticky *http1.NetConn
	hist   driver.History
}

// netWork is a release handed to a runner, with its unit's state.
type netWork struct {
	rel  schedule.Release
	unit *netUnit
}

// Client is a worker's net client: its dispatcher, its runners and its idle connections.
type Client struct {
	w *driver.Worker
	// mu guards the scheduler and everything below up to work.
	mu     sync.Mutex
	s      *schedule.Scheduler
	units  *driver.Units[netUnit]
	armed  int64 // what the dispatcher's timer waits for; math.MinInt64 once poked
	dropFn func(u int32)

	sl *driver.Sleeper
	// poke, then a kick of sl, wakes the dispatcher before armed (its sleeper's stop flag).
	poke    atomic.Bool
	work    chan netWork
	running sync.WaitGroup // releases handed out and not yet handed back

	pool pool // idle keep-alive connections
	// ctx is cancelled on abort: it cuts dials.
	ctx    context.Context
	cancel context.CancelFunc
	// runners are every runner made, for the abort to cut their connections.
	runnersMu sync.Mutex
	runners   []*runner
}

// New makes the net client of worker w.
func New(w *driver.Worker) (*Client, error) {
	d := &Client{w: w, s: w.Sched, units: driver.NewUnits[netUnit](w.Graph.Units()), armed: math.MinInt64, work: make(chan netWork)}
	d.dropFn = d.dropAndClose
	sl, err := driver.NewSleeper(&d.poke)
	if err != nil {
		return nil, err
	}
	d.sl = sl
	d.pool.idle = make([][]*http1.NetConn, len(w.Targets))
	d.pool.closed = func(c *http1.NetConn) { w.Conns.ServerClosed(&c.Conn, w.Now()) }
	d.ctx, d.cancel = context.WithCancel(context.Background())
	return d, nil
}

// Run drives the scheduler until nothing runs and nothing more will, then ends the runners.
func (d *Client) Run() {
	d.run()
	d.running.Wait()
	close(d.work)
}

// Wake makes the dispatcher look at the run's Stop now.
func (d *Client) Wake() { d.wake() }

// Abort cuts every request in flight: dials are cancelled, connections get a deadline in
// the past.
func (d *Client) Abort() {
	d.cancel()
	d.runnersMu.Lock()
	rs := append([]*runner(nil), d.runners...)
	d.runnersMu.Unlock()
	for _, r := range rs {
		r.mu.Lock()
		if r.active != nil {
			r.active.NC.SetDeadline(http1.LongAgo)
		}
		r.mu.Unlock()
	}
	d.wake()
}

// Close closes the idle connections and the dispatcher's timer.
func (d *Client) Close() {
	d.pool.closeAll()
	d.sl.Close()
	d.cancel()
}

// wake makes the dispatcher look at the scheduler now (stop and abort call it).
func (d *Client) wake() {
	d.poke.Store(true)
	d.sl.Kick()
}

// run sleeps until the scheduler's next instant, hands out what is due then, and returns once
// nothing runs and nothing more will.
func (d *Client) run() {
	w := d.w
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
		w.SleepUntil(d.sl, at, open)
	}
}

// schedEvents is what a pass over the scheduler asks of the worker, done after the lock.
type schedEvents struct {
	duration, abort bool
	drop            *http1.NetConn // a sticky connection whose unit is over
}

func (ev schedEvents) act(w *driver.Worker) {
	if ev.drop != nil {
		ev.drop.NC.Close()
	}
	if ev.duration {
		w.Log.DurationElapsed()
	}
	if ev.abort {
		w.Log.DurationAbort()
	}
}

// pump hands out what the scheduler has due. With keep, the first release is the caller's:
// a runner that just ended a request goes on with it. Under d.mu.
func (d *Client) pump(keep bool) (kept netWork, have bool, ev schedEvents) {
	w := d.w
	for !d.stopped() {
		rel, ok := d.s.Due(w.Now())
		if !ok {
			break
		}
		wk := netWork{rel: rel, unit: d.units.Of(rel)}
		d.running.Add(1)
		if keep && !have {
			kept, have = wk, true
			continue
		}
		d.hand(wk)
	}
	d.stopped()
	ev.duration = d.s.Stopped() == schedule.DurationElapsed
	ev.abort = d.s.AbortDue(w.Now())
	return kept, have, ev
}

// stopped is the stop protocol (driver.Units.Stopped): it says whether the scheduler
// releases nothing more.
func (d *Client) stopped() bool {
	return d.units.Stopped(d.s, d.w.Stop.Stopping(), d.dropFn)
}

// dropAndClose forgets unit u's state and closes its sticky connection.
func (d *Client) dropAndClose(u int32) {
	if c := d.dropUnit(u); c != nil {
		c.NC.Close()
	}
}

// dropUnit forgets unit u's state and returns its sticky connection, for the caller to close.
func (d *Client) dropUnit(u int32) *http1.NetConn {
	nu := d.units.Drop(u)
	c := nu.sticky
	nu.sticky = nil
	return c
}

// hand gives wk to an idle runner, starting a new one when none is idle.
func (d *Client) hand(wk netWork) {
	select {
	case d.work <- wk:
		return
	default:
	}
	go newRunner(d).loop()
	d.work <- wk
}

// ended hands in the end of wk's request at endNs (ok: it completed) and returns what the
// runner sends next, if anything.
func (d *Client) ended(wk netWork, endNs int64, ok bool) (netWork, bool) {
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
func (d *Client) prefilled(node int32) {
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
