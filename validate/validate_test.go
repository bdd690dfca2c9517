package validate

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/llmbench/llmbench/mmapds"
)

// writePlan writes a plan of sessions of turns, the first turn of session k planned at k·gap
// (NoSendOffset when gap is 0), with one warmup record first.
func writePlan(t *testing.T, path string, sessions, turns int, gap time.Duration, osl uint32) *mmapds.Plan {
	t.Helper()
	w, err := mmapds.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	add := func(r mmapds.Record) {
		if err := w.Add(r, []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)); err != nil {
			t.Fatal(err)
		}
	}
	add(mmapds.Record{Phase: mmapds.PhaseWarmup, Session: 0, SendOffsetNs: mmapds.NoSendOffset, DelayNs: -1, OSL: osl})
	for s := 1; s <= sessions; s++ {
		for k := 0; k < turns; k++ {
			r := mmapds.Record{Phase: mmapds.PhaseProfile, Session: uint32(s), Turn: uint32(k), OSL: osl, SendOffsetNs: mmapds.NoSendOffset, DelayNs: -1}
			if k == 0 && gap > 0 {
				r.SendOffsetNs = int64(s) * int64(gap)
			}
			if k > 0 {
				r.DelayNs = 0
			}
			add(r)
		}
	}
	timing := "concurrency"
	if gap > 0 {
		timing = "request_rate"
	}
	if _, err := w.Close(&mmapds.Meta{Endpoint: "chat", Paths: []string{"/v1/chat/completions"}, Method: "POST", Tokenizer: "builtin", TimingMode: timing, Concurrency: 2,
		WarmupCount: 1, ProfileCount: sessions * turns}); err != nil {
		t.Fatal(err)
	}
	p, err := mmapds.Open(path, mmapds.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// TestWriteSubPlan: the validation replays whole sessions from the first profile request,
// no warmup, within the request and time bounds, offsets from the first, sessions renumbered.
func TestWriteSubPlan(t *testing.T) {
	dir := t.TempDir()
	mock := mockConfig{ttft: 20 * time.Millisecond, itl: 5 * time.Millisecond}
	rate := writePlan(t, filepath.Join(dir, "rate.plan"), 100, 2, 100*time.Millisecond, 100)
	closed := writePlan(t, filepath.Join(dir, "closed.plan"), 100, 1, 0, 100)
	cases := []struct {
		name   string
		p      *mmapds.Plan
		maxReq int
		dur    time.Duration
		want   int
	}{
		{"time bound: 10 sessions in 0.95 s", rate, 0, 950 * time.Millisecond, 20},
		{"count bound stops at a session end", rate, 5, time.Hour, 6},
		{"closed loop: what 2 slots complete in 2 s at 520 ms a request, at least 4 per slot", closed, 0, 2 * time.Second, 8},
		{"closed loop, 30 s", closed, 0, 30 * time.Second, 100},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sub.plan")
			n, err := writeSubPlan(c.p, path, c.maxReq, c.dur, mock)
			if err != nil || n != c.want {
				t.Fatalf("writeSubPlan = %d, %v; want %d", n, err, c.want)
			}
			sub, err := mmapds.Open(path, mmapds.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Close()
			if err := sub.Validate(); err != nil || sub.Len() != n || sub.Meta().WarmupCount != 0 || sub.Meta().ProfileCount != n {
				t.Fatalf("sub-plan: %v, %d records, meta %+v", err, sub.Len(), sub.Meta())
			}
			for i := 0; i < sub.Len(); i++ {
				r, _, _ := sub.Record(i)
				orig, _, _ := c.p.Record(i + 1)
				if r.Phase != mmapds.PhaseProfile || r.Session != orig.Session-1 || r.Turn != orig.Turn {
					t.Fatalf("record %d: %+v (original %+v)", i, r, orig)
				}
				if orig.SendOffsetNs != mmapds.NoSendOffset && r.SendOffsetNs != orig.SendOffsetNs-int64(100*time.Millisecond) {
					t.Fatalf("record %d offset %d, original %d", i, r.SendOffsetNs, orig.SendOffsetNs)
				}
			}
		})
	}
}

// TestMockTiming: the default ITL is 1 s over the plan's mean requested output length,
// between 1 ms and 5 ms; --validate-itl wins.
func TestMockTiming(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		osl  uint32
		itl  time.Duration
		want time.Duration
	}{{100, 0, 5 * time.Millisecond}, {400, 0, 2500 * time.Microsecond}, {4000, 0, time.Millisecond}, {0, 0, 5 * time.Millisecond}, {400, 7 * time.Millisecond, 7 * time.Millisecond}} {
		p := writePlan(t, filepath.Join(dir, "p.plan"), 3, 1, 0, c.osl)
		if got := mockTiming(p, 20*time.Millisecond, c.itl); got.itl != c.want || got.ttft != 20*time.Millisecond {
			t.Errorf("osl %d itl %v: %+v, want itl %v", c.osl, c.itl, got, c.want)
		}
	}
}

// TestMockLog: the schedule log's lines (several in one write, a torn or foreign line skipped)
// give the mock's lateness and every request's write instants in Unix ns.
func TestMockLog(t *testing.T) {
	var l mockLog
	lines := `{"format_version":1,"seq":1,"stream":true,"correlation_id":"4","arrival_unix_ns":1000,"start_ns":0,"due_ns":[20000000,30000000],"sent_ns":[21000000,33000000],"fault":"none"}
not json
{"format_version":1,"seq":2,"stream":false,"correlation_id":"5","arrival_unix_ns":2000,"start_ns":0,"due_ns":[50000000],"sent_ns":[50000000],"fault":"none"}
`
	if n, err := l.Write([]byte(lines)); n != len(lines) || err != nil {
		t.Fatalf("write: %d %v", n, err)
	}
	ev := l.events()
	if len(ev) != 2 || ev[0].Correlation != "4" || ev[0].ArrivalUnixNs != 1000 || !slices.Equal(ev[0].SentUnixNs, []int64{21001000, 33001000}) ||
		ev[1].Correlation != "5" || !slices.Equal(ev[1].SentUnixNs, []int64{50002000}) {
		t.Errorf("events %+v", ev)
	}
	if p50, p99, ok := l.percentiles(); !ok || p50 != 1 || p99 != 3 {
		// Lateness 1, 3 and 0 ms (the unary request's too), nearest rank.
		t.Errorf("lateness p50 %v p99 %v ok %v", p50, p99, ok)
	}
}
