// Package receiver is a run's OTLP trace receiver: it listens for the server's spans over
// OTLP/gRPC and OTLP/HTTP (protobuf and JSON, POST /v1/traces) through the OpenTelemetry
// Collector's own otlpreceiver and pdata, keeps the spans of the run's traces (a span whose
// trace id no request of the run carried is dropped and counted, statelessly, through the
// run's tracectx.Key), writes each export request that kept any as one line of the
// server-traces file (package servertrace) and counts what it took in (rawlog.ServerTraces).
//
// Memory is bounded whatever arrives: an export request is at most MaxRequestBytes on the
// wire, nothing received is held after it is written, the file is capped at MaxBytes, and
// the only per-run state is one bit per planned request. It imports internal/tracectx,
// rawlog and servertrace, never replay or analyze.
package receiver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configgrpc"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/llmbench/llmbench/internal/tracectx"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/servertrace"
)

// Defaults of Options.
const (
	// DefaultMaxBytes caps the server-traces file (256 MiB).
	DefaultMaxBytes = 256 << 20
	// DefaultMaxRequestBytes caps one export request on the wire (4 MiB: vLLM's batches
	// of 512 spans take a few hundred KiB).
	DefaultMaxRequestBytes = 4 << 20
)

// Options configure a Receiver.
type Options struct {
	// GRPCAddr and HTTPAddr are the HOST:PORT the receiver listens on for OTLP/gRPC and
	// OTLP/HTTP; port 0 lets the system choose. At least one must be set.
	GRPCAddr, HTTPAddr string
	// Out receives the server-traces file's lines.
	Out io.Writer
	// MaxBytes caps what is written to Out (0: DefaultMaxBytes); spans past it are dropped
	// and counted.
	MaxBytes int64
	// MaxRequestBytes caps one export request (0: DefaultMaxRequestBytes); a larger one is
	// refused before it is decoded.
	MaxRequestBytes int64
	// Now is the receive clock (nil: time.Now).
	Now func() time.Time
}

// Receiver is a started receiver. Its methods are safe for concurrent use.
type Receiver struct {
	rcv                component.Component
	grpcAddr, httpAddr string
	now                func() time.Time
	maxBytes           int64

	// key is the run's trace key once SetKey was called: before, every span is of
	// another trace (no request of the run was sent yet).
	key atomic.Pointer[tracectx.Key]

	mu       sync.Mutex
	w        *servertrace.Writer
	counts   rawlog.ServerTraces
	seen     []uint64 // a bit per plan index with a kept span
	planned  uint32
	changed  chan struct{}
	writeErr error
	closed   bool
}

// Start binds the listeners and starts serving. The error says which address could not be
// bound.
func Start(o Options) (*Receiver, error) {
	if o.GRPCAddr == "" && o.HTTPAddr == "" {
		return nil, errors.New("trace receiver: no address to listen on")
	}
	if o.Out == nil {
		return nil, errors.New("trace receiver: no output")
	}
	r := &Receiver{now: o.Now, maxBytes: o.MaxBytes, w: servertrace.NewWriter(o.Out), changed: make(chan struct{})}
	if r.now == nil {
		r.now = time.Now
	}
	if r.maxBytes <= 0 {
		r.maxBytes = DefaultMaxBytes
	}
	maxReq := o.MaxRequestBytes
	if maxReq <= 0 {
		maxReq = DefaultMaxRequestBytes
	}
	r.counts.MaxBytes = r.maxBytes
	r.counts.Transports = map[string]rawlog.TraceTransportCounts{}

	f := otlpreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
	if o.GRPCAddr == "" {
		cfg.Protocols.GRPC = configoptional.None[configgrpc.ServerConfig]()
	} else {
		g := cfg.Protocols.GRPC.GetOrInsertDefault()
		g.NetAddr.Endpoint = o.GRPCAddr
		g.IncludeMetadata = true
		g.MaxRecvMsgSizeMiB = int(max(1, maxReq>>20))
	}
	if o.HTTPAddr == "" {
		cfg.Protocols.HTTP = configoptional.None[otlpreceiver.HTTPConfig]()
	} else {
		h := cfg.Protocols.HTTP.GetOrInsertDefault()
		h.ServerConfig.NetAddr.Endpoint = o.HTTPAddr
		h.ServerConfig.IncludeMetadata = true
		h.ServerConfig.MaxRequestBodySize = maxReq
	}
	addrs := &listenAddrs{}
	set := receiver.Settings{ID: component.NewID(f.Type()), BuildInfo: component.NewDefaultBuildInfo()}
	set.TelemetrySettings = component.TelemetrySettings{Logger: zap.New(addrs),
		TracerProvider: tracenoop.NewTracerProvider(), MeterProvider: metricnoop.NewMeterProvider(), Resource: pcommon.NewResource()}
	next, err := consumer.NewTraces(r.consume)
	if err != nil {
		return nil, fmt.Errorf("trace receiver: %w", err)
	}
	rcv, err := f.CreateTraces(context.Background(), set, cfg, next)
	if err != nil {
		return nil, fmt.Errorf("trace receiver: %w", err)
	}
	if err := rcv.Start(context.Background(), nopHost{}); err != nil {
		return nil, fmt.Errorf("trace receiver: %s", oneLine(err))
	}
	r.rcv = rcv
	r.grpcAddr, r.httpAddr = addrs.get()
	r.counts.GRPCEndpoint, r.counts.HTTPEndpoint = r.grpcAddr, r.httpAddr
	return r, nil
}

