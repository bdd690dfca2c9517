//go:build !linux

package driver

import (
	"errors"
	"net/netip"
)

// BindSource binds socket fd to source address a before it connects; only Linux has it.
func BindSource(fd uintptr, a netip.Addr) error {
	return errors.New("--local-addr is supported on Linux only")
}
