//go:build !linux

package eventloop

import (
	"errors"
	"io"

	"github.com/llmbench/llmbench/replay/driver"
)

// Loop is the event-loop client, which needs Linux (epoll, timerfd).
type Loop struct{}

// New says the event loop cannot run here: every run keeps the net client.
func New(*driver.Worker) (*Loop, error) {
	return nil, errors.New("the event loop needs Linux")
}

// Run, Wake, Abort and Close are never called: New makes no Loop here.
func (*Loop) Run()   {}
func (*Loop) Wake()  {}
func (*Loop) Abort() {}
func (*Loop) Close() {}

// ErrTLS is never returned here: every run keeps the net client.
var ErrTLS = errors.New("TLS targets use the net client")

// RawFileWriter has no raw write to offer here (the event loop's, rawsys_linux.go).
func RawFileWriter(io.Writer) func([]byte) (int, error) { return nil }
