//go:build !linux

package replay

import (
	"errors"
)

// evloop is the event-loop client, which needs Linux (epoll, timerfd).
type evloop struct{}

func newEvloop(*worker) (*evloop, error) {
	return nil, errors.New("the event loop needs Linux")
}

func (*evloop) run() {}

// errTLSNet is never returned here: every run keeps the net client.
var errTLSNet = errors.New("TLS targets use the net client")

// rawFileWriter has no raw write to offer here (the event loop's, rawsys_linux.go).
func rawFileWriter(logFile) func([]byte) (int, error) { return nil }
