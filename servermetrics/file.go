package servermetrics

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"sync"

	"github.com/llmbench/llmbench/internal/jsonwire"
	"github.com/llmbench/llmbench/redact"
)

// FileName is the server-metrics file's name in the run directory.
const FileName = "server_metrics.jsonl"

// FormatName and Version identify the file (its first line); readers reject other versions.
const (
	FormatName = "llmbench-server-metrics"
	Version    = 1
)

// Endpoint roles.
const (
	RoleServer = "server" // the inference server's own metrics
	RoleGPU    = "gpu"    // a DCGM exporter
)

// Scrape phases: the baseline before the first send, the periodic scrapes, and the one after
// the last response.
const (
	PhaseBaseline = "baseline"
	PhaseRun      = "run"
	PhaseFinal    = "final"
)

// ErrFormat is wrapped by every error about a malformed server-metrics file.
var ErrFormat = errors.New("server-metrics file malformed")

// Header is the file's first line.
type Header struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// StartUnixNs is the run's wall-clock zero (run.json start_unix_ns): every t_ns counts
	// from it, on the coordinator's monotonic clock.
	StartUnixNs int64 `json:"start_unix_ns"`
	// IntervalNs is the scrape period.
	IntervalNs  int64  `json:"interval_ns"`
	ToolVersion string `json:"tool_version,omitempty"`
}

// EndpointInfo is one scraped URL.
type EndpointInfo struct {
	ID   int    `json:"endpoint"`
	URL  string `json:"url"`
	Role string `json:"role"`
}

// Series is one sample stream: a metric family's sample name and labels, on one endpoint.
type Series struct {
	ID       int    `json:"id"`
	Endpoint int    `json:"endpoint"`
	Family   string `json:"family"`
	// Type is the family's Prometheus type: counter, gauge, histogram, summary, untyped.
	Type string `json:"type"`
	// Name is the sample's name: the family name, or it with _bucket, _sum, _count (and
	// _total for an OpenMetrics counter).
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
}

// Value is one sample of a scrape.
type Value struct {
	Series int
	V      float64
}

// Scrape is one successful read of one endpoint.
type Scrape struct {
	Endpoint int
	Phase    string
	// TimeNs is the midpoint of the request, on the run's clock (ns since StartUnixNs);
	// UnixNs the same instant on the wall clock; DurNs the request's duration.
	TimeNs, UnixNs, DurNs int64
	Values                []Value
}

// Note is a warning about an endpoint (not Prometheus text, unreachable, dropped).
type Note struct {
	Endpoint int    `json:"endpoint"`
	TimeNs   int64  `json:"t_ns"`
	Message  string `json:"message"`
}

// Writer appends to a server-metrics file. It is safe for concurrent use; every call ends
// with the line flushed, so a crash loses at most the line being written.
type Writer struct {
	mu     sync.Mutex
	w      *bufio.Writer
	series map[string]int
	per    map[int]int // series per endpoint
	next   int
	line   []byte
	err    error
	// Scratch of ScrapeLimited, kept between scrapes: a series' key, its label names, the
	// samples' ids.
	key  []byte
	keys []string
	ids  []int
}

// NewWriter writes h (Format and Version filled in) as the first line of w.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	h.Format, h.Version = FormatName, Version
	x := &Writer{w: bufio.NewWriterSize(w, 64<<10), series: map[string]int{}, per: map[int]int{}}
	if err := x.writeJSON("header", h); err != nil {
		return nil, err
	}
	return x, nil
}

// writeJSON writes {"kind":kind, ...v's fields} and flushes; the caller holds mu (or owns x).
func (x *Writer) writeJSON(kind string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("servermetrics: %w", err)
	}
	x.line = append(x.line[:0], `{"kind":"`...)
	x.line = append(x.line, kind...)
	x.line = append(x.line, '"')
	if len(b) > 2 {
		x.line = append(x.line, ',')
	}
	x.line = append(x.line, b[1:]...)
	x.line = append(x.line, '\n')
	return x.flushLine()
}

func (x *Writer) flushLine() error {
	if x.err != nil {
		return x.err
	}
	if _, err := x.w.Write(x.line); err != nil {
		x.err = fmt.Errorf("servermetrics: write: %w", err)
		return x.err
	}
	if err := x.w.Flush(); err != nil {
		x.err = fmt.Errorf("servermetrics: write: %w", err)
	}
	return x.err
}

// Endpoint records an endpoint, its URL redacted (package redact): the file never holds a
// credential of the URL the scraper was given.
func (x *Writer) Endpoint(e EndpointInfo) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	e.URL = redact.URL(e.URL)
	return x.writeJSON("endpoint", e)
}

// Note records a warning about an endpoint, every URL in it redacted (redact.Text: the HTTP
// client's errors hold the whole URL).
func (x *Writer) Note(n Note) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	n.Message = redact.Text(n.Message)
	return x.writeJSON("note", n)
}

