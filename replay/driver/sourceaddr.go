package driver

import (
	"fmt"
	"net"
	"net/netip"
	"sync/atomic"
	"syscall"
)

// LocalAddrPicker hands out source addresses round-robin. It is safe for concurrent use; a
// nil picker hands out none (the kernel chooses). Every dialer of a worker shares one.
type LocalAddrPicker struct {
	addrs []netip.Addr
	next  atomic.Uint64
}

// NewLocalAddrPicker returns a picker over addrs whose first pick is addrs[offset mod len]
// (workers start at their id, so several workers do not all begin on the first address), or
// nil when addrs is empty.
func NewLocalAddrPicker(addrs []netip.Addr, offset int) *LocalAddrPicker {
	if len(addrs) == 0 {
		return nil
	}
	p := &LocalAddrPicker{addrs: append([]netip.Addr(nil), addrs...)}
	p.next.Store(uint64(offset % len(addrs)))
	return p
}

// Len is the number of addresses (0 for a nil picker).
func (p *LocalAddrPicker) Len() int {
	if p == nil {
		return 0
	}
	return len(p.addrs)
}

// First is the first address (the zero Addr for a nil picker): all are of its family.
func (p *LocalAddrPicker) First() netip.Addr {
	if p.Len() == 0 {
		return netip.Addr{}
	}
	return p.addrs[0]
}

// Next returns the next source address; the zero Addr for a nil picker.
func (p *LocalAddrPicker) Next() netip.Addr {
	if p == nil {
		return netip.Addr{}
	}
	return p.addrs[(p.next.Add(1)-1)%uint64(len(p.addrs))]
}

// Control is a net.Dialer.Control function: it binds the socket about to connect to the next
// source address, port 0 with IP_BIND_ADDRESS_NO_PORT where the kernel has it. Go calls it
// after creating the socket and before connecting; the dialer's LocalAddr must stay nil.
func (p *LocalAddrPicker) Control(network, address string, c syscall.RawConn) error {
	a := p.Next()
	if !a.IsValid() {
		return nil
	}
	var err error
	if cerr := c.Control(func(fd uintptr) { err = BindSource(fd, a) }); cerr != nil {
		return cerr
	}
	if err != nil {
		return fmt.Errorf("local-addr %s (dialing %s): %w", a, address, err)
	}
	return nil
}

// Dialer returns base with its Control set to bind each connection to the picker's next
// address; base itself when the picker is nil.
func (p *LocalAddrPicker) Dialer(base net.Dialer) net.Dialer {
	if p.Len() == 0 {
		return base
	}
	base.Control = p.Control
	return base
}
