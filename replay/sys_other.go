//go:build !linux

package replay

import (
	"errors"
	"runtime"
	"sync/atomic"
	"time"
)

// sleeper falls back to Go timers where timerfd does not exist (millisecond precision).
type sleeper struct {
	stop *atomic.Bool
	wake chan struct{}
}

func newSleeper(stop *atomic.Bool) (*sleeper, error) {
	return &sleeper{stop: stop, wake: make(chan struct{}, 1)}, nil
}

func (s *sleeper) sleep(d time.Duration) bool {
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

func (s *sleeper) kick() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *sleeper) close() {}

func pinToCPU(cpu int) error { return errors.New("CPU pinning is only supported on Linux") }

func setAffinity(cpus []int) error { return nil }

func allowedCPUs() ([]int, error) {
	cpus := make([]int, runtime.NumCPU())
	for i := range cpus {
		cpus[i] = i
	}
	return cpus, nil
}

func cpuTime() (user, sys int64) { return -1, -1 }

func kernelRelease() string { return runtime.GOOS }

// peakRSS is this process's peak resident set size: unknown here.
func peakRSS() int64 { return 0 }
