package replay

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/llmbench/llmbench/rawlog"
)

// startFunc is a StartSource from a function.
type startFunc func(ready time.Time, stop <-chan struct{}) (time.Time, error)

func (f startFunc) StartInstant(ready time.Time, stop <-chan struct{}) (time.Time, error) {
	return f(ready, stop)
}

// The coordinator's start instant comes from its StartSource: the instant it returns is the
// run's t = 0 on every worker; its error fails the run with nothing sent; interrupted while
// it waits, the run ends interrupted with nothing sent.
func TestStartSource(t *testing.T) {
	srv := newTestServer(t)
	plan := singleTurn(4, job{N: 1, Stream: true}, func(i int) int64 { return int64(i) * 1e6 }).write(t, t.TempDir())
	run := func(src StartSource, stopWhileWaiting bool) (*rawlog.Manifest, map[uint32]rawlog.Request, error) {
		o := testOptions(t, plan, srv.URL)
		o.Start = src
		r, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		if stopWhileWaiting {
			go func() {
				time.Sleep(50 * time.Millisecond)
				r.Stop()
			}()
		}
		m, err := r.Run()
		if m == nil {
			t.Fatalf("no manifest: %v", err)
		}
		return m, readRunLoose(t, m, o.OutputDir), err
	}

	var at time.Time
	m, reqs, err := run(startFunc(func(ready time.Time, _ <-chan struct{}) (time.Time, error) {
		at = ready.Add(300 * time.Millisecond).Truncate(time.Millisecond)
		return at, nil
	}), false)
	if err != nil || m.StartUnixNs != at.UnixNano() || m.Counts.Completed != 4 {
		t.Fatalf("start %d, want %d; counts %+v, %v", m.StartUnixNs, at.UnixNano(), m.Counts, err)
	}
	for i, q := range reqs {
		if q.ReadyNs != q.IntendedNs || q.WriteStartNs < q.IntendedNs {
			t.Fatalf("request %d not sent at its instant after the chosen start: %s", i, brief(q))
		}
	}

	m, reqs, err = run(startFunc(func(time.Time, <-chan struct{}) (time.Time, error) {
		return time.Time{}, errors.New("shard 2 never arrived")
	}), false)
	if err == nil || !strings.Contains(err.Error(), "shard 2 never arrived") || m.Status != rawlog.StatusFailed || m.Counts.NotSent != 4 {
		t.Fatalf("failing source: %v, status %s, counts %+v", err, m.Status, m.Counts)
	}
	for i, q := range reqs {
		if q.Outcome != rawlog.OutcomeNotSent {
			t.Fatalf("request %d sent: %s", i, brief(q))
		}
	}

	m, _, err = run(startFunc(func(_ time.Time, stop <-chan struct{}) (time.Time, error) {
		<-stop
		return time.Time{}, ErrStartStopped
	}), true)
	if err != nil || m.Status != rawlog.StatusInterrupted || m.Counts.NotSent != 4 {
		t.Fatalf("stopped while waiting: %v, status %s, counts %+v", err, m.Status, m.Counts)
	}
}

// The default sources: StartDelay after the workers are ready, or StartAt unless it passed
// more than the plan's first gap ago.
func TestDefaultStartSources(t *testing.T) {
	ready := time.Unix(1000, 0)
	if got, _ := startAfter(200*time.Millisecond).StartInstant(ready, nil); !got.Equal(ready.Add(200 * time.Millisecond)) {
		t.Fatalf("start after: %v", got)
	}
	at := ready.Add(-time.Millisecond)
	if got, err := (startAt{at: at, lateGap: 2 * time.Millisecond}).StartInstant(ready, nil); err != nil || !got.Equal(at) {
		t.Fatalf("start at: %v %v", got, err)
	}
	if _, err := (startAt{at: at, lateGap: 0}).StartInstant(ready, nil); err == nil || !strings.Contains(err.Error(), "start-at") {
		t.Fatalf("late start accepted: %v", err)
	}
}
