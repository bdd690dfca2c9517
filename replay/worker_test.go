package replay

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
)

// Done-when 1, scaled: a streaming plan at concurrency 16 completes with every request
// logged, every event present, and timestamps in order.
func TestClosedLoopStreamingEveryRequestLogged(t *testing.T) {
	srv := newTestServer(t)
	const n, chunks = 64, 128
	ps := singleTurn(n, job{N: chunks, TTFTms: 20, ITLms: 1, Stream: true}, nil)
	ps.meta.Concurrency = 16
	plan := ps.write(t, t.TempDir())
	res, reqs, sum := runInProcess(t, workerConfig{Plan: plan, URLs: []string{srv.URL}}, nil)
	if res.Status != rawlog.StatusComplete || res.Counts.Completed != n || len(reqs) != n {
		t.Fatalf("status %s counts %+v, %d records", res.Status, res.Counts, len(reqs))
	}
	if sum.Footer == nil || sum.Footer.Requests != n || sum.CPUSamples < 2 {
		t.Fatalf("summary %+v", sum)
	}
	for i, q := range reqs {
		if q.Outcome != rawlog.OutcomeCompleted || q.Status != 200 {
			t.Fatalf("request %d: %v %d %q", i, q.Outcome, q.Status, q.Err)
		}
		if got := countSSEData(q.Body); got != chunks {
			t.Fatalf("request %d: %d events, want %d", i, got, chunks)
		}
		if !strings.HasSuffix(string(q.Body), "data: [DONE]\n\n") {
			t.Fatalf("request %d: body ends %q", i, q.Body[len(q.Body)-20:])
		}
		if q.IntendedNs != -1 || q.ReadyNs < 0 || q.WriteStartNs < q.ReadyNs || q.WriteEndNs < q.WriteStartNs ||
			q.HeaderNs < q.WriteEndNs || q.EndNs < q.HeaderNs {
			t.Fatalf("request %d: times out of order %s", i, brief(q))
		}
		prev := int64(0)
		for k, rt := range q.ReadNs {
			if rt < prev || rt > q.EndNs || rt < q.HeaderNs {
				t.Fatalf("request %d: read %d at %d out of order", i, k, rt)
			}
			prev = rt
		}
		// TTFT: the server sends the first content event 20 ms after it got the request.
		if first := firstContentRead(q); first < 0 || q.ReadNs[first]-q.WriteStartNs < 20e6 {
			t.Fatalf("request %d: first content at %d, write start %d", i, q.ReadNs[first], q.WriteStartNs)
		}
	}
	// At most 16 requests were ever in flight.
	if c := maxOverlap(reqs); c > 16 || c < 8 {
		t.Fatalf("max overlap %d, want <= 16 (and the loop busy)", c)
	}
}

// brief formats a request record without its body.
func brief(q rawlog.Request) string {
	q.Body = nil
	q.ReadNs, q.ReadEnd = q.ReadNs[:min(len(q.ReadNs), 4)], q.ReadEnd[:min(len(q.ReadEnd), 4)]
	return fmt.Sprintf("%+v", q)
}

// firstContentRead returns the index of the read that completed the first event with
// non-empty content (role-only chunks with "content":"" do not count, as for TTFT).
func firstContentRead(q rawlog.Request) int {
	body := string(q.Body)
	i := strings.Index(body, `"content":"`)
	for i >= 0 && strings.HasPrefix(body[i+len(`"content":"`):], `"`) {
		j := strings.Index(body[i+1:], `"content":"`)
		if j < 0 {
			return -1
		}
		i += 1 + j
	}
	if i < 0 {
		return -1
	}
	end := i + strings.Index(body[i:], "\n\n") + 2
	for k, e := range q.ReadEnd {
		if int(e) >= end {
			return k
		}
	}
	return -1
}

func maxOverlap(reqs map[uint32]rawlog.Request) int {
	type ev struct {
		t int64
		d int
	}
	var evs []ev
	for _, q := range reqs {
		if q.WriteStartNs >= 0 {
			evs = append(evs, ev{q.WriteStartNs, 1}, ev{q.EndNs, -1})
		}
	}
	sortEvents := func() {
		for i := 1; i < len(evs); i++ {
			for j := i; j > 0 && (evs[j].t < evs[j-1].t || evs[j].t == evs[j-1].t && evs[j].d < evs[j-1].d); j-- {
				evs[j], evs[j-1] = evs[j-1], evs[j]
			}
		}
	}
	sortEvents()
	cur, best := 0, 0
	for _, e := range evs {
		cur += e.d
		best = max(best, cur)
	}
	return best
}

