// Package http1 is the replay workers' HTTP/1.1 on the wire, shared by both clients (package
// netclient over Go's net package, package eventloop over its own epoll set): the request
// heads rendered once per URL and path (Target), the suffix rendered per request (Buffers),
// the response parsed incrementally from whatever pieces the socket returns without
// allocating (Parser, response.go), how an exchange ended (Result) and the text a failed one
// logs (FailText), what a connection has carried and whether the server closes after each
// response (Conn, ConnPolicy), and the blocking exchange over a net.Conn (Dial, Exchange).
//
// It owns no goroutine, no schedule and no log: a client calls it and timestamps each read
// before handing it over. It imports endpoint, internal/tracectx, rawlog and redact, and never replay, its
// schedule or either client package.
package http1
