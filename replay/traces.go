package replay

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/llmbench/llmbench/internal/tracectx"
	"github.com/llmbench/llmbench/servertrace"
	"github.com/llmbench/llmbench/servertrace/receiver"
)

// The run's W3C trace context and its OTLP trace receiver (package servertrace/receiver),
// in the coordinator, off the workers' CPUs: every request carries a traceparent derived
// from the run's key and its plan index (internal/tracectx); the receiver listens from
// before the preflight to the last response plus TraceGrace, or less once every completed
// request has its span, and keeps the spans of the run's traces in server_traces.jsonl.

// The --traceparent values.
const (
	TraceparentAuto = "auto" // on when a trace receiver listens (TraceReceiver)
	TraceparentOn   = "on"   // on, for a server exporting to the user's own collector
	TraceparentOff  = "off"
)

// DefaultTraceGrace is how long the receiver waits after the last response for spans:
// twice vLLM's BatchSpanProcessor delay (OTEL_BSP_SCHEDULE_DELAY, 5 s).
const DefaultTraceGrace = 10 * time.Second

// normalizeTraces checks the trace options and fills their defaults: the mode, the HTTP
// address (the gRPC port plus one, as OTLP's 4317 and 4318), the grace and the cap.
func (o *Options) normalizeTraces() error {
	switch o.Traceparent {
	case "":
		o.Traceparent = TraceparentAuto
	case TraceparentAuto, TraceparentOn, TraceparentOff:
	default:
		return fmt.Errorf("--traceparent %q: want auto, on or off", o.Traceparent)
	}
	if o.TraceReceiver == "" {
		if o.TraceReceiverHTTP != "" {
			return fmt.Errorf("--trace-receiver-http %s: needs --trace-receiver", o.TraceReceiverHTTP)
		}
		return nil
	}
	host, port, err := splitListen("trace-receiver", o.TraceReceiver)
	if err != nil {
		return err
	}
	if o.TraceReceiverHTTP == "" {
		hp := 0
		if port != 0 {
			if port == 65535 {
				return fmt.Errorf("--trace-receiver %s: port 65535 leaves no next port for OTLP/HTTP: give --trace-receiver-http", o.TraceReceiver)
			}
			hp = port + 1
		}
		o.TraceReceiverHTTP = net.JoinHostPort(host, strconv.Itoa(hp))
	} else if _, _, err := splitListen("trace-receiver-http", o.TraceReceiverHTTP); err != nil {
		return err
	}
	if o.TraceGrace == 0 {
		o.TraceGrace = DefaultTraceGrace
	}
	if o.TraceGrace < 0 {
		return fmt.Errorf("--trace-receiver-grace %v: must not be negative", o.TraceGrace)
	}
	if o.TraceMaxBytes == 0 {
		o.TraceMaxBytes = receiver.DefaultMaxBytes
	}
	if o.TraceMaxBytes < 0 {
		return fmt.Errorf("--trace-receiver-max-bytes %d: must be positive", o.TraceMaxBytes)
	}
	return nil
}

// splitListen checks a HOST:PORT to listen on.
func splitListen(flag, addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("--%s %q: want HOST:PORT: %v", flag, addr, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("--%s %q: port must be a number from 0 to 65535", flag, addr)
	}
	return host, port, nil
}

// sendsTraceparent says whether the run's requests carry a traceparent.
func (o *Options) sendsTraceparent() bool {
	return o.Traceparent == TraceparentOn || (o.Traceparent != TraceparentOff && o.TraceReceiver != "")
}

// traceState is the coordinator's side of the trace context and receiver.
type traceState struct {
	rcv     *receiver.Receiver
	out     *traceFile
	key     tracectx.Key
	started bool // the run reached its start instant
	done    bool
}

// traceFile is server_traces.jsonl, opened once the run directory is the run's: the
// receiver writes nothing before the trace key is set, at the start instant.
type traceFile struct {
	mu sync.Mutex
	f  *os.File
	bw *bufio.Writer
}

func (t *traceFile) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.bw == nil {
		return 0, errors.New("server traces file not open")
	}
	return t.bw.Write(p)
}

func (t *traceFile) open(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	t.mu.Lock()
	t.f, t.bw = f, bufio.NewWriterSize(f, 256<<10)
	t.mu.Unlock()
	return nil
}

// close flushes and closes the file, and removes it when nothing was kept.
func (t *traceFile) close(empty bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.f == nil {
		return nil
	}
	err := t.bw.Flush()
	if cerr := t.f.Close(); err == nil {
		err = cerr
	}
	if empty {
		os.Remove(t.f.Name())
	}
	t.f, t.bw = nil, nil
	return err
}

