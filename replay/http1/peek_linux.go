//go:build linux

package http1

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// peekPending reports whether socket fd has bytes to read, or the peer's close, without
// reading them (recv MSG_PEEK|MSG_DONTWAIT into buf); an error other than "nothing yet"
// counts as pending too (the connection is broken).
func peekPending(fd uintptr, buf *[1]byte) bool {
	_, _, e := unix.Syscall6(unix.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&buf[0])), 1, unix.MSG_PEEK|unix.MSG_DONTWAIT, 0, 0)
	return e != unix.EAGAIN && e != unix.EWOULDBLOCK && e != unix.EINTR
}
