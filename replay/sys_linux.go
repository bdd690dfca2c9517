//go:build linux

package replay

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// sleeper waits until an instant with a timerfd registered with Go's network poller. Go's own
// timers wake through epoll_wait, whose timeout has millisecond granularity, so time.Sleep
// overshoots by up to a millisecond; a timerfd fires at its nanosecond deadline and wakes the
// parked goroutine like any readable socket, without spinning a CPU the worker's other
// goroutines need (a worker runs with GOMAXPROCS=1).
type sleeper struct {
	fd   int
	f    *os.File
	buf  [8]byte
	stop *atomic.Bool
}

// newSleeper returns a sleeper whose waits end early once stop is set and kick is called.
func newSleeper(stop *atomic.Bool) (*sleeper, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("timerfd_create: %w", err)
	}
	return &sleeper{fd: fd, f: os.NewFile(uintptr(fd), "timerfd"), stop: stop}, nil
}

// sleep waits d (relative). It returns false when the wait was cut short by stop.
func (s *sleeper) sleep(d time.Duration) bool {
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

// kick makes a pending or future sleep return at once; call it after setting stop.
func (s *sleeper) kick() {
	its := unix.ItimerSpec{Value: unix.Timespec{Nsec: 1}}
	unix.TimerfdSettime(s.fd, 0, &its, nil)
}

func (s *sleeper) close() { s.f.Close() }

// pinToCPU restricts every thread of the process to cpu. The calling goroutine is locked to
// its thread first; threads the runtime starts later inherit the mask from their creator.
func pinToCPU(cpu int) error {
	runtime.LockOSThread()
	var set unix.CPUSet
	set.Zero()
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("pin to CPU %d: sched_setaffinity: %w", cpu, err)
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return fmt.Errorf("pin to CPU %d: %w", cpu, err)
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, &set); err != nil && err != unix.ESRCH {
			return fmt.Errorf("pin thread %d to CPU %d: sched_setaffinity: %w", tid, cpu, err)
		}
	}
	return nil
}

// setAffinity restricts the calling process's threads to cpus (the coordinator keeps off the
// workers' CPUs when others are available).
func setAffinity(cpus []int) error {
	var set unix.CPUSet
	set.Zero()
	for _, c := range cpus {
		set.Set(c)
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		if tid, err := strconv.Atoi(t.Name()); err == nil {
			if err := unix.SchedSetaffinity(tid, &set); err != nil && err != unix.ESRCH {
				return err
			}
		}
	}
	return nil
}

// allowedCPUs returns the CPUs this process may run on.
func allowedCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	var cpus []int
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// cpuTime returns the process's user and system CPU time in nanoseconds.
func cpuTime() (user, sys int64) {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return -1, -1
	}
	return unix.TimevalToNsec(ru.Utime), unix.TimevalToNsec(ru.Stime)
}

// kernelRelease returns uname -r.
func kernelRelease() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}

// peakRSS is this process's peak resident set size (VmHWM of /proc/self/status), 0 when it
// cannot be read.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
