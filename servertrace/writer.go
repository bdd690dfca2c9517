package servertrace

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Writer writes server_traces.jsonl: one Line per export request, its traces in OTLP JSON
// as the Collector's ptrace.JSONMarshaler writes them. It is not safe for concurrent use.
type Writer struct {
	w   io.Writer
	m   ptrace.JSONMarshaler
	buf []byte
}

// NewWriter writes lines to w (a run directory's FileName, or any file).
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Encode renders the line of td, received at received over transport, newline included,
// without writing it: a caller that caps what it keeps checks its length first.
func (w *Writer) Encode(received time.Time, transport string, td ptrace.Traces) ([]byte, error) {
	traces, err := w.m.MarshalTraces(td)
	if err != nil {
		return nil, fmt.Errorf("server traces: OTLP JSON: %w", err)
	}
	line, err := json.Marshal(Line{FormatVersion: FormatVersion, ReceivedUnixNs: received.UnixNano(),
		Transport: transport, Traces: traces})
	if err != nil {
		return nil, fmt.Errorf("server traces: %w", err)
	}
	w.buf = append(append(w.buf[:0], line...), '\n')
	return w.buf, nil
}

// WriteEncoded writes a line Encode returned.
func (w *Writer) WriteEncoded(line []byte) error {
	if _, err := w.w.Write(line); err != nil {
		return fmt.Errorf("server traces: %w", err)
	}
	return nil
}

// Write writes the line of td, received at received over transport.
func (w *Writer) Write(received time.Time, transport string, td ptrace.Traces) error {
	line, err := w.Encode(received, transport, td)
	if err != nil {
		return err
	}
	return w.WriteEncoded(line)
}
