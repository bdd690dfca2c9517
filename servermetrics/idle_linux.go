package servermetrics

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// onIdleThread runs f on an OS thread of its own that the kernel runs only when a CPU has
// nothing else to do (SCHED_IDLE; nice 19 where that is refused): a worker that wakes takes
// the CPU back at once. The thread is never unlocked, so it ends with f's goroutine and its
// policy reaches no other goroutine (an unprivileged thread cannot raise it back). The main
// thread, which never ends, is not used: f then runs on a goroutine that cannot land there.
func onIdleThread(f func()) {
	runtime.LockOSThread()
	if unix.Gettid() == unix.Getpid() {
		done := make(chan struct{})
		go func() {
			defer close(done)
			onIdleThread(f)
		}()
		<-done
		runtime.UnlockOSThread()
		return
	}
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_IDLE}
	if err := unix.SchedSetAttr(0, &attr, 0); err != nil {
		unix.Setpriority(unix.PRIO_PROCESS, 0, 19) // who 0: this thread
	}
	f()
}
