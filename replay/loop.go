package replay

import "fmt"

// The worker's two HTTP clients (--client). Both send the same bytes, record the same reads
// and outcomes, and write the same raw log; they differ in how a worker's CPU is spent.
const (
	// ClientLoop runs each worker's sockets, schedule and deadlines on one event loop on one
	// locked OS thread (loop_linux.go): edge-triggered epoll, non-blocking connects, a
	// timerfd. Linux only, plain http only: a run with an https URL, or on another system,
	// keeps ClientNet and the worker says so on stderr.
	ClientLoop = "loop"
	// ClientNet is the goroutine-per-request client over Go's net package (client.go,
	// runner.go): one dispatcher drives the scheduler and a runner goroutine per request in
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
