package replay

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay/driver"
	"github.com/llmbench/llmbench/replay/schedule"
)

// multiTurnPlan is sessions of turns each, closed loop at concurrency c (open loop at
// 1 ms per session when c is 0).
func multiTurnPlan(sessions, turns, c int) *planSpec {
	ps := &planSpec{}
	ps.meta.Concurrency = c
	for s := 0; s < sessions; s++ {
		for turn := 0; turn < turns; turn++ {
			off, delay := mmapds.NoSendOffset, int64(-1)
			if c == 0 {
				off = int64(s) * 1e6
			}
			if turn > 0 {
				delay = 0
			}
			ps.add(mmapds.Record{SendOffsetNs: off, DelayNs: delay, Session: uint32(7000 + s), Turn: uint32(turn), Phase: mmapds.PhaseProfile},
				jobBody(job{N: 2, Stream: true}))
		}
	}
	return ps
}

// The shards of a plan are disjoint, whole sessions, cover the plan, and split the
// concurrency; worker sharding inside each shard keeps sessions whole too.
func TestDistributedShardsPartitionPlan(t *testing.T) {
	dir := t.TempDir()
	path := multiTurnPlan(10, 3, 5).write(t, dir)
	p, err := mmapds.Open(path, mmapds.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, n := range []int{1, 2, 3, 5} {
		owner := map[int]int{}            // plan index -> shard
		sessShard := map[uint32]int{}     // session -> shard
		sessWorker := map[uint32]string{} // session -> shard/worker
		slots := 0
		for i := 0; i < n; i++ {
			info, err := scanPlan(p)
			if err != nil {
				t.Fatal(err)
			}
			share, err := info.allot(p.Meta(), schedule.Part{Shard: i, Shards: n}, nil)
			if err != nil {
				t.Fatal(err)
			}
			slots += share.Concurrency
			const workers = 2
			total := 0
			for w := 0; w < workers; w++ {
				g, err := schedule.LoadChains(p, info.ord, workers, w)
				if err != nil {
					t.Fatal(err)
				}
				for n := int32(0); n < int32(g.Len()); n++ {
					idx := g.Node(n).Index
					r, _, _ := p.Record(int(idx))
					if prev, ok := owner[int(idx)]; ok {
						t.Fatalf("n=%d: record %d in shards %d and %d", n, idx, prev, i)
					}
					owner[int(idx)] = i
					if s, ok := sessShard[r.Session]; ok && s != i {
						t.Fatalf("n=%d: session %d split over shards %d and %d", n, r.Session, s, i)
					}
					sessShard[r.Session] = i
					key := string(rune('0'+i)) + "/" + string(rune('0'+w))
					if s, ok := sessWorker[r.Session]; ok && s != key {
						t.Fatalf("n=%d: session %d split over %s and %s", n, r.Session, s, key)
					}
					sessWorker[r.Session] = key
				}
				total += g.Len()
			}
			if total != info.records() {
				t.Fatalf("n=%d shard %d: workers hold %d records, the shard %d", n, i, total, info.records())
			}
		}
		if len(owner) != p.Len() {
			t.Fatalf("n=%d: shards cover %d of %d records", n, len(owner), p.Len())
		}
		if slots != 5 {
			t.Fatalf("n=%d: shards' concurrency sums to %d, want 5", n, slots)
		}
	}
}

func TestDistributedShardRefusals(t *testing.T) {
	dir := t.TempDir()
	path := multiTurnPlan(4, 1, 3).write(t, dir)
	for _, tc := range []struct {
		name       string
		index, cnt int
		startAt    time.Time
		addrs      []netip.Addr
		want       string
	}{
		{"more shards than concurrency", 0, 4, time.Time{}, nil, "concurrency 3 cannot be split"},
		{"more shards than sessions", 0, 5, time.Time{}, nil, "only 4 sessions"},
		{"index out of range", 3, 3, time.Time{}, nil, "between 0 and shard-count-1 (2)"},
		{"index without count", 1, 0, time.Time{}, nil, "without --shard-count"},
		{"late start", 0, 2, time.Now().Add(-time.Second), nil, "more than the plan's first gap (0s)"},
		{"start in 2099", 0, 2, time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC), nil, "start-at 2099-01-01T00:00:00Z is 26"},
		{"start past the nanosecond clock", 0, 0, time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), nil, "is over 292 years from now, more than the 24h0m0s a start may be ahead"},
		{"foreign source address", 0, 0, time.Time{}, []netip.Addr{netip.MustParseAddr("192.0.2.77")}, "local-addr 192.0.2.77: this host cannot use it"},
		{"rendezvous and start-at", 0, 2, time.Now().Add(time.Hour), nil, "rendezvous 127.0.0.1:7411 and start-at: the rendezvous picks the start instant"},
		{"rendezvous without shards", 0, 0, time.Time{}, nil, "rendezvous 127.0.0.1:7411: needs the shard identity"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := testOptions(t, path, "http://127.0.0.1:1")
			o.ShardIndex, o.ShardCount, o.StartAt, o.LocalAddrs = tc.index, tc.cnt, tc.startAt, tc.addrs
			if strings.HasPrefix(tc.name, "rendezvous") {
				o.Rendezvous = "127.0.0.1:7411"
			}
			r, err := New(o)
			if err == nil {
				r.plan.Close()
				t.Fatal("New accepted it")
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q, want one line with %q", err, tc.want)
			}
		})
	}
}

