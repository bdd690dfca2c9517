// Package eventloop is the worker HTTP client on Linux's own event loop (--client loop, the
// default for http URLs). One goroutine runs all of a worker's sockets,
// drives its scheduler (package schedule) and keeps its deadlines: an edge-triggered epoll
// set holds every connection and one timerfd, armed at the earliest of the scheduler's next
// instant (a planned send, a ramp step, a think time, the duration's end) and the earliest
// request deadline, and re-armed only when that instant changed. The set itself is waited
// on through Go's poller (run). Each wake-up handles every ready socket, hands the requests
// that ended to the scheduler and sends what it then has due, with one clock read for the
// pass; each socket is read until the kernel has no more (a short read says so without the
// extra EAGAIN read), each read stamped with one clock read, straight into the request's
// own buffer, and parsed by the same http1.Parser the net client uses (conn_linux.go).
// The system calls on the loop's own descriptors are made raw (rawsys_linux.go). Nothing
// here switches goroutines or allocates per read: the Go scheduler only runs the log
// writer, the command reader and the progress ticker, while the loop is parked. Request
// semantics (HTTP/1.1, reuse strategies, stale-connection retry, timeouts, cancel-after,
// aborts, Sent records, outcomes) are the net client's, through the same shared driver and
// http1.
//
// It owns the epoll set, the timerfd, the connections and their deadline heap, and the raw
// system calls on them (rawsys_linux.go). It imports the shared driver (unit state, stop
// protocol, pacing, the worker's log), http1 (the wire) and golang.org/x/sys/unix, never
// replay or the net client. Elsewhere than Linux, New says it cannot run.
package eventloop
