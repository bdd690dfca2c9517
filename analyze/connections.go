package analyze

import "github.com/llmbench/llmbench/rawlog"

// ServerConnections is what the server did to the client's connections over the profile
// requests. A server that closes connections (llama.cpp after every streamed response, while
// announcing keep-alive) forces new ones; replay records each such request (rawlog
// reconnects, server_closed) and stops pooling a URL that does it after every response, and
// the verdict names it as the server's: it is never charged to the client (dispatch lag
// counts from the first attempt of a request the close made the client send again).
type ServerConnections struct {
	// Reconnects counts requests written on a reused connection the server had already
	// closed and sent again on a new one.
	Reconnects int64
	// ServerClosed counts the sent requests that went on a new connection because of the
	// server; Sent is all sent requests.
	ServerClosed, Sent int64
	// AfterEachResponse says the server closes every connection after its response: the
	// preflight saw it, or most requests went on new connections because of it.
	AfterEachResponse bool
}

// serverConnections gathers c's requests and the runs' preflights.
func (a *analysis) serverConnections(c *collector) ServerConnections {
	sc := ServerConnections{Reconnects: c.reconnects, ServerClosed: c.serverClosed, Sent: c.sent}
	for _, r := range a.in.runs {
		if p := r.Manifest.Preflight; p != nil {
			for _, t := range p.Targets {
				if t.Connection == rawlog.ConnClosesAfterResponse {
					sc.AfterEachResponse = true
				}
			}
		}
	}
	if sc.Sent > 0 && 2*sc.ServerClosed >= sc.Sent {
		sc.AfterEachResponse = true
	}
	return sc
}
