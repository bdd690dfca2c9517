package http1

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"syscall"
	"time"
)

// Conn is what both clients know of one connection to a target, whatever carries it: the
// net client's net.Conn (NetConn) or the event loop's socket.
type Conn struct {
	Target int
	Used   bool // carried a request before
	Broken bool // must not be reused
	// Uses counts the responses it carried; IdleSinceNs is when the last one ended (run
	// clock): what ConnPolicy.ServerClosed judges a close by.
	Uses        int
	IdleSinceNs int64
}

// NetConn is a connection over Go's net package (Dial).
type NetConn struct {
	Conn
	NC net.Conn
	// raw is the TCP socket under NC (nil when unknown), and peek the function that looks
	// at it without reading (made once per connection, so a look allocates nothing).
	raw   syscall.RawConn
	peek  func(fd uintptr) bool
	ahead bool // what peek saw: bytes or the server's close
	pbuf  [1]byte
}

// Unsolicited reports whether bytes, or the server's close, came on c while it was idle:
// a response to no request (a hostile or broken server sending ahead), which the next
// request must not take for its own, or a connection the server has closed. Either way c
// is not to be reused. It costs one non-blocking system call and allocates nothing.
func (c *NetConn) Unsolicited() bool {
	if c.raw == nil {
		return false
	}
	c.NC.SetReadDeadline(time.Time{}) // a past deadline would refuse the look
	c.ahead = false
	if err := c.raw.Read(c.peek); err != nil {
		return true
	}
	return c.ahead
}

// Dial opens a connection to target t (number idx), with the TLS handshake for https,
// before deadline.
func Dial(ctx context.Context, d *net.Dialer, t *Target, idx int, deadline time.Time) (*NetConn, error) {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	nc, err := d.DialContext(ctx, "tcp", t.Addr)
	if err != nil {
		return nil, err
	}
	c := &NetConn{Conn: Conn{Target: idx}}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
		if raw, err := tc.SyscallConn(); err == nil {
			c.raw = raw
			c.peek = func(fd uintptr) bool {
				c.ahead = peekPending(fd, &c.pbuf)
				return true
			}
		}
	}
	if t.TLS != nil {
		tc := tls.Client(nc, t.TLS)
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, fmt.Errorf("TLS handshake: %w", err)
		}
		nc = tc
	}
	c.NC = nc
	return c, nil
}

// LongAgo is a deadline in the past: set on a connection, it cuts its blocked read or
// write now (an abort).
var LongAgo = time.Unix(1, 0)