// Every kind of ending is an outcome, never a crash: server errors, resets, stalls
// (timeout), cancel-after, and a refused connection.
func TestOutcomes(t *testing.T) {
	srv := newTestServer(t)
	ps := &planSpec{}
	add := func(j job, cancel int64) {
		i := len(ps.records)
		ps.add(mmapds.Record{SendOffsetNs: int64(i) * 1e6, DelayNs: -1, CancelAfterNs: cancel, Session: uint32(i), Phase: mmapds.PhaseProfile}, jobBody(j))
	}
	add(job{N: 3, Stream: true}, 0)                 // 0 completed
	add(job{Status: 500}, 0)                        // 1 completed with status 500
	add(job{Mode: "reset"}, 0)                      // 2 failed: reset
	add(job{Mode: "stall"}, 0)                      // 3 failed: timeout
	add(job{N: 50, ITLms: 20, Stream: true}, 100e6) // 4 cancelled after 100 ms
	add(job{N: 5, Mode: "close"}, 0)                // 5 completed, close-delimited body
	add(job{N: 4, Stream: true, TTFTms: 10}, 500e6) // 6 completed before its cancel-after
	plan := ps.write(t, t.TempDir())
	res, reqs, _ := runInProcess(t, workerConfig{Plan: plan, URLs: []string{srv.URL}, RequestTimeoutNs: int64(400 * time.Millisecond)}, nil)
	want := []struct {
		outcome rawlog.Outcome
		status  int
		err     string
	}{
		{rawlog.OutcomeCompleted, 200, ""},
		{rawlog.OutcomeCompleted, 500, ""},
		{rawlog.OutcomeFailed, 0, ""},
		{rawlog.OutcomeFailed, 0, "timeout"},
		{rawlog.OutcomeCancelled, 200, "cancelled"},
		{rawlog.OutcomeCompleted, 200, ""},
		{rawlog.OutcomeCompleted, 200, ""},
	}
	for i, w := range want {
		q := reqs[uint32(i)]
		if q.Outcome != w.outcome || q.Status != w.status || !strings.Contains(q.Err, w.err) {
			t.Errorf("request %d: outcome %v status %d err %q; want %v %d %q", i, q.Outcome, q.Status, q.Err, w.outcome, w.status, w.err)
		}
	}
	if q := reqs[2]; q.Err == "" {
		t.Errorf("reset: no error text")
	}
	if q := reqs[4]; q.EndNs-q.WriteEndNs < 100e6 || q.EndNs-q.WriteEndNs > 2e9 || len(q.ReadNs) == 0 {
		t.Errorf("cancel-after: ended %v after the write, %d reads", time.Duration(q.EndNs-q.WriteEndNs), len(q.ReadNs))
	}
	if q := reqs[5]; string(q.Body) != strings.Repeat("tok ", 5) {
		t.Errorf("close-delimited body %q", q.Body)
	}
	if q := reqs[1]; !strings.Contains(string(q.Body), "requested failure") {
		t.Errorf("error body %q", q.Body)
	}
	// The log says how each exchange ended; the counts (run.json, the closing line) count a
	// response with a status other than 2xx as failed, as analyze does.
	if res.Counts.Completed != 3 || res.Counts.Failed != 3 || res.Counts.Cancelled != 1 {
		t.Errorf("counts %+v, want 3 completed, 3 failed (HTTP 500, reset, timeout), 1 cancelled", res.Counts)
	}

	// Nothing listening: a connect error, not a crash.
	res, reqs, _ = runInProcess(t, workerConfig{Plan: plan, URLs: []string{"http://127.0.0.1:1"}}, nil)
	if res.Counts.Failed != len(want) || !strings.HasPrefix(reqs[0].Err, "connect: ") || reqs[0].ConnectStartNs < 0 {
		t.Fatalf("refused: counts %+v, err %q", res.Counts, reqs[0].Err)
	}
}

