//go:build !linux

package mockllm

import (
	"sync/atomic"
	"time"
)

func newWaiter() waiter { return &goTimerWaiter{kick: make(chan struct{}, 1)} }

// goTimerWaiter is the portable waiter: correct, coarse.
type goTimerWaiter struct {
	kick chan struct{}
}

func (w *goTimerWaiter) prepare() {}

func (w *goTimerWaiter) sleep(seq *uint32, old uint32, d time.Duration) {
	if atomic.LoadUint32(seq) != old {
		return
	}
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-w.kick:
	}
	t.Stop()
}

func (w *goTimerWaiter) wake(*uint32) {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}
