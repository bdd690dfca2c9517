package mockllm

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// The clock wakes streams at absolute instants. Go's own timers are
// serviced by the network poller, whose epoll wait has millisecond
// resolution: measured on this machine, a timer fires 0.5 ms late in
// the median and 1.1 ms late at p90 when the process is otherwise idle.
// That is the very error a benchmark client must not make, so the
// server keeps its own time: one goroutine sleeps on a futex with a
// nanosecond timeout (on a thread whose timer slack it sets to 1 ns)
// until the earliest registered instant and wakes every stream due.
// Streams register one instant at a time, so the heap holds at most one
// entry per live stream.
//
// The goroutine is not locked to its thread: a locked goroutine hands
// its P to another thread at every yield, which cost more CPU and gave
// worse tails at 1,000 streams than setting the slack of whichever
// thread is about to sleep (one cheap prctl per sleep).

// monoBase anchors the package's monotonic nanosecond clock.
var monoBase = time.Now()

// monoNow returns monotonic nanoseconds since monoBase.
func monoNow() int64 { return int64(time.Since(monoBase)) }

type clockEntry struct {
	at int64
	ch chan struct{}
}

// clock is a min-heap of wake instants served by one goroutine.
type clock struct {
	mu    sync.Mutex
	heap  []clockEntry
	armed int64 // the instant the clock goroutine sleeps until (1<<62: none)
	seq   uint32
	wait  waiter
}

// waiter is the precise sleep primitive: sleep until seq changes or d
// elapses, and wake a sleeper. The futex implementation is Linux only;
// elsewhere a Go timer stands in (correct, but millisecond-coarse).
type waiter interface {
	sleep(seq *uint32, old uint32, d time.Duration)
	wake(seq *uint32)
	prepare() // called on the sleeping thread before each sleep
}

const clockNone = int64(1) << 62

var (
	sharedClockOnce sync.Once
	sharedClock     *clock
)

// theClock returns the process-wide clock, starting it on first use.
// One clock serves every Server in the process: it is a scarce resource
// (one OS thread) and sharing it keeps tests that start many servers cheap.
func theClock() *clock {
	sharedClockOnce.Do(func() {
		keepSpareP()
		sharedClock = &clock{armed: clockNone, wait: newWaiter()}
		go sharedClock.run()
	})
	return sharedClock
}

// keepSpareP makes sure the process has a P besides the one the clock's
// thread holds while it sleeps in its system call. With a single P (a
// process pinned to one CPU: the mockllm binary under taskset, or the
// replay coordinator that serves an in-process mock once it moved itself
// off the workers' CPUs), every other goroutine would wait for the
// runtime's monitor to take that P back, which it does after up to 10 ms
// when it has backed off: the server would read requests and write events
// that late. Measured on the 2-core VM, 16 streams of 128 tokens at 5 ms
// ITL served on one CPU: the time from the client's write to the server
// reading the request went from p50 0.72 ms / p99 19.7 ms with 1 P to
// 0.34 ms / 3.4 ms with 2 (docs/mockllm.md). Setting it also stops the
// runtime from lowering it again when the process narrows its CPU affinity.
func keepSpareP() {
	runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0)))
}

// at registers ch to receive one value at monotonic instant t (or
// immediately after, if t has passed). ch must have a buffer of 1.
func (c *clock) at(t int64, ch chan struct{}) {
	c.mu.Lock()
	c.push(clockEntry{t, ch})
	kick := t < c.armed
	if kick {
		c.armed = t // later registrations need not kick again
	}
	c.mu.Unlock()
	if kick {
		atomic.AddUint32(&c.seq, 1)
		c.wait.wake(&c.seq)
	}
}

func (c *clock) run() {
	for {
		seq := atomic.LoadUint32(&c.seq)
		now := monoNow()
		fired := 0
		c.mu.Lock()
		for len(c.heap) > 0 && c.heap[0].at <= now {
			e := c.pop()
			select {
			case e.ch <- struct{}{}:
			default: // a stale registration of a stream that has gone
			}
			fired++
		}
		next := clockNone
		if len(c.heap) > 0 {
			next = c.heap[0].at
		}
		c.armed = next
		c.mu.Unlock()
		if fired > 0 {
			// Let the woken streams run on this P before sleeping again:
			// a goroutine asleep in a syscall keeps its P for a while, and
			// the streams queued on it would wait for the runtime to
			// hand them elsewhere.
			runtime.Gosched()
			continue
		}
		d := time.Duration(next - now)
		if d > time.Second {
			d = time.Second
		}
		c.wait.prepare()
		c.wait.sleep(&c.seq, seq, d)
	}
}

func (c *clock) push(e clockEntry) {
	h := append(c.heap, e)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if h[p].at <= h[i].at {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
	c.heap = h
}

func (c *clock) pop() clockEntry {
	h := c.heap
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h[n] = clockEntry{}
	h = h[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h[r].at < h[l].at {
			m = r
		}
		if h[i].at <= h[m].at {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	c.heap = h
	return top
}

// sleepUntil blocks until monotonic instant t or until done is closed,
// and reports whether t was reached. ch is the caller's own wake channel
// (buffer 1), reused across calls to avoid an allocation per wait.
func (c *clock) sleepUntil(t int64, ch chan struct{}, done <-chan struct{}) bool {
	for {
		if t <= monoNow() {
			return true
		}
		// Drop a stale wake left by an earlier wait that ended through done.
		select {
		case <-ch:
		default:
		}
		c.at(t, ch)
		select {
		case <-ch:
			// A stale registration can fire early: check, and wait again.
		case <-done:
			return false
		}
	}
}

// waitMode selects how streams wait for their instants.
type waitMode uint8

const (
	waitClock   waitMode = iota // the precise clock (always, outside benchmarks)
	waitGoTimer                 // Go timers: the naive baseline benchmarks compare against
)

// Measured on this 2-core VM with 1,000 streams at 100 ms ITL
// (BenchmarkEmitLag1000Streams), the clock gave an emit lag of 57-66 µs
// median and 0.46-3.0 ms p99 where Go timers gave 510-522 µs and
// 1.4-3.7 ms (the tails follow whatever else shares the two cores).
// Arming both and taking the first (Go timers are precise while the
// process is busy) cut the median further but raised p99: twice the
// registrations cost more than they saved.

// streamWaiter is one stream's reusable wait state: no allocation per
// event.
type streamWaiter struct {
	ch chan struct{}
	tm *time.Timer // waitGoTimer only
}

func (s *Server) newWaiter() *streamWaiter {
	w := &streamWaiter{ch: make(chan struct{}, 1)}
	if s.wait == waitGoTimer {
		w.tm = time.NewTimer(time.Hour)
		w.tm.Stop()
	}
	return w
}

func (w *streamWaiter) stop() {
	if w.tm != nil {
		w.tm.Stop()
	}
}

// sleepUntil waits until monotonic instant t or until done is closed,
// and reports whether t was reached. w may be nil for a one-off wait.
func (s *Server) sleepUntil(t int64, w *streamWaiter, done <-chan struct{}) bool {
	if t <= monoNow() {
		return true
	}
	if w == nil {
		w = s.newWaiter()
		defer w.stop()
	}
	if s.wait == waitClock {
		return s.clock.sleepUntil(t, w.ch, done)
	}
	w.tm.Reset(time.Duration(t - monoNow()))
	select {
	case <-w.tm.C:
		return true
	case <-done:
		w.tm.Stop()
		return false
	}
}