// Connection strategies: pooled reuses, never dials per request, sticky keeps one
// connection per session across its turns.
func TestConnectionReuse(t *testing.T) {
	mk := func() *planSpec {
		ps := &planSpec{}
		for s := 0; s < 4; s++ {
			for turn := 0; turn < 3; turn++ {
				delay := int64(-1)
				if turn > 0 {
					delay = 0
				}
				ps.add(mmapds.Record{SendOffsetNs: mmapds.NoSendOffset, DelayNs: delay, Session: uint32(100 + s), Turn: uint32(turn), Phase: mmapds.PhaseProfile},
					jobBody(job{N: 2, Stream: true}))
			}
		}
		ps.meta.Concurrency = 2
		return ps
	}
	for _, c := range []struct {
		reuse    string
		minConns int64
		maxConns int64
	}{
		{ReusePooled, 1, 2},
		{ReuseNever, 12, 12},
		{ReuseSticky, 4, 4},
	} {
		t.Run(c.reuse, func(t *testing.T) {
			srv := newTestServer(t)
			plan := mk().write(t, t.TempDir())
			res, reqs, _ := runInProcess(t, workerConfig{Plan: plan, URLs: []string{srv.URL}, ConnReuse: c.reuse}, nil)
			if res.Counts.Completed != 12 {
				t.Fatalf("counts %+v", res.Counts)
			}
			if n := srv.conns.Load(); n < c.minConns || n > c.maxConns {
				t.Fatalf("%d connections, want %d..%d", n, c.minConns, c.maxConns)
			}
			reused := 0
			for _, q := range reqs {
				if q.ConnReused {
					reused++
					if q.ConnectStartNs != -1 {
						t.Fatalf("reused connection with connect time %s", brief(q))
					}
				} else if q.ConnectStartNs < 0 || q.ConnectEndNs < q.ConnectStartNs {
					t.Fatalf("new connection without connect times %s", brief(q))
				}
			}
			if want := 12 - int(srv.conns.Load()); reused != want {
				t.Fatalf("%d reused, want %d", reused, want)
			}
		})
	}
}

// Multi-turn: a later turn goes out at max(planned instant, previous end + delay), and
// ReadyNs says which.
func TestMultiTurnTiming(t *testing.T) {
	srv := newTestServer(t)
	ps := &planSpec{}
	body := jobBody(job{N: 2, TTFTms: 30, Stream: true})
	ps.add(mmapds.Record{SendOffsetNs: 0, DelayNs: -1, Session: 7, Phase: mmapds.PhaseProfile}, body)
	ps.add(mmapds.Record{SendOffsetNs: mmapds.NoSendOffset, DelayNs: 50e6, Session: 7, Turn: 1, Phase: mmapds.PhaseProfile}, body)
	ps.add(mmapds.Record{SendOffsetNs: 400e6, DelayNs: 10e6, Session: 7, Turn: 2, Phase: mmapds.PhaseProfile}, body)
	ps.add(mmapds.Record{SendOffsetNs: 5e6, DelayNs: -1, Session: 8, Phase: mmapds.PhaseProfile}, body)
	plan := ps.write(t, t.TempDir())
	_, reqs, _ := runInProcess(t, workerConfig{Plan: plan, URLs: []string{srv.URL}}, nil)
	q0, q1, q2 := reqs[0], reqs[1], reqs[2]
	if q1.ReadyNs != q0.EndNs+50e6 || q1.IntendedNs != -1 {
		t.Fatalf("turn 1 ready %d, want previous end %d + 50ms", q1.ReadyNs, q0.EndNs)
	}
	if q2.ReadyNs != max(400e6, q1.EndNs+10e6) || q2.IntendedNs != 400e6 {
		t.Fatalf("turn 2 ready %d intended %d, want max(planned 400ms, %d + 10ms)", q2.ReadyNs, q2.IntendedNs, q1.EndNs)
	}
	for _, q := range []rawlog.Request{q1, q2} {
		// Upper bounds are loose: tests share the machine (and run under -race).
		if lag := q.WriteStartNs - q.ReadyNs; lag < 0 || lag > 2e9 {
			t.Fatalf("request %d sent %v after ready", q.Index, time.Duration(lag))
		}
	}
	if reqs[3].Outcome != rawlog.OutcomeCompleted {
		t.Fatalf("other session: %s", brief(reqs[3]))
	}
}

