package replay

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay/schedule"
)

// controlObserver raises the concurrency gate once, after, through RunInfo.Control.
type controlObserver struct {
	after   time.Duration
	to      float64
	mu      sync.Mutex
	applied int64
	err     error
	done    chan struct{}
}

func (o *controlObserver) Start(info RunInfo) {
	go func() {
		defer close(o.done)
		time.Sleep(o.after)
		ns, err := info.Control(schedule.GateConcurrency, o.to)
		o.mu.Lock()
		o.applied, o.err = ns, err
		o.mu.Unlock()
	}()
}
func (o *controlObserver) Progress(sent, done, errs int64) {}
func (o *controlObserver) Finish()                         { <-o.done }

// The coordinator's control reaches every worker process: under a gate of 1 the plan's
// concurrency of 4 never runs more than one request at once; once raised to 4, more do.
func TestRunControlConcurrency(t *testing.T) {
	srv := newTestServer(t)
	ps := singleTurn(400, job{N: 3, ITLms: 10, Stream: true}, nil)
	ps.meta.Concurrency = 4
	ps.meta.DurationNs = int64(2500 * time.Millisecond)
	plan := ps.write(t, t.TempDir())
	o := testOptions(t, plan, srv.URL)
	o.Control = &Control{Variable: schedule.GateConcurrency, Value: 1}
	ob := &controlObserver{after: 900 * time.Millisecond, to: 4, done: make(chan struct{})}
	o.Observer = ob
	m := runReplay(t, o)
	if ob.err != nil {
		t.Fatal(ob.err)
	}
	recs := readRun(t, m, o.OutputDir)
	type span struct{ s, e int64 }
	var before, after []span
	for _, q := range recs {
		if q.Outcome != rawlog.OutcomeCompleted {
			continue
		}
		// Workers apply the change one after the other: ob.applied is the last of them, so
		// the new value holds from it on, and the old one until shortly before it.
		if q.WriteStartNs < ob.applied-int64(200*time.Millisecond) {
			before = append(before, span{q.WriteStartNs, q.EndNs})
		} else if q.WriteStartNs >= ob.applied {
			after = append(after, span{q.WriteStartNs, q.EndNs})
		}
	}
	most := func(sp []span, within []span) int {
		n := 0
		for _, a := range sp {
			k := 0
			for _, b := range within {
				if b.s <= a.s && a.s < b.e {
					k++
				}
			}
			n = max(n, k)
		}
		return n
	}
	if len(before) == 0 || len(after) == 0 {
		t.Fatalf("%d requests before the change at %d ns, %d after", len(before), ob.applied, len(after))
	}
	if n := most(before, before); n != 1 {
		t.Fatalf("under a gate of 1: %d requests at once", n)
	}
	if n := most(after, after); n < 2 || n > 4 {
		t.Fatalf("under a gate of 4 (plan 4): at most %d at once", n)
	}
}

// A control the plan has no ceiling for, or a distributed run, is refused before anything runs.
func TestControlRefused(t *testing.T) {
	ps := singleTurn(10, job{N: 1}, nil)
	ps.meta.Concurrency = 2
	plan := ps.write(t, t.TempDir())
	for _, tc := range []struct {
		c    Control
		want string
	}{
		{Control{schedule.GatePrefill, 1}, "prefill concurrency needs a plan with a prefill"},
		{Control{schedule.GateKeep, 0.5}, "request rate needs a plan with a request rate"},
		{Control{schedule.GateConcurrency, 0}, "at least 1"},
		{Control{schedule.GateUsers, 2}, "needs a user-centric plan"},
		{Control{"user", 2}, "unknown variable"},
	} {
		o := testOptions(t, plan, "http://127.0.0.1:1")
		o.Control = &tc.c
		_, err := New(o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.c, err, tc.want)
		}
	}
	// A user-centric plan of 3 users: more users than that are refused.
	uc := singleTurn(10, job{N: 1}, nil)
	uc.meta.TimingMode, uc.meta.OfferedRate, uc.meta.Spec = "user_centric", 4, map[string]any{"num-users": 3}
	o := testOptions(t, uc.write(t, t.TempDir()), "http://127.0.0.1:1")
	o.Control = &Control{schedule.GateUsers, 5}
	if _, err := New(o); err == nil || !strings.Contains(err.Error(), "only 3 users") {
		t.Errorf("users 5 of 3: error %v", err)
	}
	_ = mmapds.NoSendOffset
}
