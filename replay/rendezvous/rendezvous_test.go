package rendezvous

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmbench/llmbench/rawlog"
)

const (
	planA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	planB = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab"
)

// listener opens shard 0's listener on a free loopback port and returns its address and a
// Listen func handing it over.
func listener(t *testing.T) (string, func(string) (net.Listener, error)) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().String(), func(string) (net.Listener, error) { return ln, nil }
}

// shards returns count configs of one run meeting at a fresh loopback address.
func shards(t *testing.T, count int, timeout time.Duration) []Config {
	addr, listen := listener(t)
	cfgs := make([]Config, count)
	for i := range cfgs {
		cfgs[i] = Config{Addr: addr, Index: i, Count: count, PlanHash: planA, RunID: "r1", Host: fmt.Sprintf("node-%d", i),
			Gap: 20 * time.Millisecond, Timeout: timeout, RetryEvery: 20 * time.Millisecond,
			Clock: &rawlog.ClockState{Source: "adjtimex", Synchronised: true}}
	}
	cfgs[0].Listen = listen
	return cfgs
}

type outcome struct {
	res     Result
	err     error
	readyAt time.Time // when Meet was called
	endedAt time.Time
}

// meet runs every config's Meet, config i after delays[i] (if given), and returns the
// outcomes by index. stops[i], when set, is that shard's stop channel.
func meet(cfgs []Config, delays []time.Duration, stops map[int]chan struct{}) []outcome {
	out := make([]outcome, len(cfgs))
	var wg sync.WaitGroup
	for i := range cfgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i < len(delays) {
				time.Sleep(delays[i])
			}
			var stop chan struct{}
			if stops != nil {
				stop = stops[i]
			}
			out[i].readyAt = time.Now()
			out[i].res, out[i].err = Meet(cfgs[i], stop)
			out[i].endedAt = time.Now()
		}()
	}
	wg.Wait()
	return out
}

// Every shard gets one start instant, after the last one got ready, at least the lead ahead
// of the moment shard 0 decided; the round trips and clock offsets are measured.
func TestMeetStartsTogether(t *testing.T) {
	for _, tc := range []struct {
		name   string
		count  int
		delays []time.Duration
	}{
		{"alone", 1, nil},
		{"two", 2, nil},
		{"shard 0 last", 3, []time.Duration{300 * time.Millisecond, 0, 100 * time.Millisecond}},
		{"a follower last", 4, []time.Duration{0, 50 * time.Millisecond, 300 * time.Millisecond, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfgs := shards(t, tc.count, 10*time.Second)
			out := meet(cfgs, tc.delays, nil)
			var lastReady time.Time
			for i, o := range out {
				if o.err != nil {
					t.Fatalf("shard %d: %v", i, o.err)
				}
				if o.readyAt.After(lastReady) {
					lastReady = o.readyAt
				}
			}
			start := out[0].res.Start
			for i, o := range out {
				if !o.res.Start.Equal(start) {
					t.Errorf("shard %d starts at %v, shard 0 at %v", i, o.res.Start, start)
				}
				if o.res.Lead < DefaultLead || o.res.Lead != RTTFactor*o.res.MaxRTT+DefaultLead {
					t.Errorf("shard %d: lead %v, want %d × max RTT %v + %v", i, o.res.Lead, RTTFactor, o.res.MaxRTT, DefaultLead)
				}
				// The offset of a clock against itself is 0 within the measurement's error.
				if d := o.res.ClockOffset; d > o.res.ClockOffsetError || -d > o.res.ClockOffsetError {
					t.Errorf("shard %d: clock offset %v beyond its error ±%v on one machine", i, d, o.res.ClockOffsetError)
				}
			}
			if !start.After(lastReady.Add(DefaultLead - time.Millisecond)) {
				t.Errorf("start %v is not a lead after the last shard got ready (%v)", start, lastReady)
			}
			if tc.count > 1 && out[0].res.MaxRTT <= 0 {
				t.Errorf("no round trip measured: %+v", out[0].res)
			}
		})
	}
}

