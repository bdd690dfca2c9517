package mockllm

import (
	"bufio"
	"net"
	"net/http"
)

// Quirks are departures of real servers from the APIs and from HTTP that a benchmark client
// has to notice and work around. Each is off by default and named after what it reproduces
// (docs/mockllm.md, Quirks), so that CI checks the client against them without the server.
type Quirks struct {
	// IgnoreMaxCompletionTokens reads a chat request's output limit from max_tokens only, as
	// llama.cpp's llama-server (b7588) does: max_completion_tokens is dropped without a word,
	// so the output runs to its natural length (--natural-tokens).
	IgnoreMaxCompletionTokens bool
	// CloseAfterResponse closes the connection right after each inference response (its
	// last chunk, or its Content-Length body), while every response announces
	// "Keep-Alive: timeout=5, max=100" and none says "Connection: close": what llama.cpp does
	// after its streamed responses. A client that pools the connection finds it dead at its
	// next request.
	CloseAfterResponse bool
	// NoMetrics answers GET /metrics with 501 and a JSON error saying how to turn metrics
	// on, as llama.cpp does when started without --metrics.
	NoMetrics bool
	// ContextTokens, when positive, is the context of one chat or completions request
	// (prompt and output): a stream that would run past it ends, once it is full, with
	// llama.cpp's error event {"error":{"code":500,"message":"Context size has been
	// exceeded.",...}} and no [DONE]; a non-streamed request gets a 500 with that error.
	// llama.cpp shares its context between the requests running at once (with c of them,
	// each gets about n_ctx/c); here each request has its own.
	ContextTokens int
}

// contextExceededError is llama.cpp's error when a request's output outgrows the context.
const contextExceededError = `{"error":{"code":500,"message":"Context size has been exceeded.","type":"server_error"}}`

// keepAliveHeader is what llama.cpp announces on every response, closing or not.
const keepAliveHeader = "timeout=5, max=100"

// noMetricsMessage is the 501's message under NoMetrics: the hint a client must pass on.
const noMetricsMessage = "mockllm: this server does not serve metrics (started with --no-metrics); start it without --no-metrics"

// hijackWatch remembers whether a handler took the connection over (dropConnection), so
// that closeAfterResponse leaves a connection alone that is no longer the server's.
type hijackWatch struct {
	http.ResponseWriter
	hijacked bool
}

// Hijack takes the connection over, as the wrapped writer does.
func (h *hijackWatch) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h.hijacked = true
	return http.NewResponseController(h.ResponseWriter).Hijack()
}

// Unwrap gives http.ResponseController the wrapped writer (Flush, deadlines).
func (h *hijackWatch) Unwrap() http.ResponseWriter { return h.ResponseWriter }

// closeAfterResponse ends the response the handler wrote to h (the final chunk when it was
// chunked) and closes the connection at once, without having said it would.
func closeAfterResponse(h *hijackWatch) {
	if h.hijacked {
		return
	}
	rc := http.NewResponseController(h.ResponseWriter)
	if rc.Flush() != nil {
		return
	}
	// Without a Content-Length the flushed head chose chunked framing (HTTP/1.1): the
	// terminating chunk is ours to write now.
	chunked := h.Header().Get("Content-Length") == ""
	conn, bw, err := rc.Hijack()
	if err != nil {
		return
	}
	if chunked {
		bw.WriteString("0\r\n\r\n")
	}
	bw.Flush()
	conn.Close()
}
