package driver

import (
	"time"

	"github.com/llmbench/llmbench/replay/schedule"
)

// Waiting for a planned instant, the same rule in both transports: an open-loop send (the
// scheduler's NextWake says open) wakes SpinNs before its instant and spins the rest,
// trading the worker's CPU for a send closer to the instant; every other instant (a think
// time, a ramp step, the duration's end) is slept to. Sleeps use a timerfd (Sleeper, or the
// event loop's own in its epoll set), whose wake-up is nanosecond-armed, not Go's timers.

// WakeAt is when to wake for next, the scheduler's next instant (open: an open-loop send).
func (w *Worker) WakeAt(next int64, open bool) int64 {
	if open && next != schedule.Never {
		return next - w.SpinNs
	}
	return next
}

// SleepUntil waits on s until at, the scheduler's next instant (open: an open-loop send).
// It returns false when the run stopped.
func (w *Worker) SleepUntil(s *Sleeper, at int64, open bool) bool {
	spin := at - w.WakeAt(at, open)
	if d := at - w.Now(); d > spin {
		if !s.Sleep(time.Duration(d - spin)) {
			return false
		}
	}
	w.spin(at)
	return !w.Stop.Stopping()
}

// SpinTo spins until at when it is an open-loop instant no further than SpinNs after now,
// and returns the clock then; now itself when at is not one (the caller sleeps instead).
func (w *Worker) SpinTo(at int64, open bool, now int64) (int64, bool) {
	if !open || w.SpinNs <= 0 || at <= now || at-now > w.SpinNs {
		return now, false
	}
	return w.spin(at), true
}

// spin reads the clock until at or the run stops, and returns the last reading.
func (w *Worker) spin(at int64) int64 {
	now := w.Now()
	for now < at && !w.Stop.Stopping() {
		now = w.Now()
	}
	return now
}
