//go:build !linux

package driver

import (
	"sync/atomic"
	"time"
)

// Sleeper falls back to Go timers where timerfd does not exist (millisecond precision).
type Sleeper struct {
	stop *atomic.Bool
	wake chan struct{}
}

func NewSleeper(stop *atomic.Bool) (*Sleeper, error) {
	return &Sleeper{stop: stop, wake: make(chan struct{}, 1)}, nil
}

func (s *Sleeper) Sleep(d time.Duration) bool {
	if d > 0 && !s.stop.Load() {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-s.wake:
			t.Stop()
		}
	}
	return !s.stop.Load()
}

func (s *Sleeper) Kick() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *Sleeper) Close() {}