func TestFirstGap(t *testing.T) {
	for _, tc := range []struct {
		offsets []int64
		want    time.Duration
	}{
		{[]int64{mmapds.NoSendOffset, mmapds.NoSendOffset}, 0},
		{[]int64{5e6, 5e6}, 0},
		{[]int64{0, 0, 3e6, 1e6}, time.Millisecond},
		{[]int64{7e6, 2e6, 9e6}, 5 * time.Millisecond},
	} {
		ps := &planSpec{}
		for i, o := range tc.offsets {
			ps.add(mmapds.Record{SendOffsetNs: o, DelayNs: -1, Session: uint32(i), Phase: mmapds.PhaseProfile}, []byte("{}"))
		}
		if tc.offsets[0] < 0 {
			ps.meta.Concurrency = 1
		}
		p, err := mmapds.Open(ps.write(t, t.TempDir()), mmapds.Options{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := firstGap(p)
		p.Close()
		if err != nil || got != tc.want {
			t.Fatalf("offsets %v: gap %v, %v; want %v", tc.offsets, got, err, tc.want)
		}
	}
	at := time.Unix(1000, 0)
	if err := checkLateStart(at, at.Add(time.Millisecond), 2*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := checkLateStart(at, at.Add(3*time.Millisecond), 2*time.Millisecond); err == nil {
		t.Fatal("3 ms late with a 2 ms gap accepted")
	}
}

func TestParseLocalAddrs(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "127.0.0.2-127.0.0.5", want: "127.0.0.2-127.0.0.5"},
		{in: "127.0.0.9, 10.0.0.1,127.0.0.2-127.0.0.3", want: "127.0.0.9,10.0.0.1,127.0.0.2-127.0.0.3"},
		{in: "::1", want: "::1"},
		{in: "fd00::1-fd00::3", want: "fd00::1-fd00::3"},
		{in: "127.0.0.5-127.0.0.2", err: "runs backwards"},
		{in: "127.0.0.1-::1", err: "mixes IPv4 and IPv6"},
		{in: "127.0.0.1,127.0.0.1", err: "listed twice"},
		{in: "localhost", err: "not an IP address"},
		{in: "10.0.0.0-10.2.0.0", err: "more than 65536"},
		{in: "", err: "empty item"},
	} {
		got, err := ParseLocalAddrs(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || FormatLocalAddrs(got) != tc.want {
			t.Fatalf("%q: %v %v, want %s", tc.in, FormatLocalAddrs(got), err, tc.want)
		}
	}
}

// Connections through a picker come from its addresses in turn.
func TestLocalAddrPickerDials(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addrs, _ := ParseLocalAddrs("127.0.0.2-127.0.0.4")
	if err := checkLocalAddrs(addrs); err != nil {
		t.Skipf("loopback aliases not usable here: %v", err)
	}
	d := driver.NewLocalAddrPicker(addrs, 1).Dialer(net.Dialer{Timeout: 5 * time.Second})
	var got []string
	for i := 0; i < 6; i++ {
		c, err := d.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		s, _ := ln.Accept()
		got = append(got, c.LocalAddr().(*net.TCPAddr).IP.String())
		c.Close()
		s.Close()
	}
	want := "127.0.0.3 127.0.0.4 127.0.0.2 127.0.0.3 127.0.0.4 127.0.0.2"
	if strings.Join(got, " ") != want {
		t.Fatalf("source addresses %v, want %s", got, want)
	}
	var nilPicker *driver.LocalAddrPicker
	if nilPicker.Next().IsValid() || nilPicker.Len() != 0 {
		t.Fatal("nil picker hands out an address")
	}
}

// Three shards run as three coordinators against one start instant: every request once,
// run.json says which shard and when, and the shards' starts are the instant.
func TestDistributedRunsShareStart(t *testing.T) {
	srv := newTestServer(t)
	srv.keep = true
	ps := multiTurnPlan(9, 2, 0)
	dir := t.TempDir()
	plan := ps.write(t, dir)
	start := time.Now().Add(3 * time.Second) // over startNoticeAfter ahead, even on a loaded machine
	total := map[uint32]int{}
	for i := 0; i < 3; i++ {
		o := testOptions(t, plan, srv.URL)
		o.ShardIndex, o.ShardCount, o.StartAt, o.RunID, o.Workers = i, 3, start, "r1", 1
		var notices strings.Builder
		o.Notice = &notices
		m := runReplay(t, o)
		if m.Status != rawlog.StatusComplete || m.Counts.Planned != 6 || m.Counts.Completed != 6 {
			t.Fatalf("shard %d: %s %+v %s", i, m.Status, m.Counts, m.Error)
		}
		if m.Shard == nil || m.Shard.Index != i || m.Shard.Count != 3 || m.Shard.RunID != "r1" ||
			m.Shard.StartAtUnixNs != start.UnixNano() || m.StartUnixNs != start.UnixNano() {
			t.Fatalf("shard %d: run.json shard %+v start %d, want start %d", i, m.Shard, m.StartUnixNs, start.UnixNano())
		}
		if m.Shard.StartSkewNs < 0 {
			t.Fatalf("shard %d: negative start skew %d", i, m.Shard.StartSkewNs)
		}
		// The first shard waited over a second for its instant, and said so, and until when.
		if i == 0 && (!strings.Contains(notices.String(), "replay's shard 0 of 3: waiting ") ||
			!strings.Contains(notices.String(), fmt.Sprintf(" for --start-at %s (", start.UTC().Format(time.RFC3339Nano)))) {
			t.Errorf("shard 0's notices %q do not say it waits for %s", notices.String(), start.UTC().Format(time.RFC3339Nano))
		}
		for idx := range readRun(t, m, o.OutputDir) {
			total[idx]++
		}
		// The shards run one after another here, each sharing the same instant: the next
		// one must not start after its first gap (1 ms), so they get instants of their own.
		start = time.Now().Add(2 * time.Second) // past a loaded machine's set-up time
	}
	if len(total) != 18 {
		t.Fatalf("shards logged %d distinct requests, want 18", len(total))
	}
}

// copy-plan copies a plan only when it is intact and the expected one; nothing is left
// behind otherwise.
func TestCopyPlan(t *testing.T) {
	dir := t.TempDir()
	src := multiTurnPlan(2, 1, 1).write(t, dir)
	p, err := mmapds.Open(src, mmapds.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hash := p.HashHex()
	p.Close()
	dst := filepath.Join(dir, "copy.plan")
	other := strings.Repeat("ab", 32)
	if err := CopyPlan(src, dst, other); err == nil || !strings.Contains(err.Error(), "not the expected") {
		t.Fatalf("wrong hash: %v", err)
	}
	if err := CopyPlan(src, dst, "xyz"); err == nil {
		t.Fatal("bad hash accepted")
	}
	b, _ := os.ReadFile(src)
	b[len(b)/2] ^= 1
	bad := filepath.Join(dir, "bad.plan")
	os.WriteFile(bad, b, 0o644)
	if err := CopyPlan(bad, dst, hash); err == nil {
		t.Fatal("a damaged plan was copied")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Fatalf("left behind: %v", entries)
	}
	if err := CopyPlan(src, dst, hash); err != nil {
		t.Fatal(err)
	}
	if c, _ := os.ReadFile(dst); !bytes.Equal(c, mustRead(t, src)) {
		t.Fatal("copy differs")
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// freePort returns a loopback address nobody listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Two shards meeting at a rendezvous start at one instant, after the later one got ready,
// and replay every request once; run.json records the rendezvous.
func TestRendezvousRunsShareStart(t *testing.T) {
	srv := newTestServer(t)
	ps := multiTurnPlan(6, 2, 0)
	dir := t.TempDir()
	plan := ps.write(t, dir)
	addr := freePort(t)
	ms := make([]*rawlog.Manifest, 2)
	errs := make([]error, 2)
	readyAfter := make([]time.Time, 2)
	outs := make([]string, 2)
	done := make(chan int)
	for i := range 2 {
		go func() {
			defer func() { done <- i }()
			if i == 1 {
				time.Sleep(time.Second) // shard 1 gets ready a second after shard 0
			}
			readyAfter[i] = time.Now()
			o := testOptions(t, plan, srv.URL)
			o.ShardIndex, o.ShardCount, o.Rendezvous, o.RunID, o.Workers = i, 2, addr, "r1", 1
			outs[i] = o.OutputDir
			r, err := New(o)
			if err != nil {
				errs[i] = err
				return
			}
			ms[i], errs[i] = r.Run()
		}()
	}
	<-done
	<-done
	total := map[uint32]int{}
	for i, m := range ms {
		if errs[i] != nil {
			t.Fatalf("shard %d: %v", i, errs[i])
		}
		if m.Status != rawlog.StatusComplete || m.Counts.Completed != 6 {
			t.Fatalf("shard %d: %s %+v %s", i, m.Status, m.Counts, m.Error)
		}
		rv := m.Shard.Rendezvous
		if rv == nil || rv.Addr != addr || rv.LeadNs < int64(50*time.Millisecond) || m.Shard.StartAtUnixNs != m.StartUnixNs {
			t.Fatalf("shard %d: run.json shard %+v rendezvous %+v", i, m.Shard, rv)
		}
		for idx := range readRun(t, m, outs[i]) {
			total[idx]++
		}
	}
	if ms[0].StartUnixNs != ms[1].StartUnixNs {
		t.Fatalf("starts %d and %d differ", ms[0].StartUnixNs, ms[1].StartUnixNs)
	}
	if start := time.Unix(0, ms[0].StartUnixNs); !start.After(readyAfter[1]) {
		t.Fatalf("start %v before shard 1 even began (%v)", start, readyAfter[1])
	}
	if len(total) != 12 || srv.requests.Load() != 12 {
		t.Fatalf("%d distinct requests logged, %d received, want 12", len(total), srv.requests.Load())
	}
}

// A shard alone at the rendezvous gives up after its timeout naming the missing shard:
// the run fails, every request is not sent, and the server received nothing.
func TestRendezvousLoneShard(t *testing.T) {
	srv := newTestServer(t)
	plan := multiTurnPlan(4, 1, 0).write(t, t.TempDir())
	for _, index := range []int{0, 1} {
		o := testOptions(t, plan, srv.URL)
		o.ShardIndex, o.ShardCount, o.Rendezvous, o.RendezvousTimeout, o.Workers = index, 2, freePort(t), 700*time.Millisecond, 1
		r, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		m, err := r.Run()
		missing := 1 - index
		want := fmt.Sprintf("shard %d of 2 did not arrive within 700ms", missing)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("shard %d: %v, want one line with %q", index, err, want)
		}
		if took := time.Since(t0); took > 30*time.Second {
			t.Errorf("shard %d gave up after %v", index, took)
		}
		if m.Status != rawlog.StatusFailed || m.Counts.NotSent != m.Counts.Planned || m.Counts.Planned != 2 {
			t.Errorf("shard %d: %s %+v", index, m.Status, m.Counts)
		}
	}
	if n := srv.requests.Load(); n != 0 {
		t.Fatalf("the server received %d requests", n)
	}
}
