//go:build linux

package driver

import (
	"fmt"
	"net/netip"

	"golang.org/x/sys/unix"
)

// BindSource binds socket fd to source address a, port 0, before it connects. It sets
// IP_BIND_ADDRESS_NO_PORT first, so the kernel picks the port at connect time and one port
// serves several source addresses (and destinations). An event loop that makes its own
// sockets calls it with LocalAddrPicker.Next.
func BindSource(fd uintptr, a netip.Addr) error {
	// Best effort: kernels before 4.2 lack it, and bind then reserves a port per socket.
	unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_BIND_ADDRESS_NO_PORT, 1)
	var sa unix.Sockaddr
	if a.Is4() {
		sa = &unix.SockaddrInet4{Addr: a.As4()}
	} else {
		sa = &unix.SockaddrInet6{Addr: a.As16()}
	}
	if err := unix.Bind(int(fd), sa); err != nil {
		return fmt.Errorf("bind: %w", err)
	}
	return nil
}
