package rendezvous

import (
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// follow is the side of every shard but 0: reach shard 0, say ready, answer its pings, and
// take the start instant (or the reason there is none).
func (c *Config) follow(stop <-chan struct{}) (Result, error) {
	began := time.Now()
	timeout, stopTimer := waitTimer(c.Timeout)
	defer stopTimer()
	nc, err := c.dial(timeout, stop)
	if err != nil {
		return Result{}, err
	}
	cn := newConn(nc)
	defer closeQuietly(nc)
	if err := cn.send(Message{Type: TypeReady, Index: c.Index, Count: c.Count, PlanHash: c.PlanHash, RunID: c.RunID,
		Host: c.Host, Clock: c.Clock, WallNs: c.now().UnixNano()}); err != nil {
		return Result{}, c.errf("shard 0 closed the connection before the start (%v); nothing was sent", err)
	}
	c.notice("rendezvous: shard %d of %d ready, connected to shard 0 at %s", c.Index, c.Count, c.Addr)

	// The reader answers pings itself, at once: the round trip measured is the network's,
	// not this loop's. Messages and the error that ends the connection come in order on
	// one channel, so a start sent just before shard 0 closes is never lost.
	type item struct {
		m   Message
		err error
	}
	items := make(chan item, 4)
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			m, err := readMessage(cn.r)
			if err == nil && m.Type == TypePing {
				err = cn.send(Message{Type: TypePong, Seq: m.Seq, WallNs: c.now().UnixNano()})
				if err == nil {
					continue
				}
			}
			select {
			case items <- item{m, err}:
			case <-done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	var missing []int
	missingN := 0
	var graceC <-chan time.Time
	for {
		select {
		case it := <-items:
			if err := it.err; err != nil {
				if errors.Is(err, io.EOF) {
					return Result{}, c.errf("shard 0 closed the connection before the start; no shard starts, nothing was sent")
				}
				return Result{}, c.errf("lost shard 0 before the start (%v); nothing was sent", err)
			}
			m := it.m
			switch m.Type {
			case TypeWaiting:
				missing, missingN = m.Missing, m.MissingCount
			case TypeAbort:
				return Result{}, c.errf("shard 0 gave up: %s", m.Reason)
			case TypeStart:
				start := time.Unix(0, m.StartUnixNs)
				if late := c.now().Sub(start); late > c.Gap {
					return Result{}, c.errf("the start instant %s reached shard %d %v late, more than the plan's first gap (%v): this shard would send late; nothing was sent",
						start.UTC().Format(time.RFC3339Nano), c.Index, late.Round(time.Microsecond), c.Gap)
				}
				return Result{Start: start, MaxRTT: time.Duration(m.MaxRTTNs), Lead: time.Duration(m.LeadNs),
					ClockOffset: time.Duration(m.OffsetNs), ClockOffsetError: time.Duration(m.OffsetErrNs), Waited: time.Since(began)}, nil
			default:
				return Result{}, c.errf("shard 0 sent %q, not part of the protocol at this point; nothing was sent", m.Type)
			}
		case <-timeout:
			if graceC == nil {
				// Shard 0, which knows who is missing now, usually times out at the same
				// moment: give its verdict a moment to arrive.
				g := time.NewTimer(verdictGrace)
				defer g.Stop()
				graceC, timeout = g.C, nil
				continue
			}
		case <-graceC:
			why := fmt.Sprintf("no start instant from shard 0 within %v", c.Timeout)
			if len(missing) > 0 {
				why = fmt.Sprintf("%s of %d did not arrive within %v", shardWord(missing, missingN), c.Count, c.Timeout)
			}
			// Shard 0 hears why this shard leaves, and tells the others.
			cn.send(Message{Type: TypeAbort, Reason: fmt.Sprintf("shard %d: %s", c.Index, why)})
			return Result{}, c.errf("%s; nothing was sent", why)
		case <-stop:
			cn.send(Message{Type: TypeAbort, Reason: fmt.Sprintf("shard %d was interrupted before the start", c.Index)})
			return Result{}, ErrStopped
		}
	}
}

// verdictGrace is how long a shard connected to shard 0 waits past its own timeout for
// shard 0's word on who is missing.
const verdictGrace = 2 * waitingEvery

// dial connects to shard 0, trying again until the timeout: shard 0 may start later than
// this shard, or its name may not resolve yet.
func (c *Config) dial(timeout <-chan time.Time, stop <-chan struct{}) (net.Conn, error) {
	var last error
	for {
		nc, err := net.DialTimeout("tcp", c.Addr, dialTimeout)
		if err == nil {
			return nc, nil
		}
		if last == nil {
			c.notice("rendezvous: shard %d of %d ready; waiting for shard 0 at %s (%v)", c.Index, c.Count, c.Addr, err)
		}
		last = err
		t := time.NewTimer(c.RetryEvery)
		select {
		case <-t.C:
		case <-timeout:
			t.Stop()
			return nil, c.errf("shard 0 of %d did not arrive within %v (nothing answered there: %v); nothing was sent", c.Count, c.Timeout, last)
		case <-stop:
			t.Stop()
			return nil, ErrStopped
		}
	}
}