// Sample is one parsed sample before it has a series id.
type Sample struct {
	Family, Type, Name string
	Labels             map[string]string
	V                  float64
}

// appendSeriesKey appends the key that identifies a series to b: endpoint, sample name and
// sorted labels; keys is a scratch slice for the label names, returned for reuse.
func appendSeriesKey(b []byte, keys []string, ep int, s *Sample) ([]byte, []string) {
	b = strconv.AppendInt(b, int64(ep), 10)
	b = append(b, 0)
	b = append(b, s.Name...)
	keys = keys[:0]
	for k := range s.Labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b = append(b, 0)
		b = append(b, k...)
		b = append(b, '=')
		b = append(b, s.Labels[k]...)
	}
	return b, keys
}

// Scrape records one scrape of endpoint ep: a series line for every sample stream not seen
// before, then the scrape line.
func (x *Writer) Scrape(ep int, phase string, tNs, unixNs, durNs int64, samples []Sample) error {
	_, err := x.ScrapeLimited(ep, phase, tNs, unixNs, durNs, samples, 0)
	return err
}

// ScrapeLimited is Scrape with at most maxSeries series for endpoint ep over the file (0:
// no limit): samples of a new series past it are left out, and dropped counts them.
func (x *Writer) ScrapeLimited(ep int, phase string, tNs, unixNs, durNs int64, samples []Sample, maxSeries int) (dropped int, err error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	ids := slices.Grow(x.ids[:0], len(samples))[:len(samples)]
	x.ids = ids
	for i := range samples {
		s := &samples[i]
		x.key, x.keys = appendSeriesKey(x.key[:0], x.keys, ep, s)
		id, ok := x.series[string(x.key)] // no string made to look it up
		if !ok {
			k := string(x.key)
			if maxSeries > 0 && x.per[ep] >= maxSeries {
				ids[i] = -1
				dropped++
				continue
			}
			id = x.next
			x.next++
			x.per[ep]++
			x.series[k] = id
			if err := x.writeJSON("series", Series{ID: id, Endpoint: ep, Family: s.Family, Type: s.Type, Name: s.Name, Labels: s.Labels}); err != nil {
				return dropped, err
			}
		}
		ids[i] = id
	}
	b := append(x.line[:0], `{"kind":"scrape","endpoint":`...)
	b = strconv.AppendInt(b, int64(ep), 10)
	b = append(b, `,"phase":`...)
	b = jsonwire.AppendString(b, phase)
	b = append(b, `,"t_ns":`...)
	b = strconv.AppendInt(b, tNs, 10)
	b = append(b, `,"unix_ns":`...)
	b = strconv.AppendInt(b, unixNs, 10)
	b = append(b, `,"dur_ns":`...)
	b = strconv.AppendInt(b, durNs, 10)
	b = append(b, `,"values":[`...)
	first := true
	for i := range samples {
		if ids[i] < 0 {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(ids[i]), 10)
		b = append(b, ',')
		b = appendValue(b, samples[i].V)
		b = append(b, ']')
	}
	b = append(b, "]}\n"...)
	x.line = b
	return dropped, x.flushLine()
}

// appendValue writes v as a JSON number, or "NaN", "+Inf", "-Inf" as strings.
func appendValue(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, `"NaN"`...)
	case math.IsInf(v, 1):
		return append(b, `"+Inf"`...)
	case math.IsInf(v, -1):
		return append(b, `"-Inf"`...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// File is a server-metrics file read whole.
type File struct {
	Header    Header
	Endpoints []EndpointInfo
	// Series by id (Series[i].ID == i).
	Series  []Series
	Scrapes []Scrape
	Notes   []Note
	// Torn is the length of a final line without its newline (a crash mid-write), skipped.
	Torn int
}

// maxLine bounds one line of the file (a scrape of a very large page).
const maxLine = 64 << 20

// ReadFile reads the server-metrics file at path.
func ReadFile(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("servermetrics: %w", err)
	}
	defer f.Close()
	x, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return x, nil
}

// Read parses a server-metrics file. A final line without its newline is skipped (Torn);
// any other malformed line is an error wrapping ErrFormat naming the line.
func Read(r io.Reader) (*File, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	f := &File{}
	for n := 1; ; n++ {
		line, err := readLine(br)
		if err == io.EOF {
			if n == 1 {
				return nil, fmt.Errorf("%w: empty file", ErrFormat)
			}
			return f, nil
		}
		if errors.Is(err, errTorn) {
			if n == 1 {
				return nil, fmt.Errorf("%w: line 1: no complete header line", ErrFormat)
			}
			f.Torn = len(line)
			return f, nil
		}
		if err != nil {
			return nil, fmt.Errorf("servermetrics: line %d: %w", n, err)
		}
		if err := f.parseLine(n, line); err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrFormat, n, err)
		}
	}
}