// A rate with a concurrency ceiling: requests that find no slot wait, and ReadyNs shows
// the wait; none is dropped.
func TestCeilingWaitsAreLogged(t *testing.T) {
	srv := newTestServer(t)
	ps := singleTurn(10, job{N: 1, TTFTms: 50, Stream: true}, func(i int) int64 { return int64(i) * 5e6 })
	ps.meta.Concurrency = 2
	plan := ps.write(t, t.TempDir())
	res, reqs, _ := runInProcess(t, workerConfig{Plan: plan, URLs: []string{srv.URL}}, nil)
	if res.Counts.Completed != 10 {
		t.Fatalf("counts %+v", res.Counts)
	}
	waited := 0
	for _, q := range reqs {
		if q.ReadyNs < q.IntendedNs {
			t.Fatalf("ready before intended: %s", brief(q))
		}
		if q.ReadyNs-q.IntendedNs > 20e6 {
			waited++
		}
	}
	if waited < 6 || maxOverlap(reqs) > 2 {
		t.Fatalf("%d requests waited, overlap %d", waited, maxOverlap(reqs))
	}
}

// Stop: nothing new is sent, in-flight requests finish within the grace period, the rest
// are logged as not sent; abort after the grace period cuts the stragglers.
func TestStopGraceAbort(t *testing.T) {
	srv := newTestServer(t)
	ps := singleTurn(40, job{N: 10, ITLms: 30, Stream: true}, func(i int) int64 { return int64(i) * 20e6 })
	plan := ps.write(t, t.TempDir())
	cmds := make(chan string, 1)
	go func() {
		time.Sleep(150 * time.Millisecond)
		cmds <- "stop"
	}()
	res, reqs, sum := runInProcess(t, workerConfig{Plan: plan, URLs: []string{srv.URL}, GraceNs: int64(100 * time.Millisecond)}, cmds)
	if res.Status != rawlog.StatusInterrupted || sum.Footer == nil || sum.Footer.Status != rawlog.StatusInterrupted {
		t.Fatalf("status %s footer %+v", res.Status, sum.Footer)
	}
	if len(reqs) != 40 || res.Counts.Aborted == 0 || res.Counts.NotSent < 25 || res.Counts.Completed+res.Counts.Aborted+res.Counts.NotSent != 40 {
		t.Fatalf("%d records, counts %+v", len(reqs), res.Counts)
	}
	for _, q := range reqs {
		switch q.Outcome {
		case rawlog.OutcomeNotSent:
			if q.WriteStartNs != -1 || q.ReadyNs != -1 || q.Err != "run interrupted" {
				t.Fatalf("not sent: %s", brief(q))
			}
		case rawlog.OutcomeAborted:
			if !strings.Contains(q.Err, "grace") || q.EndNs < 100e6 {
				t.Fatalf("aborted: %s", brief(q))
			}
		}
	}
}

// A duration-sized plan: requests still running at duration + grace are aborted, and the
// run is complete, not interrupted.
func TestDurationGrace(t *testing.T) {
	srv := newTestServer(t)
	// Sends at 0, 10 and 20 ms, each a 1 s stream; the duration ends at 500 ms, so a worker
	// that starts up to 480 ms late on a loaded machine still sends all three (a 50 ms
	// duration turned them all into not_sent there), and the grace period cuts them at 600 ms.
	ps := singleTurn(3, job{N: 100, ITLms: 10, Stream: true}, func(i int) int64 { return int64(i) * 10e6 })
	ps.meta.DurationNs = 500e6
	plan := ps.write(t, t.TempDir())
	res, reqs, _ := runInProcess(t, workerConfig{Plan: plan, URLs: []string{srv.URL}, GraceNs: int64(100 * time.Millisecond)}, nil)
	if res.Status != rawlog.StatusComplete || res.Counts.Aborted != 3 {
		t.Fatalf("status %s counts %+v", res.Status, res.Counts)
	}
	for _, q := range reqs {
		if q.EndNs < 600e6 || q.EndNs > 5e9 || !strings.Contains(q.Err, "duration") {
			t.Fatalf("aborted at %v: %q", time.Duration(q.EndNs), q.Err)
		}
	}
}