// startTraceReceiver binds the receiver's ports, before anything is sent; an address that
// cannot be bound is the caller's bad input.
func (r *Replay) startTraceReceiver() error {
	o := &r.opts
	if o.TraceReceiver == "" {
		return nil
	}
	out := &traceFile{}
	rcv, err := receiver.Start(receiver.Options{GRPCAddr: o.TraceReceiver, HTTPAddr: o.TraceReceiverHTTP,
		Out: out, MaxBytes: o.TraceMaxBytes})
	if err != nil {
		return fmt.Errorf("--trace-receiver %s (OTLP/HTTP %s): %w", o.TraceReceiver, o.TraceReceiverHTTP, err)
	}
	r.tr.rcv, r.tr.out = rcv, out
	g, h := rcv.Addrs()
	r.notice(fmt.Sprintf("replay: trace receiver: OTLP/gRPC on %s, OTLP/HTTP on %s (POST /v1/traces)", g, h))
	return nil
}

// startTraces sets the run's trace key at the start instant: the workers derive the same
// (tracectx.NewKey of the plan's hash, the start and the run id: the shards of a distributed
// run share it), and the receiver starts keeping the spans of its traces.
func (r *Replay) startTraces(startNs int64) {
	o := &r.opts
	m := &r.manifest
	r.mu.Lock()
	m.Options["traceparent"] = o.Traceparent
	if o.TraceReceiver != "" {
		m.Options["trace_receiver"] = o.TraceReceiver
		m.Options["trace_receiver_http"] = o.TraceReceiverHTTP
		m.Options["trace_receiver_grace_seconds"] = o.TraceGrace.Seconds()
		m.Options["trace_receiver_max_bytes"] = o.TraceMaxBytes
	}
	r.mu.Unlock()
	r.tr.started = true
	if !o.sendsTraceparent() {
		return
	}
	r.tr.key = tracectx.NewKey(r.plan.HashHex(), startNs, o.RunID)
	r.mu.Lock()
	m.TraceKey = r.tr.key.String()
	r.mu.Unlock()
	if r.tr.rcv == nil {
		return
	}
	if err := r.tr.out.open(filepath.Join(r.dir, servertrace.FileName)); err != nil {
		r.notice("replay: no server traces: " + err.Error())
		return
	}
	r.tr.rcv.SetKey(r.tr.key, uint32(r.plan.Len()))
}

// finishTraces waits, after the last response, for the spans still to come (at most
// TraceGrace, less once every completed request has one, nothing on an abort), stops the
// receiver and records its counts in run.json, warning when spans are missing.
func (r *Replay) finishTraces() {
	o := &r.opts
	t := &r.tr
	if t.rcv == nil || t.done {
		return
	}
	t.done = true
	started := t.started
	m := &r.manifest
	want := m.Counts.Completed
	waitStart := time.Now()
	if started && !t.key.IsZero() && want > 0 {
		if n, _ := t.rcv.RequestsWithSpans(); n < want {
			r.notice(fmt.Sprintf("replay: waiting up to %v for the server's spans (%d of %d completed requests have one)", o.TraceGrace, n, want))
			t.rcv.Wait(want, waitStart.Add(o.TraceGrace), r.abortReq)
		}
	}
	c := t.rcv.Close()
	c.GraceSeconds = o.TraceGrace.Seconds()
	c.WaitedSeconds = time.Since(waitStart).Seconds()
	if err := t.out.close(c.BytesKept == 0); err != nil && c.WriteError == "" {
		c.WriteError = err.Error()
	}
	if c.WriteError != "" {
		r.notice("replay: server traces: " + c.WriteError)
	}
	r.mu.Lock()
	m.ServerTraces = &c
	r.mu.Unlock()
	if !started {
		return
	}
	switch {
	case c.SpansReceived == 0:
		r.notice(fmt.Sprintf("replay: warning: the trace receiver got no spans (OTLP/gRPC %s, OTLP/HTTP %s): is the server exporting to it (vLLM: --otlp-traces-endpoint)?", c.GRPCEndpoint, c.HTTPEndpoint))
	case c.SpansKept == 0 && c.SpansDroppedOverCap == 0:
		r.notice(fmt.Sprintf("replay: warning: the trace receiver got %d spans, none of this run's traces: does the server take the traceparent header as its spans' parent?", c.SpansReceived))
	case c.RequestsWithSpans < want:
		r.notice(fmt.Sprintf("replay: warning: %d of %d completed requests have no server span after %.1f s", want-c.RequestsWithSpans, want, c.WaitedSeconds))
	}
	if c.SpansDroppedOverCap > 0 {
		r.notice(fmt.Sprintf("replay: warning: %d spans of this run dropped: %s reached --trace-receiver-max-bytes %d", c.SpansDroppedOverCap, servertrace.FileName, c.MaxBytes))
	}
}