// A shard that never arrives: every waiting shard gives up within its timeout, naming it.
func TestMeetTimeoutNamesMissing(t *testing.T) {
	const timeout = 600 * time.Millisecond
	t.Run("shard 1 of 3 missing", func(t *testing.T) {
		cfgs := shards(t, 3, timeout)
		out := meet([]Config{cfgs[0], cfgs[2]}, []time.Duration{0, 100 * time.Millisecond}, nil)
		for i, o := range out {
			if o.err == nil || !strings.Contains(o.err.Error(), "shard 1 of 3 did not arrive within 600ms") || !strings.Contains(o.err.Error(), "nothing was sent") {
				t.Errorf("outcome %d: %v, want shard 1 named missing", i, o.err)
			}
			// Shard 0 gives up at its timeout and tells the other, which got ready later.
			if took := o.endedAt.Sub(out[0].readyAt); took < timeout || took > timeout+5*time.Second {
				t.Errorf("outcome %d gave up %v after shard 0 got ready, timeout %v", i, took, timeout)
			}
		}
	})
	t.Run("shard 0 missing", func(t *testing.T) {
		cfgs := shards(t, 2, timeout)
		// Nobody listens where shard 0 should.
		ln, _ := cfgs[0].Listen("")
		ln.Close()
		out := meet(cfgs[1:], nil, nil)
		if err := out[0].err; err == nil || !strings.Contains(err.Error(), "shard 0 of 2 did not arrive") {
			t.Errorf("lone follower: %v, want shard 0 named missing", err)
		}
	})
	t.Run("shards 1 and 3 of 4 missing", func(t *testing.T) {
		cfgs := shards(t, 4, timeout)
		out := meet([]Config{cfgs[0], cfgs[2]}, nil, nil)
		for i, o := range out {
			if o.err == nil || !strings.Contains(o.err.Error(), "shards 1, 3 of 4 did not arrive") {
				t.Errorf("outcome %d: %v", i, o.err)
			}
		}
	})
}

// A shard that disagrees about the run is refused before anything starts, and every shard
// gives up naming it.
func TestMeetRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(c []Config)
		want   string
	}{
		{"another plan", func(c []Config) { c[2].PlanHash = planB }, "shard 2 (node-2, 127.0.0.1:"},
		{"another shard count", func(c []Config) { c[1].Count = 4; c[1].Index = 3 }, "says the run has 4 shards, shard 0 says 3"},
		{"another run", func(c []Config) { c[2].RunID = "r2" }, `is of run "r2", shard 0 of run "r1"`},
		{"duplicate index", func(c []Config) { c[2].Index = 1 }, "two shards claim index 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfgs := shards(t, 3, 5*time.Second)
			tc.change(cfgs)
			out := meet(cfgs, []time.Duration{0, 0, 150 * time.Millisecond}, nil)
			for i, o := range out {
				if o.err == nil {
					t.Fatalf("shard %d started at %v", i, o.res.Start)
				}
				if !strings.Contains(o.err.Error(), "nothing was sent") {
					t.Errorf("shard %d: %v", i, o.err)
				}
			}
			if !strings.Contains(out[0].err.Error(), tc.want) {
				t.Errorf("shard 0: %v, want %q", out[0].err, tc.want)
			}
			if tc.name == "another plan" && !strings.Contains(out[0].err.Error(), "has plan "+planB[:63]) {
				t.Errorf("shard 0 does not show the differing plan hashes: %v", out[0].err)
			}
		})
	}
}

