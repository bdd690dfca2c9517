package servertrace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Span is one span of a traces file, as the join with a run's requests needs it: its ids,
// name and kind, the server's clock instants (never trusted for the run's timeline, only
// to report a clock offset) and its attributes, raw.
type Span struct {
	TraceID      [16]byte
	SpanID       [8]byte
	ParentSpanID [8]byte
	// Name is the span's name (vLLM's is "llm_request"); Kind its kind in OTLP's words
	// ("Server", "Internal", ...).
	Name string
	Kind string
	// Service is the resource's service.name, "" when it has none.
	Service string
	// StartUnixNs and EndUnixNs are the span's instants on the server's clock.
	StartUnixNs, EndUnixNs int64
	// Attributes are the span's attributes, raw (values as pcommon.Value.AsRaw gives them).
	Attributes map[string]any
	// ReceivedUnixNs is when the run's receiver took the export request in (0 when the
	// file does not say: the Collector's file exporter output).
	ReceivedUnixNs int64
}

// Float returns the attribute key as a number: a double, or an integer, or a string
// holding a number; false when the span has no such attribute.
func (s *Span) Float(key string) (float64, bool) {
	switch v := s.Attributes[key].(type) {
	case float64:
		return v, true
	case int64:
		return float64(v), true
	case string: // a number some exporters send as a string
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		return f, err == nil
	}
	return 0, false
}

// Layouts Read recognises (ReadStats.Layout).
const (
	// LayoutRun is server_traces.jsonl: one Line per export request.
	LayoutRun = "server_traces.jsonl"
	// LayoutCollectorJSON is the Collector's file exporter with format json: one OTLP JSON
	// ExportTraceServiceRequest per line.
	LayoutCollectorJSON = "otlp-json"
	// LayoutCollectorProto is the file exporter with format proto (or with compression):
	// each export request after its length (4 bytes, big-endian), zstd-compressed or not.
	LayoutCollectorProto = "otlp-proto"
)

// ReadStats says what Read found.
type ReadStats struct {
	Layout   string // one of the Layout constants; "" for an empty file
	Requests int64  // export requests (lines or frames)
	Spans    int64  // spans in them
}

// maxRecord bounds one line or frame of a traces file.
const maxRecord = 256 << 20

var (
	gzipMagic = []byte{0x1f, 0x8b}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// Read reads a traces file from r (name says which, in errors): the run's
// server_traces.jsonl, or the OpenTelemetry Collector's file exporter output (format json
// or proto, compressed with zstd or not; the whole file may also be gzip or zstd
// compressed) and calls fn with each span, in file order. Decoding goes through the
// Collector's ptrace unmarshalers. An error names the file and the line (or frame) and
// stops the reading; so does an error of fn.
func Read(r io.Reader, name string, fn func(*Span) error) (ReadStats, error) {
	var st ReadStats
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(4)
	switch {
	case bytes.HasPrefix(head, gzipMagic):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return st, fmt.Errorf("%s: gzip: %v", name, err)
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, 64<<10)
	case bytes.HasPrefix(head, zstdMagic):
		zr, err := zstd.NewReader(br, zstd.WithDecoderMaxMemory(maxRecord))
		if err != nil {
			return st, fmt.Errorf("%s: zstd: %v", name, err)
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, 64<<10)
	}
	first, err := firstByte(br)
	if err == io.EOF {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("%s: %v", name, err)
	}
	d := decoder{fn: fn, st: &st}
	if first == '{' {
		return st, d.lines(br, name)
	}
	st.Layout = LayoutCollectorProto
	return st, d.frames(br, name)
}

// firstByte is the first byte that is not white space, left unread.
func firstByte(br *bufio.Reader) (byte, error) {
	for {
		c, err := br.ReadByte()
		if err != nil {
			return 0, err
		}
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return c, br.UnreadByte()
		}
	}
}

type decoder struct {
	fn     func(*Span) error
	st     *ReadStats
	json   ptrace.JSONUnmarshaler
	proto  ptrace.ProtoUnmarshaler
	zstd   *zstd.Decoder
	layout string
}

// lineHead holds the fields that tell a server_traces.jsonl line from a Collector line.
type lineHead struct {
	FormatVersion  *int            `json:"format_version"`
	ReceivedUnixNs int64           `json:"received_unix_ns"`
	Traces         json.RawMessage `json:"traces"`
	ResourceSpans  json.RawMessage `json:"resourceSpans"`
}

