package mockllm

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

// ServeOptions say how the mockllm command serves: where to listen, the schedule log to
// write (a file path, "" for none), the tokenizer as given (for its errors) and its name (for
// the serving line), where the lines go, and Ready, told the address once it listens (tests;
// nil for none).
type ServeOptions struct {
	Addr          string
	ScheduleLog   string
	Tokenizer     string
	TokenizerName string
	Stderr        io.Writer
	Ready         func(addr string)
	// Traces, when its Endpoint is set, exports the request spans (--otlp-traces-endpoint,
	// tracing.go); they are flushed at shutdown.
	Traces TraceExport
}

// Serve serves o on so.Addr until ctx ends (Ctrl-C), then stops the streams at their next
// scheduled event and closes the connections. It returns the command's exit status: 0
// stopped, 1 serving or the schedule log failed, 2 bad input (said in one line).
func Serve(ctx context.Context, o Options, so ServeOptions) int {
	var sched *errWriter
	if so.ScheduleLog != "" {
		f, err := os.Create(so.ScheduleLog)
		if err != nil {
			fmt.Fprintf(so.Stderr, "mockllm: --schedule-log %s: %v\n", so.ScheduleLog, err)
			return 2
		}
		sched = &errWriter{w: f}
		o.ScheduleLog = sched
		defer f.Close()
	}
	if so.Traces.Endpoint != "" {
		tp, err := NewTracerProvider(context.Background(), so.Traces)
		if err != nil {
			fmt.Fprintf(so.Stderr, "mockllm: --otlp-traces-endpoint %s: %v\n", so.Traces.Endpoint, err)
			return 2
		}
		o.Tracer = tp
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := tp.Shutdown(sctx); err != nil { // flushes the batched spans
				fmt.Fprintf(so.Stderr, "mockllm: --otlp-traces-endpoint %s: %v\n", so.Traces.Endpoint, err)
			}
		}()
	}
	srv, err := New(o)
	if err != nil {
		fmt.Fprintf(so.Stderr, "mockllm: --tokenizer %s: %v\n", so.Tokenizer, err)
		return 2
	}
	// Each stream holds a file descriptor: take every one the hard limit allows.
	fdLimit, err := RaiseFileLimit()
	if err != nil {
		fmt.Fprintf(so.Stderr, "%v (serving with the lower limit)\n", err)
	}
	ln, err := net.Listen("tcp", so.Addr)
	if err != nil {
		fmt.Fprintf(so.Stderr, "mockllm: --addr %s: %v\n", so.Addr, err)
		return 2
	}
	ln = GuardAccept(ln, so.Stderr)
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(so.Stderr, "mockllm: serving on http://%s (tokenizer %s, ttft %v, itl %v, seed %d, open-file limit %d)\n",
		ln.Addr(), so.TokenizerName, o.TTFT, o.ITL, o.Seed, fdLimit)
	if so.Ready != nil {
		so.Ready(ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		fmt.Fprintf(so.Stderr, "mockllm: serving: %v\n", err)
		return 1
	case <-ctx.Done():
	}
	// Stop streams at their next scheduled event, then close connections.
	srv.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close()
	}
	if sched != nil && sched.err != nil {
		fmt.Fprintf(so.Stderr, "mockllm: --schedule-log %s: %v\n", so.ScheduleLog, sched.err)
		return 1
	}
	fmt.Fprintln(so.Stderr, "mockllm: stopped")
	return 0
}

// errWriter keeps the first write error of the schedule log, reported at exit.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(b []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(b)
	e.err = err
	return n, err
}