// A shard that leaves (dies, is stopped) before the start makes every other shard give up;
// shard 0 stopping does the same.
func TestMeetShardLeaves(t *testing.T) {
	t.Run("a follower", func(t *testing.T) {
		cfgs := shards(t, 3, 5*time.Second)
		stops := map[int]chan struct{}{1: make(chan struct{})}
		go func() {
			time.Sleep(200 * time.Millisecond) // shard 1 is connected and waiting for shard 2
			close(stops[1])
		}()
		out := meet(cfgs[:2], nil, stops)
		if out[1].err != ErrStopped {
			t.Errorf("stopped shard: %v, want ErrStopped", out[1].err)
		}
		if err := out[0].err; err == nil || !strings.Contains(err.Error(), "shard 1 (node-1, ") || !strings.Contains(err.Error(), "left before the start") {
			t.Errorf("shard 0: %v", err)
		}
	})
	t.Run("shard 0", func(t *testing.T) {
		cfgs := shards(t, 3, 5*time.Second)
		stops := map[int]chan struct{}{0: make(chan struct{})}
		go func() {
			time.Sleep(200 * time.Millisecond)
			close(stops[0])
		}()
		out := meet(cfgs[:2], nil, stops)
		if out[0].err != ErrStopped {
			t.Errorf("shard 0: %v, want ErrStopped", out[0].err)
		}
		if err := out[1].err; err == nil || !strings.Contains(err.Error(), "shard 0 gave up: shard 0 was interrupted") {
			t.Errorf("shard 1: %v", err)
		}
	})
}

// Clocks that disagree by more than the plan's first gap are refused, naming both shards;
// within it the offset is measured to within the error the measurement claims.
func TestMeetClocks(t *testing.T) {
	const ahead = 30 * time.Millisecond
	skewed := func() time.Time { return time.Now().Add(ahead) }
	t.Run("refused", func(t *testing.T) {
		cfgs := shards(t, 3, 5*time.Second)
		cfgs[2].Now = skewed
		for i := range cfgs {
			cfgs[i].Gap = 5 * time.Millisecond
		}
		out := meet(cfgs, nil, nil)
		for i, o := range out {
			if o.err == nil || !strings.Contains(o.err.Error(), "the clocks of shard") || !strings.Contains(o.err.Error(), "shard 2 (node-2") ||
				!strings.Contains(o.err.Error(), "more than the plan's first gap (5ms)") {
				t.Errorf("shard %d: %v", i, o.err)
			}
		}
	})
	t.Run("closed loop", func(t *testing.T) {
		cfgs := shards(t, 2, 5*time.Second)
		cfgs[1].Now = skewed
		for i := range cfgs {
			cfgs[i].Gap = 0
		}
		out := meet(cfgs, nil, nil)
		if err := out[0].err; err == nil || !strings.Contains(err.Error(), "10ms (a closed loop has no first gap)") {
			t.Errorf("shard 0: %v", err)
		}
	})
	t.Run("measured", func(t *testing.T) {
		cfgs := shards(t, 2, 5*time.Second)
		cfgs[1].Now = skewed
		for i := range cfgs {
			cfgs[i].Gap = 100 * time.Millisecond
		}
		out := meet(cfgs, nil, nil)
		if out[0].err != nil || out[1].err != nil {
			t.Fatal(out[0].err, out[1].err)
		}
		r := out[1].res
		// The shard's answer lies between the ping and the pong on the same real clock, so
		// the estimate is within half the fastest round trip of the true offset, always.
		if d := r.ClockOffset - ahead; d > r.ClockOffsetError || -d > r.ClockOffsetError {
			t.Errorf("measured offset %v ± %v, true offset %v", r.ClockOffset, r.ClockOffsetError, ahead)
		}
		if !r.Start.Equal(out[0].res.Start) {
			t.Errorf("starts %v and %v", out[0].res.Start, r.Start)
		}
	})
}