// lines reads JSON lines: each a Line or an OTLP JSON export request.
func (d *decoder) lines(br *bufio.Reader, name string) error {
	for n := 1; ; n++ {
		line, err := readLine(br)
		if len(bytes.TrimSpace(line)) > 0 {
			if perr := d.line(line); perr != nil {
				return fmt.Errorf("%s:%d: %w", name, n, perr)
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s:%d: %v", name, n, err)
		}
	}
}

// readLine returns the next line without its newline, refusing one over maxRecord.
func readLine(br *bufio.Reader) ([]byte, error) {
	var long []byte
	for {
		part, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long, part...)
			if len(long) > maxRecord {
				return nil, fmt.Errorf("line longer than %d bytes", maxRecord)
			}
			continue
		}
		if long != nil {
			part = append(long, part...)
		}
		return bytes.TrimRight(part, "\r\n"), err
	}
}

func (d *decoder) line(b []byte) error {
	var h lineHead
	if err := json.Unmarshal(b, &h); err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	var layout string
	var otlp []byte
	switch {
	case h.FormatVersion != nil:
		if *h.FormatVersion != FormatVersion {
			return fmt.Errorf("format_version %d: this reader knows %d (docs/run-format.md)", *h.FormatVersion, FormatVersion)
		}
		if len(h.Traces) == 0 {
			return errors.New("no traces")
		}
		layout, otlp = LayoutRun, h.Traces
	case h.ResourceSpans != nil:
		layout, otlp, h.ReceivedUnixNs = LayoutCollectorJSON, b, 0
	default:
		return errors.New("neither a server_traces.jsonl line (format_version) nor an OTLP JSON export request (resourceSpans)")
	}
	if d.layout != "" && d.layout != layout {
		return fmt.Errorf("a %s line in a %s file", layout, d.layout)
	}
	d.layout, d.st.Layout = layout, layout
	td, err := d.json.UnmarshalTraces(otlp)
	if err != nil {
		return fmt.Errorf("OTLP JSON: %v", err)
	}
	return d.emit(td, h.ReceivedUnixNs)
}

// frames reads length-prefixed export requests (the file exporter's proto format, and its
// json or proto format compressed).
func (d *decoder) frames(br *bufio.Reader, name string) error {
	var size [4]byte
	var buf []byte
	for n := 1; ; n++ {
		if _, err := io.ReadFull(br, size[:]); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("%s: frame %d: length: %v", name, n, err)
		}
		l := binary.BigEndian.Uint32(size[:])
		if l > maxRecord {
			return fmt.Errorf("%s: frame %d: %d bytes, over %d (not a Collector file exporter output?)", name, n, l, maxRecord)
		}
		if cap(buf) < int(l) {
			buf = make([]byte, l)
		}
		buf = buf[:l]
		if _, err := io.ReadFull(br, buf); err != nil {
			return fmt.Errorf("%s: frame %d: %v", name, n, err)
		}
		if err := d.frame(buf); err != nil {
			return fmt.Errorf("%s: frame %d: %w", name, n, err)
		}
	}
}

func (d *decoder) frame(b []byte) error {
	if bytes.HasPrefix(b, zstdMagic) {
		if d.zstd == nil {
			z, err := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(maxRecord))
			if err != nil {
				return err
			}
			d.zstd = z
		}
		out, err := d.zstd.DecodeAll(b, nil)
		if err != nil {
			return fmt.Errorf("zstd: %v", err)
		}
		b = out
	}
	var td ptrace.Traces
	var err error
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		td, err = d.json.UnmarshalTraces(t)
	} else {
		td, err = d.proto.UnmarshalTraces(b)
	}
	if err != nil {
		return fmt.Errorf("OTLP: %v", err)
	}
	return d.emit(td, 0)
}

// emit calls fn with every span of td.
func (d *decoder) emit(td ptrace.Traces, received int64) error {
	d.st.Requests++
	var s Span
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		service := ""
		if v, ok := rs.Resource().Attributes().Get("service.name"); ok {
			service = v.AsString()
		}
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				sp := spans.At(k)
				s = Span{TraceID: sp.TraceID(), SpanID: sp.SpanID(), ParentSpanID: sp.ParentSpanID(),
					Name: sp.Name(), Kind: sp.Kind().String(), Service: service,
					StartUnixNs: int64(sp.StartTimestamp()), EndUnixNs: int64(sp.EndTimestamp()),
					Attributes: rawAttributes(sp.Attributes()), ReceivedUnixNs: received}
				d.st.Spans++
				if err := d.fn(&s); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// rawAttributes is m as plain values: string, bool, int64, float64, []byte, lists, maps.
func rawAttributes(m pcommon.Map) map[string]any {
	if m.Len() == 0 {
		return nil
	}
	return m.AsRaw()
}