// Addrs are the addresses the receiver listens on ("" for a transport it does not serve).
func (r *Receiver) Addrs() (grpcAddr, httpAddr string) { return r.grpcAddr, r.httpAddr }

// SetKey starts keeping the spans of key's traces whose plan index is below planned. Spans
// received before are of no request of the run (none was sent) and were dropped.
func (r *Receiver) SetKey(key tracectx.Key, planned uint32) {
	r.mu.Lock()
	r.planned = planned
	r.seen = make([]uint64, (int(planned)+63)/64)
	r.mu.Unlock()
	r.key.Store(&key)
}

// RequestsWithSpans is how many of the run's requests have a kept span so far, and a
// channel closed when that changes.
func (r *Receiver) RequestsWithSpans() (int, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counts.RequestsWithSpans, r.changed
}

// Wait returns once want requests have spans, at deadline, or when stop closes, and says
// whether want was reached.
func (r *Receiver) Wait(want int, deadline time.Time, stop <-chan struct{}) bool {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	for {
		n, changed := r.RequestsWithSpans()
		if n >= want {
			return true
		}
		select {
		case <-changed:
		case <-t.C:
			return false
		case <-stop:
			return false
		}
	}
}

// ShutdownTimeout bounds how long Close waits for the export requests in progress: a
// client that never finishes its request must not hold the run's end.
const ShutdownTimeout = 5 * time.Second

// Close stops listening (export requests in progress are finished first, for at most
// ShutdownTimeout; what arrives after is dropped and counted) and returns the counts. The
// caller owns Out and flushes it after.
func (r *Receiver) Close() rawlog.ServerTraces {
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
		defer cancel()
		done <- r.rcv.Shutdown(ctx)
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(ShutdownTimeout + time.Second):
		err = fmt.Errorf("export requests still in progress after %v were abandoned", ShutdownTimeout)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	c := r.counts
	c.Transports = make(map[string]rawlog.TraceTransportCounts, len(r.counts.Transports))
	for k, v := range r.counts.Transports {
		c.Transports[k] = v
	}
	switch {
	case r.writeErr != nil:
		c.WriteError = oneLine(r.writeErr)
	case err != nil:
		c.WriteError = "shutdown: " + oneLine(err)
	}
	if c.BytesKept > 0 {
		c.File = servertrace.FileName
	}
	return c
}

