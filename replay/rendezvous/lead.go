package rendezvous

import (
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmbench/llmbench/rawlog"
)

// peer is a shard that said it is ready, as shard 0 sees it.
type peer struct {
	*conn
	hello  Message
	remote string
	pongs  chan Message
}

// name is how messages call the peer: "shard 2 (node-c, 10.0.0.7:4411)".
func (p *peer) name() string {
	if p.hello.Host != "" {
		return fmt.Sprintf("shard %d (%s, %s)", p.hello.Index, p.hello.Host, p.remote)
	}
	return fmt.Sprintf("shard %d (%s)", p.hello.Index, p.remote)
}

// event is what the connection goroutines tell shard 0's loop.
type event struct {
	p   *peer // the peer (arrived, left) or the connection that was not one (garbage)
	err error // left or garbage: why
	// kind: arrived, left, garbage
	kind int
}

const (
	evArrived = iota
	evLeft
	evGarbage
)

// leader is shard 0's side of one rendezvous.
type leader struct {
	c      *Config
	ln     net.Listener
	events chan event
	done   chan struct{}
	wg     sync.WaitGroup
	peers  map[int]*peer

	mu    sync.Mutex
	conns map[net.Conn]bool // every accepted connection still open, closed with the leader

	dirty bool // an arrival since the last waiting message to all
}

// waitingEvery is how often shard 0 tells every shard who is still missing.
const waitingEvery = time.Second

func (c *Config) lead(stop <-chan struct{}) (Result, error) {
	began := time.Now()
	if c.Count == 1 {
		start := c.now().Add(c.Lead)
		return Result{Start: start, Lead: c.Lead}, nil
	}
	listen := c.Listen
	if listen == nil {
		listen = func(a string) (net.Listener, error) { return net.Listen("tcp", a) }
	}
	ln, err := listen(listenAddr(c.Addr))
	if err != nil {
		return Result{}, c.errf("shard 0 cannot listen: %v", err)
	}
	l := &leader{c: c, ln: ln, events: make(chan event, 16), done: make(chan struct{}), peers: map[int]*peer{}, conns: map[net.Conn]bool{}}
	defer l.close()
	l.wg.Add(1)
	go l.accept()
	c.notice("rendezvous: shard 0 of %d listening on %s; waiting for %s", c.Count, ln.Addr(), l.missingWords())

	timeout, stopTimer := waitTimer(c.Timeout)
	defer stopTimer()
	// Who is missing goes to each shard as it arrives, and to all at most every
	// waitingEvery: O(N) messages, not O(N²), for N shards arriving one by one.
	tick := time.NewTicker(waitingEvery)
	defer tick.Stop()
	for len(l.peers) < c.Count-1 {
		select {
		case <-tick.C:
			if l.dirty {
				l.dirty = false
				w := l.waiting()
				for _, q := range l.peers {
					q.send(w)
				}
			}
		case ev := <-l.events:
			if err := l.handle(ev); err != nil {
				l.abort(err.Error())
				return Result{}, c.errf("%s", err)
			}
		case <-timeout:
			why := fmt.Sprintf("%s of %d did not arrive within %v; nothing was sent", l.missingWords(), c.Count, c.Timeout)
			l.abort(why)
			return Result{}, c.errf("%s", why)
		case <-stop:
			l.abort("shard 0 was interrupted before the start")
			return Result{}, ErrStopped
		}
	}
	res, err := l.measureAndStart(stop)
	if err != nil {
		return Result{}, err
	}
	res.Waited = time.Since(began)
	return res, nil
}

// missing lists the first MaxListed indexes not yet arrived (shard 0 is there), and how
// many are missing in all.
func (l *leader) missing() ([]int, int) {
	var m []int
	for i := 1; i < l.c.Count && len(m) < MaxListed; i++ {
		if l.peers[i] == nil {
			m = append(m, i)
		}
	}
	return m, l.c.Count - 1 - len(l.peers)
}

// missingWords says who is missing ("shards 1, 3").
func (l *leader) missingWords() string { return shardWord(l.missing()) }

