package replay

import (
	"fmt"
	"os"

	"github.com/llmbench/llmbench/replay/driver"
	"github.com/llmbench/llmbench/replay/eventloop"
	"github.com/llmbench/llmbench/replay/netclient"
)

// The choice of the worker's HTTP client (--client), between its two transports. Both send
// the same bytes, record the same reads and outcomes, and write the same raw log, over the
// same driver; they differ in how a worker's CPU is spent.
const (
	// ClientLoop runs each worker's sockets, schedule and deadlines on one event loop on one
	// locked OS thread (package eventloop): edge-triggered epoll, non-blocking connects, a
	// timerfd. Linux only, plain http only: a run with an https URL, or on another system,
	// keeps ClientNet and the worker says so on stderr.
	ClientLoop = "loop"
	// ClientNet is the goroutine-per-request client over Go's net package (package
	// netclient): one dispatcher drives the scheduler and a runner goroutine per request in
	// flight is parked on the runtime's poller.
	ClientNet = "net"
)

// DefaultClient is the client a run uses when Options.Client is empty.
var DefaultClient = ClientLoop

// checkClient resolves and checks a --client value.
func checkClient(c string) (string, error) {
	switch c {
	case "":
		return DefaultClient, nil
	case ClientLoop, ClientNet:
		return c, nil
	}
	return "", fmt.Errorf("client %q: want %s or %s", c, ClientLoop, ClientNet)
}

// newTransport makes worker w's HTTP client: the event loop when client (or, when it is "",
// DefaultClient) asks for it and it can run this run, else the net client. loop says which.
func newTransport(w *driver.Worker, client string) (tr driver.Transport, loop bool, err error) {
	if client == ClientLoop || client == "" && DefaultClient == ClientLoop {
		l, err := eventloop.New(w)
		if err == nil {
			return l, true, nil
		}
		if err != eventloop.ErrTLS {
			fmt.Fprintf(os.Stderr, "replay worker %d: --client loop: %v; using the net client\n", w.ID, err)
		}
	}
	c, err := netclient.New(w)
	if err != nil {
		return nil, false, err
	}
	return c, false, nil
}
