package mockllm

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// futexWaiter sleeps with FUTEX_WAIT's nanosecond timeout on a thread
// whose timer slack is 1 ns, so wakeups land within microseconds.
type futexWaiter struct{}

func newWaiter() waiter { return futexWaiter{} }

const (
	futexWait        = 0
	futexWake        = 1
	futexPrivateFlag = 128
)

func (futexWaiter) prepare() {
	// Best effort: without it the kernel's default 50 µs slack applies.
	// It stays set on the thread, which only makes the process's other
	// timed waits more precise.
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
}

func (futexWaiter) sleep(seq *uint32, old uint32, d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	// EINTR, EAGAIN (seq already moved) and ETIMEDOUT all mean "look again".
	_, _, _ = unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(seq)), futexWait|futexPrivateFlag,
		uintptr(old), uintptr(unsafe.Pointer(&ts)), 0, 0)
}

func (futexWaiter) wake(seq *uint32) {
	_, _, _ = unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(seq)), futexWake|futexPrivateFlag,
		1, 0, 0, 0)
}
