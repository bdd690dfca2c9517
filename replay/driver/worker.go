package driver

import (
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/internal/tracectx"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay/http1"
	"github.com/llmbench/llmbench/replay/schedule"
)

// Transport is one worker HTTP client (--client): it drives the worker's scheduler, sends
// what it releases and logs every request it starts through the worker's Log. The worker
// runs one and knows nothing else of it.
type Transport interface {
	// Run sends until every request it started has ended and the scheduler releases
	// nothing more (all sent, stopped, or aborted).
	Run()
	// Wake makes the transport look at the run's Stop now (the worker stopped or aborted).
	Wake()
	// Abort cuts every request in flight now (the Stop says aborting).
	Abort()
	// Close releases what the transport holds, once Run returned.
	Close()
}

// Log is what a transport asks of the worker's raw log. Every planned request a transport
// starts ends in exactly one Done or Request call.
type Log interface {
	// Sent writes a Sent record for plan index idx and returns once it is in the kernel;
	// a request whose Sent record failed must not be sent.
	Sent(idx uint32) error
	// SentQueued writes a Sent record for plan index idx without waiting for it to reach the
	// kernel; FlushSent returns once every record queued before the call is there. A
	// transport that starts several requests in one pass queues their records, flushes once
	// and then writes the requests: one system call for the pass's records instead of one
	// each. A request is written only after a FlushSent that returned nil since its record
	// was queued.
	SentQueued(idx uint32) error
	FlushSent() error
	// Request writes q (a request never sent) and counts it.
	Request(q *rawlog.Request)
	// Done counts q, a request that was sent, as done and writes it.
	Done(q *rawlog.Request)
	// Fail ends the run on an unrecoverable error (the log, the plan file).
	Fail(err error)
	// DurationElapsed stops sending at the end of a duration-sized plan;
	// DurationAbort cuts what runs a grace period later.
	DurationElapsed()
	DurationAbort()
	// Flush wakes the log writer once for what a pass logged.
	Flush()
}

// Worker is what a transport gets of the worker it sends for: its part of the plan, the
// scheduler that decides what may be sent when, its settings, its clock, its Stop and its
// Log. The worker fills it in before the transport is made, and Start before Run.
type Worker struct {
	ID       int
	PlanPath string
	Plan     *mmapds.Plan
	Graph    *schedule.Graph
	Sched    *schedule.Scheduler
	Targets  []*http1.Target
	Conns    *http1.ConnPolicy // what each URL's server does with connections
	Reuse    string            // http1.ReusePooled, ReuseNever or ReuseSticky
	Timeout  time.Duration     // of one request
	// SpinNs makes open-loop sends wake this long before their instant and spin the rest.
	SpinNs int64
	// SpareConns is how many pooled connections per URL the event loop keeps opened ahead
	// of the requests that will need them (DefaultSpareConns; 0: none).
	SpareConns       int
	MaxResponseBytes int64
	SessionHeader    string
	// Trace is the run's trace key (internal/tracectx), set with Start: when it is not zero,
	// every request carries a traceparent naming its plan index's trace.
	Trace tracectx.Key
	// Dialer opens the net client's connections (source addresses spread over); the event
	// loop binds Source's addresses itself.
	Dialer net.Dialer
	Source *LocalAddrPicker
	// FirstToken is the endpoint whose first token frees a prefill slot (nil: no prefill cap).
	FirstToken *endpoint.Endpoint
	Live       Live
	Stop       Stop
	Log        Log
	// Start is the run's start instant: every timestamp is the monotonic time since.
	Start time.Time
	// Sent counts the requests sent (progress).
	Sent atomic.Int64
}

// Now is nanoseconds since the start instant, on the monotonic clock.
func (w *Worker) Now() int64 { return int64(time.Since(w.Start)) }

// URLOfUnit is the URL unit u's session talks to.
func (w *Worker) URLOfUnit(u int32) int { return URLOf(w.Graph.Unit(u).Session, len(w.Targets)) }

// URLOf is the URL (of urls) the session with ordinal k within the shard talks to.
func URLOf(k uint32, urls int) int { return int(k % uint32(urls)) }

