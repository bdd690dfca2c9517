package cli

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/replay"
	"github.com/llmbench/llmbench/servertrace/receiver"
)

// traceFlags are the W3C trace context and OTLP trace receiver flags (#40), shared by
// replay and profile (through the replay flag set).
type traceFlags struct {
	traceparent *string
	grpc, http  *string
	grace       *time.Duration
	maxBytes    *int64
}

func addTraceFlags(fs *pflag.FlagSet) *traceFlags {
	f := &traceFlags{}
	f.traceparent = fs.String("traceparent", replay.TraceparentAuto, "send a W3C traceparent header on every request (trace id from the run and the request, run.json trace_key): auto (when --trace-receiver listens), on (for a server exporting to your own collector) or off")
	f.grpc = fs.String("trace-receiver", "", "listen on HOST:PORT for the server's OTLP/gRPC spans during the run, plus OTLP/HTTP (protobuf and JSON, POST /v1/traces) on the next port; keeps this run's spans in server_traces.jsonl (e.g. 0.0.0.0:4317; port 0: any free port)")
	f.http = fs.String("trace-receiver-http", "", "HOST:PORT for the receiver's OTLP/HTTP (default: --trace-receiver's host and port plus one)")
	f.grace = fs.Duration("trace-receiver-grace", replay.DefaultTraceGrace, "how long the receiver waits for spans after the last response (batching exporters send every few seconds); ends sooner once every completed request has its span")
	f.maxBytes = fs.Int64("trace-receiver-max-bytes", receiver.DefaultMaxBytes, "most bytes of server_traces.jsonl; this run's spans past it are dropped and counted in run.json")
	return f
}

// settings puts the flags into s's options, which replay checks.
func (f *traceFlags) settings(s *replay.Settings) {
	b := &s.Base
	b.Traceparent, b.TraceReceiver, b.TraceReceiverHTTP = *f.traceparent, *f.grpc, *f.http
	b.TraceGrace, b.TraceMaxBytes = *f.grace, *f.maxBytes
}
