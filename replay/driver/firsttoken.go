package driver

import (
	"github.com/llmbench/llmbench/endpoint"
)

// FirstToken finds, read by read, the first event of a streamed response that carries output
// (content or reasoning text: analyze's first token, AIPerf's TTFT), which ends the request's
// prefill (--prefill-concurrency). The server's headers and events without output (a
// role-only first chunk, usage, comments) do not count. It parses only until it finds one,
// and allocates nothing once its buffers have grown.
type FirstToken struct {
	ep  *endpoint.Endpoint
	sc  endpoint.SSEScanner
	d   endpoint.Delta
	fed int  // body bytes fed so far
	sse bool // the body is an event stream (decided on its first bytes)
}

// Reset prepares f for a new response of endpoint ep.
func (f *FirstToken) Reset(ep *endpoint.Endpoint) {
	f.ep, f.fed, f.sse = ep, 0, false
	f.sc.Reset()
	f.d.Reset()
}

// Feed takes the response body so far and reports whether an event with output has come. A
// body that is not an event stream never does: its end frees the slot.
func (f *FirstToken) Feed(body []byte) bool {
	if len(body) < f.fed { // the body started over (a retry on a fresh connection)
		f.Reset(f.ep)
	}
	if f.fed == 0 {
		if len(body) < len("data:") {
			return false // too little to tell a stream: wait for more
		}
		f.sse = looksLikeSSE(body)
	}
	if !f.sse || f.ep == nil {
		f.fed = len(body)
		return false
	}
	f.sc.Feed(body[f.fed:], 0)
	f.fed = len(body)
	for ev, ok := f.sc.Next(); ok; ev, ok = f.sc.Next() {
		if string(ev.Name) == "error" {
			continue
		}
		if f.ep.ParseEvent(ev.Data, &f.d) == nil && f.d.HasContent() {
			return true
		}
	}
	return false
}
