package servermetrics

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// onIdleThread runs f, and returns when it has, on an OS thread of its own that the kernel
// runs only when a CPU has nothing else to do (SCHED_IDLE; nice 19 where that is refused):
// a worker that wakes takes the CPU back at once. The thread is never unlocked, so it ends
// with f's goroutine and its policy reaches no other goroutine (an unprivileged thread
// cannot raise it back). The main thread, which never ends, is not used.
func onIdleThread(f func()) {
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() == unix.Getpid() {
			// A goroutine started while this one holds the main thread runs elsewhere.
			go func() {
				onIdleThread(f)
				close(done)
			}()
			<-done
			runtime.UnlockOSThread()
			return
		}
		defer close(done)
		attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_IDLE}
		if err := unix.SchedSetAttr(0, &attr, 0); err != nil {
			unix.Setpriority(unix.PRIO_PROCESS, 0, 19) // who 0: this thread
		}
		f()
	}()
	<-done
}