// waiting is the waiting message of now.
func (l *leader) waiting() Message {
	m, n := l.missing()
	return Message{Type: TypeWaiting, Missing: m, MissingCount: n, Count: l.c.Count}
}

// accept takes connections until the listener closes; each says who it is on its own
// goroutine, so one silent connection holds up nobody.
func (l *leader) accept() {
	defer l.wg.Done()
	var pending atomic.Int32
	for {
		nc, err := l.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return
		}
		if pending.Add(1) > maxPending {
			pending.Add(-1)
			closeQuietly(nc)
			continue
		}
		l.mu.Lock()
		select {
		case <-l.done:
			l.mu.Unlock()
			closeQuietly(nc)
			return
		default:
		}
		l.conns[nc] = true
		l.mu.Unlock()
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			defer func() {
				l.mu.Lock()
				delete(l.conns, nc)
				l.mu.Unlock()
				closeQuietly(nc)
			}()
			l.hello(nc, &pending)
		}()
	}
}

// hello reads a new connection's first message and hands it to the loop.
func (l *leader) hello(nc net.Conn, pending *atomic.Int32) {
	c := newConn(nc)
	p := &peer{conn: c, remote: nc.RemoteAddr().String(), pongs: make(chan Message, Pings)}
	nc.SetReadDeadline(time.Now().Add(helloTimeout))
	m, err := readMessage(c.r)
	pending.Add(-1)
	if err == nil && m.Type != TypeReady {
		err = fmt.Errorf("sent %q before saying it is ready", m.Type)
	}
	if err != nil {
		l.post(event{kind: evGarbage, p: p, err: err})
		return
	}
	nc.SetReadDeadline(time.Time{})
	p.hello = m
	if !l.post(event{kind: evArrived, p: p}) {
		return
	}
	// From now on the peer only answers pings; anything else, or the connection ending,
	// means it left.
	for {
		m, err := readMessage(c.r)
		switch {
		case err != nil:
		case m.Type == TypeAbort:
			err = fmt.Errorf("it gave up: %s", m.Reason)
		case m.Type != TypePong:
			err = fmt.Errorf("sent %q, want only pongs after ready", m.Type)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("connection closed")
			}
			l.post(event{kind: evLeft, p: p, err: err})
			return
		}
		select {
		case p.pongs <- m:
		case <-l.done:
			return
		}
	}
}

// post hands ev to the loop, or closes its connection when the loop is gone.
func (l *leader) post(ev event) bool {
	select {
	case l.events <- ev:
		return true
	case <-l.done:
		closeQuietly(ev.p.nc)
		return false
	}
}

// handle takes one event before the start; an error ends the rendezvous for every shard.
func (l *leader) handle(ev event) error {
	c := l.c
	p := ev.p
	switch ev.kind {
	case evGarbage:
		closeQuietly(p.nc)
		var ve errVersion
		if errors.As(ev.err, &ve) {
			return fmt.Errorf("a shard at %s %v; nothing was sent", p.remote, ev.err)
		}
		// A port scanner or a stray client: not a shard, and no reason to stop the run.
		c.notice("rendezvous: ignored a connection from %s: %v", p.remote, ev.err)
		return nil
	case evLeft:
		if l.peers[p.hello.Index] != p {
			return nil // a refused connection ending
		}
		return fmt.Errorf("%s left before the start (%v); no shard starts, nothing was sent", p.name(), ev.err)
	}
	h := p.hello
	switch {
	case h.Count != c.Count:
		return fmt.Errorf("%s says the run has %d shards, shard 0 says %d: every shard needs the same --shard-count; nothing was sent", p.name(), h.Count, c.Count)
	case h.Index == 0 || h.Index >= c.Count:
		return fmt.Errorf("%s: index %d is not a shard 1-%d (shard 0 is the rendezvous itself): each shard needs its own --shard-index; nothing was sent", p.name(), h.Index, c.Count-1)
	case h.PlanHash != c.PlanHash:
		theirs, ours := rawlog.HashPrefixes(h.PlanHash, c.PlanHash)
		return fmt.Errorf("%s has plan %s, shard 0 plan %s: every shard must replay the same plan; nothing was sent", p.name(), theirs, ours)
	case h.RunID != c.RunID:
		return fmt.Errorf("%s is of run %q, shard 0 of run %q: every shard needs the same --run-id; nothing was sent", p.name(), h.RunID, c.RunID)
	}
	if q := l.peers[h.Index]; q != nil {
		closeQuietly(p.nc)
		return fmt.Errorf("two shards claim index %d: %s and %s; each shard needs its own --shard-index, nothing was sent", h.Index, q.name(), p.name())
	}
	l.peers[h.Index] = p
	if len(l.peers) < c.Count-1 {
		c.notice("rendezvous: %s ready; waiting for %s", p.name(), l.missingWords())
		p.send(l.waiting())
		l.dirty = true
	} else {
		c.notice("rendezvous: %s ready; all %d shards ready", p.name(), c.Count)
	}
	if h.Clock != nil && !h.Clock.Synchronised {
		c.notice("rendezvous: %s reports its clock not synchronised (no NTP/PTP discipline): its offset is measured here instead", p.name())
	}
	return nil
}