var errTorn = errors.New("torn line")

// readLine returns one line without its newline; errTorn with the bytes of a last line that
// has none.
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > maxLine {
			return nil, fmt.Errorf("%w: line longer than %d bytes", ErrFormat, maxLine)
		}
		switch {
		case err == nil:
			return buf[:len(buf)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF:
			if len(buf) == 0 {
				return nil, io.EOF
			}
			return buf, errTorn
		default:
			return nil, err
		}
	}
}

// rawLine is every field any line kind has.
type rawLine struct {
	Kind        string            `json:"kind"`
	Format      string            `json:"format"`
	Version     int               `json:"version"`
	StartUnixNs int64             `json:"start_unix_ns"`
	IntervalNs  int64             `json:"interval_ns"`
	ToolVersion string            `json:"tool_version"`
	Endpoint    int               `json:"endpoint"`
	URL         string            `json:"url"`
	Role        string            `json:"role"`
	ID          int               `json:"id"`
	Family      string            `json:"family"`
	Type        string            `json:"type"`
	Name        string            `json:"name"`
	Labels      map[string]string `json:"labels"`
	Phase       string            `json:"phase"`
	TimeNs      int64             `json:"t_ns"`
	UnixNs      int64             `json:"unix_ns"`
	DurNs       int64             `json:"dur_ns"`
	Values      [][2]jsonNumber   `json:"values"`
	Message     string            `json:"message"`
}

// jsonNumber is a sample value: a number, or "NaN", "+Inf", "-Inf".
type jsonNumber float64

func (j *jsonNumber) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		switch s {
		case "NaN":
			*j = jsonNumber(math.NaN())
		case "+Inf":
			*j = jsonNumber(math.Inf(1))
		case "-Inf":
			*j = jsonNumber(math.Inf(-1))
		default:
			return fmt.Errorf("value %q: want a number, NaN, +Inf or -Inf", s)
		}
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("value %s: not a number", b)
	}
	*j = jsonNumber(v)
	return nil
}

func (f *File) parseLine(n int, line []byte) error {
	var l rawLine
	if err := json.Unmarshal(line, &l); err != nil {
		return err
	}
	if n == 1 {
		if l.Kind != "header" || l.Format != FormatName {
			return fmt.Errorf("not a %s file (first line is not its header)", FormatName)
		}
		if l.Version != Version {
			return fmt.Errorf("version %d: this build reads version %d only", l.Version, Version)
		}
		f.Header = Header{Format: l.Format, Version: l.Version, StartUnixNs: l.StartUnixNs, IntervalNs: l.IntervalNs, ToolVersion: l.ToolVersion}
		return nil
	}
	switch l.Kind {
	case "endpoint":
		if l.Endpoint != len(f.Endpoints) {
			return fmt.Errorf("endpoint %d out of order (want %d)", l.Endpoint, len(f.Endpoints))
		}
		// Redacted again on reading: a file from an older replay may hold secrets in clear.
		f.Endpoints = append(f.Endpoints, EndpointInfo{ID: l.Endpoint, URL: redact.URL(l.URL), Role: l.Role})
	case "series":
		if l.ID != len(f.Series) {
			return fmt.Errorf("series %d out of order (want %d)", l.ID, len(f.Series))
		}
		if l.Endpoint < 0 || l.Endpoint >= len(f.Endpoints) {
			return fmt.Errorf("series %d: unknown endpoint %d", l.ID, l.Endpoint)
		}
		f.Series = append(f.Series, Series{ID: l.ID, Endpoint: l.Endpoint, Family: l.Family, Type: l.Type, Name: l.Name, Labels: l.Labels})
	case "scrape":
		if l.Endpoint < 0 || l.Endpoint >= len(f.Endpoints) {
			return fmt.Errorf("scrape: unknown endpoint %d", l.Endpoint)
		}
		sc := Scrape{Endpoint: l.Endpoint, Phase: l.Phase, TimeNs: l.TimeNs, UnixNs: l.UnixNs, DurNs: l.DurNs, Values: make([]Value, len(l.Values))}
		for i, v := range l.Values {
			id := float64(v[0])
			if !(id >= 0 && id < float64(len(f.Series))) || id != math.Trunc(id) {
				return fmt.Errorf("scrape: unknown series %v", id)
			}
			sc.Values[i] = Value{Series: int(id), V: float64(v[1])}
		}
		f.Scrapes = append(f.Scrapes, sc)
	case "note":
		f.Notes = append(f.Notes, Note{Endpoint: l.Endpoint, TimeNs: l.TimeNs, Message: redact.Text(l.Message)})
	case "header":
		return errors.New("a second header")
	default:
		return fmt.Errorf("unknown line kind %q", l.Kind)
	}
	return nil
}