func TestClocksAgree(t *testing.T) {
	ms := time.Millisecond
	s := func(idx int, off, err time.Duration) sample {
		return sample{index: idx, name: fmt.Sprintf("shard %d", idx), offset: off, err: err}
	}
	for _, tc := range []struct {
		name    string
		samples []sample
		tol     time.Duration
		want    string // "" accepted
	}{
		{"one", []sample{s(0, 0, 0)}, ms, ""},
		{"within", []sample{s(0, 0, 0), s(1, 4*ms, 0), s(2, -ms, 0)}, 5 * ms, ""},
		{"apart", []sample{s(0, 0, 0), s(1, 4*ms, 0), s(2, -2*ms, 0)}, 5 * ms, "shard 2 and shard 1 disagree by 6ms"},
		{"apart within the measurement error", []sample{s(0, 0, 0), s(1, 6*ms, ms), s(2, 0, ms/2)}, 5 * ms, ""},
		{"one shard both extremes", []sample{s(0, 0, 0), s(1, 9*ms, 8*ms), s(2, 3*ms, 0)}, 2 * ms, "shard 0 and shard 2 disagree by 3ms"},
	} {
		err := clocksAgree(tc.samples, tc.tol, true)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// Connections that are not shards (garbage, silence, half messages, floods, wrong types)
// never crash shard 0 nor stop the run: the real shards still meet.
func TestMeetHostilePeers(t *testing.T) {
	cfgs := shards(t, 3, 10*time.Second)
	addr := cfgs[0].Addr
	var notes []string
	var mu sync.Mutex
	cfgs[0].Notice = func(s string) { mu.Lock(); notes = append(notes, s); mu.Unlock() }
	hostile := [][]byte{
		[]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
		bytes.Repeat([]byte("x"), MaxLine+10),
		[]byte(`{"v":1,"type":"ready","index":1`), // cut, then closed
		[]byte(`{"v":1,"type":"pong","seq":1}` + "\n"),
		[]byte(`{"v":1,"type":"ready","index":1,"count":3,"plan_hash":"zz"}` + "\n"),
		[]byte("\x00\xff\xfe\n"),
		[]byte(`[1,2,3]` + "\n"),
		[]byte(`{"v":1,"type":"ready","index":-1,"count":3,"plan_hash":"` + planA + `"}` + "\n"),
		nil, // connects, says nothing, closes
	}
	var hw sync.WaitGroup
	for i, b := range hostile {
		hw.Add(1)
		go func() {
			defer hw.Done()
			time.Sleep(time.Duration(i) * 10 * time.Millisecond)
			for {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					time.Sleep(10 * time.Millisecond)
					continue
				}
				c.Write(b)
				time.Sleep(50 * time.Millisecond)
				c.Close()
				return
			}
		}()
	}
	// A flood of silent connections, beyond maxPending.
	var flood []net.Conn
	for range maxPending + 20 {
		if c, err := net.Dial("tcp", addr); err == nil {
			flood = append(flood, c)
		}
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		for _, c := range flood {
			c.Close()
		}
	}()
	out := meet(cfgs, []time.Duration{0, 500 * time.Millisecond, 600 * time.Millisecond}, nil)
	hw.Wait()
	for i, o := range out {
		if o.err != nil {
			t.Fatalf("shard %d: %v\nnotices: %q", i, o.err, notes)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	ignored := 0
	for _, n := range notes {
		if strings.Contains(n, "ignored a connection from") {
			ignored++
		}
	}
	if ignored < 5 {
		t.Errorf("%d connections ignored with a notice, want the hostile ones: %q", ignored, notes)
	}
}

// A peer of another protocol version is a shard of another llmbench: refused, run stopped.
func TestMeetOtherVersion(t *testing.T) {
	cfgs := shards(t, 2, 5*time.Second)
	go func() {
		for {
			c, err := net.Dial("tcp", cfgs[0].Addr)
			if err != nil {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			defer c.Close()
			fmt.Fprintf(c, `{"v":2,"type":"ready","index":1,"count":2,"plan_hash":"%s"}`+"\n", planA)
			bufio.NewReader(c).ReadString('\n')
			return
		}
	}()
	out := meet(cfgs[:1], nil, nil)
	if err := out[0].err; err == nil || !strings.Contains(err.Error(), "speaks rendezvous protocol version 2, this shard 1") {
		t.Errorf("shard 0: %v", err)
	}
}

// fakeLeader accepts one connection at addr's listener and answers the ready with lines.
func fakeLeader(t *testing.T, ln net.Listener, lines ...string) {
	t.Helper()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		bufio.NewReader(c).ReadString('\n')
		for _, l := range lines {
			fmt.Fprint(c, l)
		}
		time.Sleep(200 * time.Millisecond)
	}()
}

// A follower refuses what a shard 0 should never send, and a start instant already past.
func TestFollowerRefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"late start", []string{fmt.Sprintf(`{"v":1,"type":"start","start_unix_ns":%d}`+"\n", time.Now().Add(-time.Second).UnixNano())}, "late, more than the plan's first gap (20ms)"},
		{"garbage", []string{"\x00garbage\n"}, "lost shard 0 before the start (not a rendezvous message"},
		{"closed", nil, "shard 0 closed the connection before the start"},
		{"abort", []string{`{"v":1,"type":"abort","reason":"shard 3 left"}` + "\n"}, "shard 0 gave up: shard 3 left"},
		{"unexpected type", []string{`{"v":1,"type":"ready","index":0,"count":2,"plan_hash":"` + planA + `"}` + "\n"}, `shard 0 sent "ready"`},
		{"endless line", []string{strings.Repeat("y", MaxLine+1)}, "a line longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfgs := shards(t, 2, 3*time.Second)
			ln, _ := cfgs[0].Listen("")
			fakeLeader(t, ln, tc.lines...)
			_, err := Meet(cfgs[1], nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v, want %q", err, tc.want)
			}
		})
	}
}