// sample is one shard's measured clock: its offset to shard 0 within ±err.
type sample struct {
	index    int
	name     string
	offset   time.Duration
	err      time.Duration
	maxRTT   time.Duration
	measured bool
}

// measureAndStart measures every shard, checks the clocks and sends the start.
func (l *leader) measureAndStart(stop <-chan struct{}) (Result, error) {
	c := l.c
	results := make(chan sample, len(l.peers))
	failed := make(chan error, len(l.peers))
	for _, p := range l.peers {
		go func() {
			s, err := l.measure(p)
			if err != nil {
				failed <- err
				return
			}
			results <- s
		}()
	}
	samples := []sample{{index: 0, name: "shard 0" + hostWord(c.Host), measured: true}}
	for len(samples) < c.Count {
		select {
		case s := <-results:
			samples = append(samples, s)
		case err := <-failed:
			l.abort(err.Error())
			return Result{}, c.errf("%s", err)
		case ev := <-l.events:
			if ev.kind == evGarbage {
				closeQuietly(ev.p.nc)
				continue
			}
			if ev.kind == evArrived || l.peers[ev.p.hello.Index] != ev.p {
				closeQuietly(ev.p.nc) // a late duplicate (every index is taken), or its end
				continue
			}
			err := fmt.Errorf("%s left before the start (%v); no shard starts, nothing was sent", ev.p.name(), ev.err)
			l.abort(err.Error())
			return Result{}, c.errf("%s", err)
		case <-stop:
			l.abort("shard 0 was interrupted before the start")
			return Result{}, ErrStopped
		}
	}
	if err := clocksAgree(samples, c.tolerance(), c.Gap > 0); err != nil {
		l.abort(err.Error())
		return Result{}, c.errf("%s", err)
	}
	var maxRTT time.Duration
	for _, s := range samples {
		maxRTT = max(maxRTT, s.maxRTT)
	}
	lead := RTTFactor*maxRTT + c.Lead
	start := c.now().Add(lead)
	for _, s := range samples[1:] {
		l.peers[s.index].send(Message{Type: TypeStart, StartUnixNs: start.UnixNano(), MaxRTTNs: int64(maxRTT), LeadNs: int64(lead),
			OffsetNs: int64(s.offset), OffsetErrNs: int64(s.err)})
	}
	c.notice("rendezvous: %d shards ready; start at %s (in %v: %d × max round trip %v + %v); clocks within %v of shard 0's",
		c.Count, start.UTC().Format(time.RFC3339Nano), lead.Round(time.Microsecond), RTTFactor, maxRTT.Round(time.Microsecond), c.Lead, spread(samples).Round(time.Microsecond))
	return Result{Start: start, MaxRTT: maxRTT, Lead: lead}, nil
}

