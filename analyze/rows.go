package analyze

import (
	"fmt"

	"github.com/llmbench/llmbench/rawlog"
)

// Per-request rows (Options.Rows): every profile request the analysis is over, with its
// identity, instants, every per-request metric and its content events, for exports that
// hold one row per request and one per content event (package columnar's Parquet files).

// RequestRow is one profile request as a row. Instants are Unix nanoseconds, -1 when the
// request has none.
type RequestRow struct {
	// Index is the plan index; Run the run directory (shard) whose log holds the request,
	// Worker the worker that sent it (-1: no log holds it).
	Index       uint32
	Run, Worker int
	// Session and Turn are its conversation and turn; Phase is "profile".
	Session, Turn uint32
	Phase         string
	// Valid says whether it succeeded; Status is the HTTP status (0: none); ErrorKind and
	// ErrorMessage say why it failed ("" when valid); Outcome is the raw record's (or "lost").
	Valid                   bool
	Status                  int
	ErrorKind, ErrorMessage string
	Outcome                 string
	// The instants: planned send, slot ready, write start and end, response headers, first
	// read, first and last content event, end.
	IntendedUnixNs, ReadyUnixNs, WriteStartUnixNs, WriteEndUnixNs, HeaderUnixNs int64
	FirstByteUnixNs, FirstContentUnixNs, LastContentUnixNs, EndUnixNs           int64
	// IntendedNs is the planned send instant in ns since the run's start (-1: none, a closed
	// loop's request); InputTokens its input length (RequestView.InputTokens).
	IntendedNs  int64
	InputTokens float64
	// Group is the request's group (Options.GroupBy) when Grouped.
	Group   string
	Grouped bool
	// Values holds the request's value of each of the registry's RowMetrics, index for index,
	// in the metric's display unit; Has says which it has. Both are reused between rows.
	Values []float64
	Has    []bool
	// Chunks are its content events, in order; reused between rows.
	Chunks []Chunk
}

// Chunk is one content event of a request.
type Chunk struct {
	// ArrivalUnixNs is when the read that completed it returned; SinceWriteNs the same
	// instant in ns since the request's write began.
	ArrivalUnixNs, SinceWriteNs int64
	// Read is the index of that read among the request's reads; SameRead says the previous
	// content event was completed by the same read (their gap is 0).
	Read     int
	SameRead bool
	// Tokens counts its text (content and reasoning) with the analysis's tokenizer, the
	// event alone; 0 for an endpoint without tokens.
	Tokens int
}

// RowSink takes the rows of one part of the analysis, in order, from one goroutine.
type RowSink interface {
	Row(r *RequestRow) error
}

// RowMetrics are the metrics a RequestRow holds values of: every record metric with one
// value per request that is not an alias of another, in id order (user metrics last).
func (r *Registry) RowMetrics() []MetricDef {
	r = r.or()
	var out []MetricDef
	for _, id := range r.records {
		if d := r.defs[id]; d.oneValue() {
			out = append(out, d)
		}
	}
	return out
}

// rowMaker fills the rows of one part.
type rowMaker struct {
	row  RequestRow
	cols []MetricID
}

func newRowMaker(reg *Registry) *rowMaker {
	rm := &rowMaker{}
	for _, d := range reg.RowMetrics() {
		rm.cols = append(rm.cols, d.ID)
	}
	rm.row.Values, rm.row.Has = make([]float64, len(rm.cols)), make([]bool, len(rm.cols))
	return rm
}

// fill makes the row of the processor's current request, read from record q (nil: no log
// holds it), with choice c.
func (rm *rowMaker) fill(p *processor, q *rawlog.Request, c choice) *RequestRow {
	m := &p.m
	r := &rm.row
	wall := m.StartUnixNs
	at := func(t int64) int64 {
		if t < 0 {
			return -1
		}
		return wall + t
	}
	*r = RequestRow{Index: m.Index, Run: m.Run, Worker: m.Worker, Session: m.Session, Turn: m.Turn, Phase: m.Phase.String(),
		Valid: m.Valid, Status: m.Status, Outcome: m.Outcome.String(),
		IntendedUnixNs: at(m.IntendedNs), ReadyUnixNs: at(m.ReadyNs), WriteStartUnixNs: at(m.SendNs), WriteEndUnixNs: -1,
		HeaderUnixNs: at(m.HeaderNs), FirstByteUnixNs: -1, FirstContentUnixNs: at(m.FirstContentNs),
		LastContentUnixNs: at(m.LastContentNs), EndUnixNs: at(m.EndNs),
		IntendedNs: m.IntendedNs, InputTokens: p.view().InputTokens(),
		Group: c.group, Grouped: c.grouped, Values: r.Values, Has: r.Has, Chunks: r.Chunks[:0]}
	if m.Err != nil {
		r.ErrorKind, r.ErrorMessage = m.Err.Kind, m.Err.Message
		if m.Err.Kind == "lost" {
			r.Outcome = "lost"
		}
	}
	if q != nil {
		r.WriteEndUnixNs = at(q.WriteEndNs)
		if len(q.ReadNs) > 0 {
			r.FirstByteUnixNs = at(q.ReadNs[0])
		}
	}
	for i, id := range rm.cols {
		d := p.reg.def(id)
		r.Has[i] = m.Has[id] && kept(d, m)
		r.Values[i] = 0
		if r.Has[i] {
			r.Values[i] = m.Values[id] / d.div
		}
	}
	if m.Sent {
		for i, t := range p.times {
			sp := p.spans[i]
			ch := Chunk{ArrivalUnixNs: wall + t, SinceWriteNs: t - m.SendNs, Read: int(sp.read), SameRead: i > 0 && p.spans[i-1].read == sp.read}
			if p.cfg.tokens && p.cfg.tok != nil {
				ch.Tokens = p.cfg.tok.Count(string(p.d.Content[sp.c0:sp.c1])) + p.cfg.tok.Count(string(p.d.Reasoning[sp.r0:sp.r1]))
			}
			r.Chunks = append(r.Chunks, ch)
		}
	}
	return r
}

// rowWriter hands one part's rows to its sink (Options.Rows), asked for on the first row.
type rowWriter struct {
	a    *analysis
	part int
	sink RowSink
	rm   *rowMaker
}

// rowWriter returns part's row writer, nil when no rows are wanted.
func (a *analysis) rowWriter(part int) *rowWriter {
	if a.opts.Rows == nil {
		return nil
	}
	return &rowWriter{a: a, part: part}
}

// write hands the processor's current request, read from q (nil: no log holds it), to the
// sink.
func (w *rowWriter) write(p *processor, q *rawlog.Request, c choice) error {
	if w.sink == nil {
		s, err := w.a.opts.Rows(w.part)
		if err != nil {
			return fmt.Errorf("analyze: per-request rows: %w", err)
		}
		w.sink, w.rm = s, newRowMaker(w.a.reg)
	}
	if err := w.sink.Row(w.rm.fill(p, q, c)); err != nil {
		return fmt.Errorf("analyze: per-request rows: %w", err)
	}
	return nil
}