// Closed-loop warmup: profile requests start only after the warmup ones ended.
func TestWarmupBarrier(t *testing.T) {
	srv := newTestServer(t)
	ps := &planSpec{}
	for i := 0; i < 8; i++ {
		ph := mmapds.PhaseProfile
		j := job{N: 1, Stream: true}
		if i < 3 {
			ph = mmapds.PhaseWarmup
			j.TTFTms = 20 * (i + 1)
		}
		ps.add(mmapds.Record{SendOffsetNs: mmapds.NoSendOffset, DelayNs: -1, Session: uint32(i), Phase: ph}, jobBody(j))
	}
	ps.meta.Concurrency = 4
	plan := ps.write(t, t.TempDir())
	_, reqs, _ := runInProcess(t, workerConfig{Plan: plan, URLs: []string{srv.URL}}, nil)
	var lastWarm int64
	for i := 0; i < 3; i++ {
		lastWarm = max(lastWarm, reqs[uint32(i)].EndNs)
	}
	for i := 3; i < 8; i++ {
		if q := reqs[uint32(i)]; q.ReadyNs < lastWarm {
			t.Fatalf("profile request %d ready at %d before warmup ended at %d", i, q.ReadyNs, lastWarm)
		}
	}
}

// Concurrency ramp: slot j opens at ramp*j/(N-1).
func TestConcurrencyRamp(t *testing.T) {
	srv := newTestServer(t)
	ps := singleTurn(24, job{N: 1, TTFTms: 40, Stream: true}, nil)
	ps.meta.Concurrency = 4
	ps.meta.ConcurrencyRampNs = 300e6
	plan := ps.write(t, t.TempDir())
	_, reqs, _ := runInProcess(t, workerConfig{Plan: plan, URLs: []string{srv.URL}}, nil)
	// Before 100 ms only one slot is open: requests do not overlap.
	early := map[uint32]rawlog.Request{}
	for i, q := range reqs {
		if q.WriteStartNs < 90e6 {
			early[i] = q
		}
	}
	if len(early) == 0 || maxOverlap(early) != 1 {
		t.Fatalf("%d early requests, overlap %d", len(early), maxOverlap(early))
	}
	if maxOverlap(reqs) != 4 {
		t.Fatalf("overlap %d, want 4 after the ramp", maxOverlap(reqs))
	}
}

// Live history: the marker in a later turn is replaced by the escaped content of the
// previous response.
func TestLiveHistory(t *testing.T) {
	srv := newTestServer(t)
	srv.keep = true
	const marker = "\x00LIVE\x00"
	ps := &planSpec{}
	ps.meta.LiveHistoryMarker = marker
	ps.meta.ConversationHistory = "live"
	ps.meta.Streaming = true
	ps.add(mmapds.Record{SendOffsetNs: 0, DelayNs: -1, Session: 1, Phase: mmapds.PhaseProfile},
		jobBody(job{N: 2, Stream: true, Text: "say \"hi\"\n"}))
	ps.add(mmapds.Record{SendOffsetNs: mmapds.NoSendOffset, DelayNs: 0, Session: 1, Turn: 1, Phase: mmapds.PhaseProfile, Flags: mmapds.FlagLiveHistory},
		[]byte(`{"n":1,"stream":false,"seen":"`+marker+`"}`))
	plan := ps.write(t, t.TempDir())
	res, reqs, _ := runInProcess(t, workerConfig{Plan: plan, URLs: []string{srv.URL}}, nil)
	if res.Counts.Completed != 2 {
		t.Fatalf("counts %+v %q", res.Counts, reqs[1].Err)
	}
	want := `"seen":"say \"hi\"\nsay \"hi\"\n"`
	if !strings.Contains(srv.bodies[1], want) {
		t.Fatalf("second body %q, want it to contain %q", srv.bodies[1], want)
	}
	if !strings.Contains(string(reqs[1].Body), `"seen":"say \"hi\"\nsay \"hi\"\n"`) {
		t.Fatalf("echo %q", reqs[1].Body)
	}
}

