//go:build linux

package calibrate

import (
	"fmt"
	"slices"

	"github.com/llmbench/llmbench/rawlog"
	"golang.org/x/sys/unix"
)

// Self-calibration: before its first send, a worker measures on its own pinned CPU what the
// machine costs it at least, so analyze can tell a schedule lag the client caused from the
// one any process here would see (docs/metrics.md, the verdict). It takes about 50 ms.
const (
	// TimerSamples is how many timer wake-ups Machine measures.
	TimerSamples  = 120
	calTimerGapNs = 300_000 // each sleep: 300 µs
	calRTTSamples = 300
	calSyscalls   = 2000
)

// Machine measures timer wake-up lag, a loopback round trip and a bare system call.
func Machine() (*rawlog.Calibration, error) {
	c := &rawlog.Calibration{TimerSamples: TimerSamples}
	lags, err := timerLags(TimerSamples, calTimerGapNs)
	if err != nil {
		return nil, err
	}
	c.TimerLagP50Ns, c.TimerLagP99Ns, c.TimerLagMaxNs = sortedPct(lags, 50), sortedPct(lags, 99), lags[len(lags)-1]
	rtts, err := loopbackRTTs(calRTTSamples)
	if err != nil {
		return nil, err
	}
	c.LoopbackRTTP50Ns, c.LoopbackRTTP99Ns = sortedPct(rtts, 50), sortedPct(rtts, 99)
	c.SyscallNs = syscallCost(calSyscalls)
	return c, nil
}

// sortedPct is the p-th percentile (nearest rank) of sorted s.
func sortedPct(s []int64, p int) int64 {
	i := (len(s)*p + 99) / 100
	return s[min(max(i-1, 0), len(s)-1)]
}

func monoNs() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// timerLags arms a timerfd n times, gap ahead each, and returns how late each wake-up came,
// sorted.
func timerLags(n int, gap int64) ([]int64, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("calibrate: timerfd_create: %w", err)
	}
	defer unix.Close(fd)
	var buf [8]byte
	lags := make([]int64, 0, n)
	for i := 0; i < n; i++ {
		at := monoNs() + gap
		its := unix.ItimerSpec{Value: unix.NsecToTimespec(at)}
		if err := unix.TimerfdSettime(fd, unix.TFD_TIMER_ABSTIME, &its, nil); err != nil {
			return nil, fmt.Errorf("calibrate: timerfd_settime: %w", err)
		}
		if _, err := unix.Read(fd, buf[:]); err != nil {
			return nil, fmt.Errorf("calibrate: timerfd read: %w", err)
		}
		lags = append(lags, monoNs()-at)
	}
	slices.Sort(lags)
	return lags, nil
}

// loopbackRTTs bounces one byte n times over a loopback TCP connection on this thread and
// returns each round trip, sorted.
func loopbackRTTs(n int) ([]int64, error) {
	ls, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("calibrate: socket: %w", err)
	}
	defer unix.Close(ls)
	lo := &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}
	if err := unix.Bind(ls, lo); err != nil {
		return nil, fmt.Errorf("calibrate: bind: %w", err)
	}
	if err := unix.Listen(ls, 1); err != nil {
		return nil, fmt.Errorf("calibrate: listen: %w", err)
	}
	sa, err := unix.Getsockname(ls)
	if err != nil {
		return nil, fmt.Errorf("calibrate: getsockname: %w", err)
	}
	cs, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("calibrate: socket: %w", err)
	}
	defer unix.Close(cs)
	unix.SetsockoptInt(cs, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	if err := unix.Connect(cs, sa); err != nil {
		return nil, fmt.Errorf("calibrate: connect: %w", err)
	}
	ss, _, err := unix.Accept4(ls, unix.SOCK_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("calibrate: accept: %w", err)
	}
	defer unix.Close(ss)
	unix.SetsockoptInt(ss, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	b := []byte{1}
	rtts := make([]int64, 0, n)
	for i := 0; i < n; i++ {
		t0 := monoNs()
		if _, err := unix.Write(cs, b); err != nil {
			return nil, fmt.Errorf("calibrate: write: %w", err)
		}
		if _, err := unix.Read(ss, b); err != nil {
			return nil, fmt.Errorf("calibrate: read: %w", err)
		}
		if _, err := unix.Write(ss, b); err != nil {
			return nil, fmt.Errorf("calibrate: write: %w", err)
		}
		if _, err := unix.Read(cs, b); err != nil {
			return nil, fmt.Errorf("calibrate: read: %w", err)
		}
		rtts = append(rtts, monoNs()-t0)
	}
	slices.Sort(rtts)
	return rtts, nil
}

// syscallCost is the median time of one getppid over n calls, in batches of 100.
func syscallCost(n int) int64 {
	var per []int64
	for i := 0; i < n; i += 100 {
		t0 := monoNs()
		for k := 0; k < 100; k++ {
			unix.Getppid()
		}
		per = append(per, (monoNs()-t0)/100)
	}
	slices.Sort(per)
	return sortedPct(per, 50)
}
