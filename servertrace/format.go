// Package servertrace owns the server-traces file of a run directory: the OTLP trace export
// requests a run's trace receiver took in, each kept as received with the instant it arrived,
// and the reading of that file (and of the OpenTelemetry Collector's file exporter output,
// for `analyze --server-traces`) into spans keyed by trace id. Wire decoding goes through the
// Collector's pdata (ptrace) types, never a hand-written protobuf or JSON decoder. The
// writer is writer.go; the receiver that feeds it, sub-package receiver.
// It may import internal/ and rawlog, never replay or analyze.
package servertrace

import "encoding/json"

// FileName is the traces file's name in a run directory.
const FileName = "server_traces.jsonl"

// FormatVersion is the format_version each line carries; readers refuse others.
const FormatVersion = 1

// Transports a line's export request arrived over.
const (
	TransportGRPC         = "grpc"
	TransportHTTPProtobuf = "http/protobuf"
	TransportHTTPJSON     = "http/json"
)

// Line is one line of server_traces.jsonl: one OTLP ExportTraceServiceRequest as received
// (only spans of other runs' traces removed, and counted in run.json), in OTLP JSON as the
// Collector's ptrace.JSONMarshaler writes it.
type Line struct {
	FormatVersion int `json:"format_version"`
	// ReceivedUnixNs is the wall-clock instant the request was read off the wire.
	ReceivedUnixNs int64 `json:"received_unix_ns"`
	// Transport is TransportGRPC, TransportHTTPProtobuf or TransportHTTPJSON.
	Transport string `json:"transport"`
	// Traces is the request in OTLP JSON ({"resourceSpans": [...]}).
	Traces json.RawMessage `json:"traces"`
}