// Several URLs: sessions alternate between them, and each record names its URL.
func TestURLRoundRobin(t *testing.T) {
	a, b := newTestServer(t), newTestServer(t)
	ps := singleTurn(10, job{N: 1, Stream: true}, func(i int) int64 { return int64(i) * 1e6 })
	plan := ps.write(t, t.TempDir())
	_, reqs, _ := runInProcess(t, workerConfig{Plan: plan, URLs: []string{a.URL, b.URL}}, nil)
	if a.requests.Load() != 5 || b.requests.Load() != 5 {
		t.Fatalf("requests %d / %d", a.requests.Load(), b.requests.Load())
	}
	for i, q := range reqs {
		if q.URLIndex != int(i)%2 {
			t.Fatalf("request %d went to URL %d", i, q.URLIndex)
		}
	}
}

// A duration-sized closed loop stops starting requests at the duration; the rest are logged
// as not sent, and the run is complete.
func TestDurationClosedLoop(t *testing.T) {
	srv := newTestServer(t)
	ps := singleTurn(2000, job{N: 1, TTFTms: 5, Stream: true}, nil)
	ps.meta.Concurrency = 2
	ps.meta.DurationNs = 150e6
	plan := ps.write(t, t.TempDir())
	res, reqs, _ := runInProcess(t, workerConfig{Plan: plan, URLs: []string{srv.URL}, GraceNs: int64(time.Second)}, nil)
	c := res.Counts
	if res.Status != rawlog.StatusComplete || c.Completed == 0 || c.NotSent == 0 || c.Completed+c.NotSent != 2000 {
		t.Fatalf("status %s counts %+v", res.Status, c)
	}
	for _, q := range reqs {
		switch q.Outcome {
		case rawlog.OutcomeCompleted:
			if q.ReadyNs > 150e6 {
				t.Fatalf("request started after the duration: %s", brief(q))
			}
		case rawlog.OutcomeNotSent:
			if q.Err != "benchmark duration elapsed" {
				t.Fatalf("not sent: %s", brief(q))
			}
		}
	}
}

// Spare connections: with SpareConns the event loop opens that many pooled connections per
// URL before the start instant, so a burst of that many sends at the first instant finds
// them made (no connect on any request's path: connect_* -1, conn_reused false), and it
// opens more after the burst's sends. Without, each request of the burst connects
// on its own path.
func TestSpareConnections(t *testing.T) {
	const burst = 6
	for _, spares := range []int{burst, 0} {
		t.Run(fmt.Sprintf("spares=%d", spares), func(t *testing.T) {
			srv := newTestServer(t)
			ps := &planSpec{}
			for s := 0; s < burst; s++ {
				ps.add(mmapds.Record{SendOffsetNs: 0, DelayNs: -1, Session: uint32(s), Phase: mmapds.PhaseProfile}, jobBody(job{N: 2, TTFTms: 20, Stream: true}))
			}
			plan := ps.write(t, t.TempDir())
			res, reqs, _ := runInProcess(t, workerConfig{Plan: plan, URLs: []string{srv.URL}, ConnReuse: ReusePooled, Client: ClientLoop, SpareConns: spares}, nil)
			if res.Counts.Completed != burst {
				t.Fatalf("counts %+v", res.Counts)
			}
			ready := 0
			for _, q := range reqs {
				if q.ConnReused {
					t.Fatalf("a request of the first burst on a reused connection: %s", brief(q))
				}
				if q.ConnectStartNs == -1 {
					ready++
				} else if q.ConnectEndNs < q.ConnectStartNs {
					t.Fatalf("connect times %d..%d: %s", q.ConnectStartNs, q.ConnectEndNs, brief(q))
				}
			}
			// The spares' handshakes end within their connect calls on loopback, long before
			// the start instant 20 ms later: all are ready, but a machine loaded enough to put
			// the kernel's handshake off may leave one connecting (then the request waits
			// for it, with connect times: still no dial of its own).
			if spares == 0 && ready != 0 || spares > 0 && ready < burst/2 {
				t.Fatalf("spares %d: %d of %d requests found a connection ready", spares, ready, burst)
			}
			// The burst's connections, and after its sends the spares it took are opened
			// again, a few a pass (sparesPerPass), for as many passes as the run lasts.
			lo, hi := int64(burst), int64(burst)
			if spares > 0 {
				lo, hi = burst+1, int64(burst+spares)
			}
			if n := srv.conns.Load(); n < lo || n > hi {
				t.Fatalf("%d connections, want %d..%d", n, lo, hi)
			}
		})
	}
}