// measure runs Pings round trips with p: the fastest gives the offset.
func (l *leader) measure(p *peer) (sample, error) {
	c := l.c
	s := sample{index: p.hello.Index, name: p.name(), err: -1}
	for seq := 1; seq <= Pings; seq++ {
		t0 := c.now()
		if err := p.send(Message{Type: TypePing, Seq: seq}); err != nil {
			return s, fmt.Errorf("%s left before the start (%v); no shard starts, nothing was sent", p.name(), err)
		}
		var m Message
		select {
		case m = <-p.pongs:
		case <-time.After(pongTimeout):
			return s, fmt.Errorf("%s did not answer the clock measurement within %v; no shard starts, nothing was sent", p.name(), pongTimeout)
		case <-l.done:
			return s, errors.New("rendezvous closed")
		}
		t1 := c.now()
		if m.Seq != seq {
			return s, fmt.Errorf("%s answered ping %d with pong %d; no shard starts, nothing was sent", p.name(), seq, m.Seq)
		}
		rtt := t1.Sub(t0)
		s.maxRTT = max(s.maxRTT, rtt)
		mid := t0.UnixNano() + int64(rtt)/2
		if half := rtt / 2; s.err < 0 || half < s.err {
			s.err = half
			s.offset = time.Duration(m.WallNs - mid)
		}
	}
	s.measured = true
	return s, nil
}

// clocksAgree refuses when two shards' clocks disagree by more than tol beyond what the
// measurement can tell (each offset is known within ±its err). It names the pair that
// disagrees most. gapTol says tol is the plan's first gap (else the closed-loop tolerance).
func clocksAgree(s []sample, tol time.Duration, gapTol bool) error {
	if len(s) < 2 {
		return nil
	}
	// The largest established disagreement is max over i != j of
	// (o_i - e_i) - (o_j + e_j): the shard whose clock is surely furthest ahead against
	// the one surely furthest behind.
	hi := make([]int, len(s))
	for i := range hi {
		hi[i] = i
	}
	slices.SortFunc(hi, func(a, b int) int { return cmpDur(s[b].offset-s[b].err, s[a].offset-s[a].err) })
	lo := slices.Clone(hi)
	slices.SortFunc(lo, func(a, b int) int { return cmpDur(s[a].offset+s[a].err, s[b].offset+s[b].err) })
	i, j := hi[0], lo[0]
	if i == j {
		// Best of the two second choices.
		d1 := (s[hi[1]].offset - s[hi[1]].err) - (s[j].offset + s[j].err)
		d2 := (s[i].offset - s[i].err) - (s[lo[1]].offset + s[lo[1]].err)
		if d1 >= d2 {
			i = hi[1]
		} else {
			j = lo[1]
		}
	}
	d := (s[i].offset - s[i].err) - (s[j].offset + s[j].err)
	if d <= tol {
		return nil
	}
	what := fmt.Sprintf("the plan's first gap (%v)", tol)
	if !gapTol {
		what = fmt.Sprintf("%v (a closed loop has no first gap)", tol)
	}
	diff := s[i].offset - s[j].offset
	return fmt.Errorf("the clocks of %s and %s disagree by %v (measured to ±%v), more than %s: synchronise the nodes' clocks (chrony, NTP, PTP) and start again; nothing was sent",
		s[j].name, s[i].name, diff.Round(time.Microsecond), (s[i].err + s[j].err).Round(time.Microsecond), what)
}

func cmpDur(a, b time.Duration) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// spread is the largest offset from shard 0's clock, either way.
func spread(s []sample) time.Duration {
	var m time.Duration
	for _, x := range s {
		m = max(m, x.offset, -x.offset)
	}
	return m
}

// abort tells every arrived shard why the run will not start.
func (l *leader) abort(why string) {
	m := Message{Type: TypeAbort, Reason: why}
	for _, p := range l.peers {
		p.send(m)
	}
}

// close ends the rendezvous: the listener, every connection, and it waits for every
// goroutine it started.
func (l *leader) close() {
	l.mu.Lock()
	close(l.done)
	for nc := range l.conns {
		closeQuietly(nc)
	}
	l.mu.Unlock()
	closeQuietly(l.ln)
	l.wg.Wait()
}

func hostWord(host string) string {
	if host == "" {
		return ""
	}
	return " (" + host + ")"
}