// consume takes one decoded export request: it drops the spans of other traces, writes the
// rest as one line when the cap allows, and counts.
func (r *Receiver) consume(ctx context.Context, td ptrace.Traces) error {
	received := r.now()
	transport := transportOf(ctx)
	total := td.SpanCount()
	key := r.key.Load()
	var planned uint32
	if key != nil {
		r.mu.Lock()
		planned = r.planned
		r.mu.Unlock()
	}
	keep := func(id pcommon.TraceID) (uint32, bool) {
		if key == nil {
			return 0, false
		}
		i, ok := key.Index(id)
		return i, ok && i < planned
	}
	td.ResourceSpans().RemoveIf(func(rs ptrace.ResourceSpans) bool {
		rs.ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool {
			ss.Spans().RemoveIf(func(s ptrace.Span) bool {
				_, ok := keep(s.TraceID())
				return !ok
			})
			return ss.Spans().Len() == 0
		})
		return rs.ScopeSpans().Len() == 0
	})
	kept := td.SpanCount()

	r.mu.Lock()
	defer r.mu.Unlock()
	tc := r.counts.Transports[transport]
	tc.Requests++
	tc.Spans += int64(total)
	r.counts.Transports[transport] = tc
	r.counts.SpansReceived += int64(total)
	r.counts.SpansOtherTraces += int64(total - kept)
	if kept == 0 {
		return nil
	}
	if r.closed || r.writeErr != nil {
		r.counts.SpansDroppedOverCap += int64(kept)
		return nil
	}
	line, err := r.w.Encode(received, transport, td)
	if err == nil && r.counts.BytesKept+int64(len(line)) > r.maxBytes {
		r.counts.SpansDroppedOverCap += int64(kept)
		return nil
	}
	if err == nil {
		err = r.w.WriteEncoded(line)
	}
	if err != nil {
		r.writeErr = err
		r.counts.SpansDroppedOverCap += int64(kept)
		return nil
	}
	r.counts.BytesKept += int64(len(line))
	r.counts.SpansKept += int64(kept)
	before := r.counts.RequestsWithSpans
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				idx, _ := keep(spans.At(k).TraceID())
				if w, b := idx/64, uint64(1)<<(idx%64); r.seen[w]&b == 0 {
					r.seen[w] |= b
					r.counts.RequestsWithSpans++
				}
			}
		}
	}
	if r.counts.RequestsWithSpans != before {
		close(r.changed)
		r.changed = make(chan struct{})
	}
	return nil
}

// transportOf tells the transport of an export request from its client metadata (the
// receiver is configured to include it): gRPC's content type is application/grpc, OTLP/HTTP
// JSON's application/json, and OTLP/HTTP protobuf's application/x-protobuf.
func transportOf(ctx context.Context) string {
	ct := strings.ToLower(strings.Join(client.FromContext(ctx).Metadata.Get("content-type"), ","))
	switch {
	case strings.HasPrefix(ct, "application/grpc"):
		return servertrace.TransportGRPC
	case strings.HasPrefix(ct, "application/json"):
		return servertrace.TransportHTTPJSON
	}
	return servertrace.TransportHTTPProtobuf
}

// oneLine is err's text on one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// nopHost is the component.Host of a receiver run alone: no extensions.
type nopHost struct{}

func (nopHost) GetExtensions() map[component.ID]component.Component { return nil }

// listenAddrs is the receiver's logger: it keeps the addresses the Collector's otlpreceiver
// logs as it binds them (the system's choice for port 0) and drops every other entry, so
// a flood of bad requests logs nothing and keeps nothing.
type listenAddrs struct {
	mu         sync.Mutex
	grpc, http string
}

func (l *listenAddrs) get() (string, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.grpc, l.http
}

func (l *listenAddrs) Enabled(lvl zapcore.Level) bool    { return lvl == zapcore.InfoLevel }
func (l *listenAddrs) With([]zapcore.Field) zapcore.Core { return l }
func (l *listenAddrs) Sync() error                       { return nil }
func (l *listenAddrs) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if e.Level == zapcore.InfoLevel && strings.HasPrefix(e.Message, "Starting ") {
		return ce.AddCore(e, l)
	}
	return ce
}
func (l *listenAddrs) Write(e zapcore.Entry, fields []zapcore.Field) error {
	for _, f := range fields {
		if f.Key != "endpoint" {
			continue
		}
		l.mu.Lock()
		switch e.Message {
		case "Starting GRPC server":
			l.grpc = f.String
		case "Starting HTTP server":
			l.http = f.String
		}
		l.mu.Unlock()
	}
	return nil
}
