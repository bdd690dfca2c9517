//go:build linux

package driver

import (
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Sleeper waits until an instant with a timerfd registered with Go's network poller. Go's own
// timers wake through epoll_wait, whose timeout has millisecond granularity, so time.Sleep
// overshoots by up to a millisecond; a timerfd fires at its nanosecond deadline and wakes the
// parked goroutine like any readable socket, without spinning a CPU the worker's other
// goroutines need (a worker runs with GOMAXPROCS=1).
type Sleeper struct {
	fd   int
	f    *os.File
	buf  [8]byte
	stop *atomic.Bool
}

// NewSleeper returns a sleeper whose waits end early once stop is set and kick is called.
func NewSleeper(stop *atomic.Bool) (*Sleeper, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("timerfd_create: %w", err)
	}
	return &Sleeper{fd: fd, f: os.NewFile(uintptr(fd), "timerfd"), stop: stop}, nil
}

// Sleep waits d (relative). It returns false when the wait was cut short by stop.
func (s *Sleeper) Sleep(d time.Duration) bool {
	if d <= 0 {
		return !s.stop.Load()
	}
	its := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if err := unix.TimerfdSettime(s.fd, 0, &its, nil); err != nil {
		time.Sleep(d)
		return !s.stop.Load()
	}
	// A kick between arming and this check is not lost: kick re-arms the timer to fire now.
	if s.stop.Load() {
		return false
	}
	if _, err := s.f.Read(s.buf[:]); err != nil {
		time.Sleep(d)
	}
	return !s.stop.Load()
}

// Kick makes a pending or future sleep return at once; call it after setting stop.
func (s *Sleeper) Kick() {
	its := unix.ItimerSpec{Value: unix.Timespec{Nsec: 1}}
	unix.TimerfdSettime(s.fd, 0, &its, nil)
}

// Close releases the timerfd.
func (s *Sleeper) Close() { s.f.Close() }

// SleeperOn is a Sleeper over timerfd fd that another waits on (the event loop's, in its
// epoll set): its Kick fires the timer now, its Close closes fd.
func SleeperOn(fd int, stop *atomic.Bool) *Sleeper {
	return &Sleeper{fd: fd, f: os.NewFile(uintptr(fd), "timerfd"), stop: stop}
}
