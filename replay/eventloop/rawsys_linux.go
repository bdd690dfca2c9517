//go:build linux

package eventloop

import (
	"io"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The event loop's system calls on its non-blocking descriptors, made without telling the Go
// runtime (RawSyscall): none of them can block, and a call the runtime is told of wakes
// sysmon from its deep sleep whenever the worker's only P was idle, a thread switch on the
// worker's CPU on every wake-up (the note to #28).

// rawRead is read(2) on a non-blocking descriptor.
func rawRead(fd int, p []byte) (int, error) {
	var b unsafe.Pointer
	if len(p) > 0 {
		b = unsafe.Pointer(&p[0])
	}
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(b), uintptr(len(p)))
	if e != 0 {
		return -1, e
	}
	return int(n), nil
}

// rawWritev is writev(2) on a non-blocking socket.
func rawWritev(fd int, iov []unix.Iovec) (int, unix.Errno) {
	n, _, e := unix.RawSyscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)))
	return int(n), e
}

// rawEpollWaitNow returns the events of ep ready now, without blocking.
func rawEpollWaitNow(ep int, events []unix.EpollEvent) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// rawEpollCtl is epoll_ctl(2).
func rawEpollCtl(ep, op, fd int, ev *unix.EpollEvent) error {
	_, _, e := unix.RawSyscall6(unix.SYS_EPOLL_CTL, uintptr(ep), uintptr(op), uintptr(fd), uintptr(unsafe.Pointer(ev)), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// rawTimerfdSettime is timerfd_settime(2) with no old value.
func rawTimerfdSettime(fd, flags int, its *unix.ItimerSpec) error {
	_, _, e := unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, uintptr(fd), uintptr(flags), uintptr(unsafe.Pointer(its)), 0, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// rawSoError is getsockopt(SO_ERROR).
func rawSoError(fd int) (int, error) {
	var v int32
	l := uint32(4)
	_, _, e := unix.RawSyscall6(unix.SYS_GETSOCKOPT, uintptr(fd), unix.SOL_SOCKET, unix.SO_ERROR, uintptr(unsafe.Pointer(&v)), uintptr(unsafe.Pointer(&l)), 0)
	if e != 0 {
		return 0, e
	}
	return int(v), nil
}

// RawFileWriter returns f's write(2) made raw, for the log's flush from the event loop
// (the worker's log sink writes on the loop's thread); nil when f is not an *os.File
// (tests' failing files). Errors are what
// os.File.Write returns: a *os.PathError naming the file.
func RawFileWriter(f io.Writer) func([]byte) (int, error) {
	of, ok := f.(*os.File)
	if !ok {
		return nil
	}
	sc, err := of.SyscallConn()
	if err != nil {
		return nil
	}
	fd := -1
	if sc.Control(func(d uintptr) { fd = int(d) }) != nil || fd < 0 {
		return nil
	}
	name := of.Name()
	return func(p []byte) (int, error) {
		n := 0
		for n < len(p) {
			m, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&p[n])), uintptr(len(p)-n))
			switch {
			case e == unix.EINTR:
				continue
			case e != 0:
				return n, &os.PathError{Op: "write", Path: name, Err: e}
			case m == 0:
				return n, &os.PathError{Op: "write", Path: name, Err: io.ErrShortWrite}
			}
			n += int(m)
		}
		return n, nil
	}
}