func TestCheckAddr(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"r1-replay-0.r1-shards:7411", true}, {"127.0.0.1:7411", true}, {"[::1]:7411", true},
		{"host", false}, {"host:", false}, {"host:0", false}, {"host:70000", false}, {"host:http", false},
	} {
		if err := CheckAddr(tc.addr); (err == nil) != tc.ok {
			t.Errorf("%q: %v", tc.addr, err)
		}
	}
	if got := listenAddr("r1-replay-0.r1-shards:7411"); got != ":7411" {
		t.Errorf("listen address for a name: %q", got)
	}
	if got := listenAddr("10.0.0.5:7411"); got != "10.0.0.5:7411" {
		t.Errorf("listen address for an IP: %q", got)
	}
}

func FuzzParseMessage(f *testing.F) {
	f.Add([]byte(`{"v":1,"type":"ready","index":1,"count":2,"plan_hash":"` + planA + `"}`))
	f.Add([]byte(`{"v":1,"type":"start","start_unix_ns":1}`))
	f.Add([]byte(`{"v":1,"type":"abort","reason":"x"}`))
	f.Add([]byte(`{"v":1,"type":"pong","seq":3,"wall_ns":-5}`))
	f.Add([]byte(`{"v":2}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseMessage(b)
		if err != nil {
			return
		}
		// What parses, re-encodes and parses to the same message.
		m2, err := ParseMessage(encode(m))
		if err != nil || fmt.Sprint(m2) != fmt.Sprint(m) {
			t.Fatalf("%q: re-encoded %v, %v", b, m2, err)
		}
	})
}

// Many shards: all meet; and when most are missing, the lines list the first MaxListed and
// count the rest.
func TestMeetManyShards(t *testing.T) {
	cfgs := shards(t, 30, 20*time.Second)
	for i, o := range meet(cfgs, nil, nil) {
		if o.err != nil {
			t.Fatalf("shard %d: %v", i, o.err)
		}
	}
	cfgs = shards(t, 50, time.Second)
	out := meet(cfgs[:10], nil, nil)
	for i, o := range out {
		if o.err == nil || !strings.Contains(o.err.Error(), "shards 10, 11, 12") || !strings.Contains(o.err.Error(), ", 41 and 8 more of 50 did not arrive") {
			t.Errorf("shard %d: %v", i, o.err)
		}
	}
}