// DefaultSpareConns is how many connections per URL the event loop keeps opened ahead under
// pooled reuse. Without them every request that finds no idle connection (the ramp of an
// open loop: a new connection every 1/rate until the in-flight count settles; a Poisson burst)
// waits on its own connect, socket to handshake, before its bytes go out: a round trip to
// the server (tens of µs on loopback, where it measured no different; a network's round trip
// to a server on another machine) for each of the ramp's new connections. With a few opened ahead, such a
// request takes a connection already made (or in its handshake) and the loop opens the next
// after the pass's sends, off their path. A Poisson burst of more than this many sends in
// the time of a handshake still connects on the path; the extra sockets cost the server a few
// idle connections (closed, and replaced, by its idle timeout).
const DefaultSpareConns = 8

// MaxInt64 is a cancel-after instant that never comes (none was armed).
const MaxInt64 = int64(^uint64(0) >> 1)

// Settle sets q's outcome and Err from how its exchange ended (res, err; prefix names the
// step that failed), whichever transport ran it: an abort, the plan's cancel-after
// (cancelAt, MaxInt64 when none was armed) and the request timeout tell a deadline apart.
// q.EndNs is set.
func (w *Worker) Settle(q *rawlog.Request, res http1.Result, err error, prefix string, cancelAt int64, eb *http1.Buffers) {
	if errors.Is(err, syscall.EFAULT) {
		// writev from the plan's mapping faulted in the kernel: the plan file was truncated.
		w.Log.Fail(fmt.Errorf("plan %s: %w: writing request %d's body from it failed: %v", w.PlanPath, mmapds.ErrChanged, q.Index, err))
	}
	switch res {
	case http1.OK:
		q.Outcome = rawlog.OutcomeCompleted
	case http1.Deadline:
		switch {
		case w.Stop.Aborting():
			q.Outcome = rawlog.OutcomeAborted
			q.Err = w.Stop.AbortWhy()
		case cancelAt != MaxInt64 && q.EndNs >= cancelAt:
			q.Outcome = rawlog.OutcomeCancelled
			q.Err = "cancelled by plan after send"
		default:
			q.Outcome = rawlog.OutcomeFailed
			q.Err = "timeout"
		}
	default:
		if w.Stop.Aborting() {
			q.Outcome = rawlog.OutcomeAborted
			q.Err = w.Stop.AbortWhy()
		} else {
			q.Outcome = rawlog.OutcomeFailed
			q.Err = http1.FailText(res, err, prefix, len(q.Body), eb)
		}
	}
}

// CountedOutcome is the outcome under which run.json's counts tally q: a response read to
// its end with a status other than 2xx counts as failed, as analyze counts it.
func CountedOutcome(q *rawlog.Request) rawlog.Outcome {
	if q.Outcome == rawlog.OutcomeCompleted && (q.Status < 200 || q.Status > 299) {
		return rawlog.OutcomeFailed
	}
	return q.Outcome
}

// NotSentRecord is the record of a request that was never sent: every time -1 but the
// planned instant (offset, -1 for none).
func NotSentRecord(idx uint32, offset int64, url int, why string) rawlog.Request {
	return rawlog.Request{Index: idx, Outcome: rawlog.OutcomeNotSent, IntendedNs: max(offset, -1),
		ReadyNs: -1, WriteStartNs: -1, WriteEndNs: -1, HeaderNs: -1, EndNs: -1, Err: why,
		URLIndex: url, ConnectStartNs: -1, ConnectEndNs: -1}
}

// BeginRecord resets q, the record a transport reuses, for plan record rec released at ready
// to URL url: every time -1 until it happens, the response buffers kept.
func BeginRecord(q *rawlog.Request, rec *mmapds.Record, ready int64, url int) {
	q.Index = rec.Index
	q.Outcome, q.Status, q.ConnReused = 0, 0, false
	q.IntendedNs = max(rec.SendOffsetNs, -1)
	q.ReadyNs = ready
	q.WriteStartNs, q.WriteEndNs, q.HeaderNs, q.EndNs = -1, -1, -1, -1
	q.ConnectStartNs, q.ConnectEndNs = -1, -1
	http1.ResetReconnect(q)
	http1.ResetResponse(q)
	q.Err = ""
	q.URLIndex = url
}

// NotSent logs q, the request in progress, as never sent with why instead of its exchange,
// keeping q's buffers.
func (w *Worker) NotSent(q *rawlog.Request, url int, why string) {
	w.Sent.Add(-1)
	rn, re, rb := q.ReadNs[:0], q.ReadEnd[:0], q.Body[:0]
	*q = NotSentRecord(q.Index, q.IntendedNs, url, why)
	q.ReadNs, q.ReadEnd, q.Body = rn, re, rb
	w.Log.Request(q)
}
