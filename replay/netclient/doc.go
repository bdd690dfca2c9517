// Package netclient is the worker HTTP client over Go's net package (--client net; the one
// for https URLs). One dispatcher drives the worker's scheduler (package
// schedule) and a pool of runner goroutines sends what it releases, one request each at a
// time, over Go's net package. The scheduler sits behind the dispatcher's lock and moves on
// two kinds of event: the dispatcher's timer (a timerfd in Go's poller) for planned
// instants, ramp steps, think times and the duration's end, and the end of a request, which
// the runner that sent it hands in itself. That runner then goes on with the first request
// the end made due, so a closed loop passes no message between goroutines per request.
//
// It owns the dispatcher, the runners and the pool of idle keep-alive connections. It
// imports the shared driver (unit state, stop protocol, pacing, the worker's log) and http1
// (the exchange on the wire), never replay or the event loop.
package netclient
