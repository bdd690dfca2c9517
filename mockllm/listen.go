package mockllm

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"
)

// fdListener keeps accepting through file-descriptor exhaustion. When
// accept fails with EMFILE or ENFILE (each stream holds a descriptor, and
// a thousand streams can pass the limit), net/http would log one line per
// failed accept and retry; fdListener instead says so once, clearly, on
// its notice writer, waits (5 ms doubling to 1 s, as net/http does) and
// retries, so that the server serves again as soon as streams end and
// never spins or exits.
type fdListener struct {
	net.Listener
	notice io.Writer
	once   sync.Once
	sleep  func(time.Duration) // time.Sleep; tests shorten it
}

// GuardAccept wraps ln so that running out of file descriptors while
// accepting connections is reported once on notice (with the open-file
// limit when it is known) and waited out instead of logged per
// connection. Other accept errors are returned as they are.
func GuardAccept(ln net.Listener, notice io.Writer) net.Listener {
	return &fdListener{Listener: ln, notice: notice, sleep: time.Sleep}
}

// Accept waits for the next connection, waiting out descriptor exhaustion.
func (l *fdListener) Accept() (net.Conn, error) {
	var delay time.Duration
	for {
		c, err := l.Listener.Accept()
		if err == nil || !(errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)) {
			return c, err
		}
		l.once.Do(func() {
			fmt.Fprintf(l.notice, "mockllm: out of file descriptors accepting connections on %s (%v%s); "+
				"new connections wait until streams end; raise the limit (ulimit -n) to serve more at once. "+
				"Not reported again.\n", l.Addr(), err, fileLimitNote())
		})
		if delay == 0 {
			delay = 5 * time.Millisecond
		} else {
			delay = min(2*delay, time.Second)
		}
		l.sleep(delay)
	}
}
