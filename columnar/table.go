package columnar

import (
	"fmt"

	"github.com/parquet-go/parquet-go"

	"github.com/llmbench/llmbench/analyze"
)

// table is one Parquet file's schema and how a row of it is made.
type table struct {
	name   string
	schema *parquet.Schema
	// cols are the columns in the schema's leaf order (Parquet groups order their fields
	// by name).
	cols []column
}

// column is one top-level column: its node and how its values are appended for a request
// (and, in chunks.parquet, its i-th content event).
type column struct {
	name string
	node parquet.Node
	put  func(dst parquet.Row, leaf int, r *analyze.RequestRow, i int) parquet.Row
}

// newTable orders cols by the schema's leaves.
func newTable(name string, cols []column) *table {
	g := parquet.Group{}
	byName := map[string]column{}
	for _, c := range cols {
		g[c.name] = c.node
		byName[c.name] = c
	}
	t := &table{name: name, schema: parquet.NewSchema(name, g)}
	for _, path := range t.schema.Columns() {
		t.cols = append(t.cols, byName[path[0]])
	}
	return t
}

// row appends to dst the row of request r (i < 0) or of its i-th content event.
func (t *table) row(dst parquet.Row, r *analyze.RequestRow, i int) parquet.Row {
	for leaf, c := range t.cols {
		dst = c.put(dst, leaf, r, i)
	}
	return dst
}

// The column makers: a required or optional (null when the value's ok is false) leaf, and
// a list of numbers (required, possibly empty).

func reqInt64(name string, f func(r *analyze.RequestRow, i int) int64) column {
	return column{name, parquet.Leaf(parquet.Int64Type), func(dst parquet.Row, leaf int, r *analyze.RequestRow, i int) parquet.Row {
		return append(dst, parquet.Int64Value(f(r, i)).Level(0, 0, leaf))
	}}
}

func reqInt32(name string, f func(r *analyze.RequestRow, i int) int) column {
	return column{name, parquet.Leaf(parquet.Int32Type), func(dst parquet.Row, leaf int, r *analyze.RequestRow, i int) parquet.Row {
		return append(dst, parquet.Int32Value(int32(f(r, i))).Level(0, 0, leaf))
	}}
}

func reqBool(name string, f func(r *analyze.RequestRow, i int) bool) column {
	return column{name, parquet.Leaf(parquet.BooleanType), func(dst parquet.Row, leaf int, r *analyze.RequestRow, i int) parquet.Row {
		return append(dst, parquet.BooleanValue(f(r, i)).Level(0, 0, leaf))
	}}
}

func reqString(name string, f func(r *analyze.RequestRow, i int) string) column {
	return column{name, parquet.String(), func(dst parquet.Row, leaf int, r *analyze.RequestRow, i int) parquet.Row {
		return append(dst, parquet.ByteArrayValue([]byte(f(r, i))).Level(0, 0, leaf))
	}}
}

// instant is an optional Unix-nanosecond instant: null when the request has none (-1).
func instant(name string, f func(r *analyze.RequestRow) int64) column {
	return column{name, parquet.Optional(parquet.Leaf(parquet.Int64Type)), func(dst parquet.Row, leaf int, r *analyze.RequestRow, _ int) parquet.Row {
		if v := f(r); v >= 0 {
			return append(dst, parquet.Int64Value(v).Level(0, 1, leaf))
		}
		return append(dst, parquet.NullValue().Level(0, 0, leaf))
	}}
}

func optDouble(name string, f func(r *analyze.RequestRow, i int) (float64, bool)) column {
	return column{name, parquet.Optional(parquet.Leaf(parquet.DoubleType)), func(dst parquet.Row, leaf int, r *analyze.RequestRow, i int) parquet.Row {
		if v, ok := f(r, i); ok {
			return append(dst, parquet.DoubleValue(v).Level(0, 1, leaf))
		}
		return append(dst, parquet.NullValue().Level(0, 0, leaf))
	}}
}

func optString(name string, f func(r *analyze.RequestRow) (string, bool)) column {
	return column{name, parquet.Optional(parquet.String()), func(dst parquet.Row, leaf int, r *analyze.RequestRow, _ int) parquet.Row {
		if v, ok := f(r); ok {
			return append(dst, parquet.ByteArrayValue([]byte(v)).Level(0, 1, leaf))
		}
		return append(dst, parquet.NullValue().Level(0, 0, leaf))
	}}
}

// list is a list of numbers (doubles, or int32 when ints), required and possibly empty.
func list(name string, ints bool, vals func(r *analyze.RequestRow) []float64) column {
	leafType := parquet.Type(parquet.DoubleType)
	if ints {
		leafType = parquet.Int32Type
	}
	return column{name, parquet.List(parquet.Leaf(leafType)), func(dst parquet.Row, leaf int, r *analyze.RequestRow, _ int) parquet.Row {
		vs := vals(r)
		if len(vs) == 0 {
			return append(dst, parquet.NullValue().Level(0, 0, leaf))
		}
		for k, x := range vs {
			v := parquet.DoubleValue(x)
			if ints {
				v = parquet.Int32Value(int32(x))
			}
			rep := 1
			if k == 0 {
				rep = 0
			}
			dst = append(dst, v.Level(rep, 1, leaf))
		}
		return dst
	}}
}

// chunksMs, gapsMs and reads are the request's list variables (docs/metrics.md "User
// metrics"): each content event's arrival in ms since the write began, the gaps between
// consecutive ones, and how many content events each read that completed one completed.
func chunksMs(r *analyze.RequestRow) []float64 {
	out := make([]float64, len(r.Chunks))
	for i, c := range r.Chunks {
		out[i] = ms(c.SinceWriteNs)
	}
	return out
}

func gapsMs(r *analyze.RequestRow) []float64 {
	if !r.Valid {
		return nil // inter_chunk_latency: valid responses only
	}
	var out []float64
	for i := 1; i < len(r.Chunks); i++ {
		out = append(out, ms(r.Chunks[i].ArrivalUnixNs-r.Chunks[i-1].ArrivalUnixNs))
	}
	return out
}

func reads(r *analyze.RequestRow) []float64 {
	var out []float64
	for i, c := range r.Chunks {
		if i > 0 && c.Read == r.Chunks[i-1].Read {
			out[len(out)-1]++
			continue
		}
		out = append(out, 1)
	}
	return out
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

// requestColumns are requests.parquet's columns besides the metrics'.
func requestColumns(grouped bool) []column {
	cols := []column{
		reqInt64("request_index", func(r *analyze.RequestRow, _ int) int64 { return int64(r.Index) }),
		reqInt32("run", func(r *analyze.RequestRow, _ int) int { return r.Run }),
		reqInt32("worker", func(r *analyze.RequestRow, _ int) int { return r.Worker }),
		reqInt64("session", func(r *analyze.RequestRow, _ int) int64 { return int64(r.Session) }),
		reqInt64("turn", func(r *analyze.RequestRow, _ int) int64 { return int64(r.Turn) }),
		reqString("phase", func(r *analyze.RequestRow, _ int) string { return r.Phase }),
		reqBool("valid", func(r *analyze.RequestRow, _ int) bool { return r.Valid }),
		reqInt32("status", func(r *analyze.RequestRow, _ int) int { return r.Status }),
		reqString("error", func(r *analyze.RequestRow, _ int) string { return r.ErrorKind }),
		reqString("error_message", func(r *analyze.RequestRow, _ int) string { return r.ErrorMessage }),
		reqString("outcome", func(r *analyze.RequestRow, _ int) string { return r.Outcome }),
		instant("intended_unix_ns", func(r *analyze.RequestRow) int64 { return r.IntendedUnixNs }),
		instant("ready_unix_ns", func(r *analyze.RequestRow) int64 { return r.ReadyUnixNs }),
		instant("write_start_unix_ns", func(r *analyze.RequestRow) int64 { return r.WriteStartUnixNs }),
		instant("write_end_unix_ns", func(r *analyze.RequestRow) int64 { return r.WriteEndUnixNs }),
		instant("header_unix_ns", func(r *analyze.RequestRow) int64 { return r.HeaderUnixNs }),
		instant("first_byte_unix_ns", func(r *analyze.RequestRow) int64 { return r.FirstByteUnixNs }),
		instant("first_content_unix_ns", func(r *analyze.RequestRow) int64 { return r.FirstContentUnixNs }),
		instant("last_content_unix_ns", func(r *analyze.RequestRow) int64 { return r.LastContentUnixNs }),
		instant("end_unix_ns", func(r *analyze.RequestRow) int64 { return r.EndUnixNs }),
		list("chunks_ms", false, chunksMs),
		list("gaps_ms", false, gapsMs),
		list("reads", true, reads),
	}
	if grouped {
		cols = append(cols, optString("group", func(r *analyze.RequestRow) (string, bool) { return r.Group, r.Grouped }))
	}
	return cols
}

// requestTable is requests.parquet's: the request's columns, then one per row metric
// (analyze.Registry.RowMetrics: built-in and user metrics, display unit, null when the
// request has no value).
func requestTable(reg *analyze.Registry, grouped bool) *table {
	cols := requestColumns(grouped)
	for k, d := range reg.RowMetrics() {
		val := func(r *analyze.RequestRow, _ int) (float64, bool) { return r.Values[k], r.Has[k] }
		cols = append(cols, optDouble(d.Tag, val))
		// A metric's short name in expressions (analyze.MetricDef.Var, docs/metrics.md "User
		// metrics") is a column too, so a query uses the names a --metric does.
		if d.Var != "" {
			cols = append(cols, optDouble(d.Var, val))
		}
	}
	cols = append(cols,
		optDouble("isl", func(r *analyze.RequestRow, _ int) (float64, bool) { return r.InputTokens, true }),
		optDouble("send_offset_ms", func(r *analyze.RequestRow, _ int) (float64, bool) { return ms(r.IntendedNs), r.IntendedNs >= 0 }))
	return newTable("request", cols)
}

// Check says whether reg's metrics can be columns of requests.parquet: a user metric named
// like one of the request's columns cannot.
func Check(reg *analyze.Registry) error {
	taken := map[string]bool{}
	for _, c := range requestTable(nil, true).cols {
		if _, ok := analyze.LookupMetric(c.name); !ok {
			taken[c.name] = true
		}
	}
	for _, d := range reg.RowMetrics() {
		if taken[d.Tag] {
			return fmt.Errorf("--export parquet: metric %q is also a column of %s (docs/run-format.md \"Parquet export\"): rename the metric", d.Tag, FileRequests)
		}
	}
	return nil
}

// chunkTable is chunks.parquet's: one row per content event.
func chunkTable() *table {
	return newTable("chunk", []column{
		reqInt64("request_index", func(r *analyze.RequestRow, _ int) int64 { return int64(r.Index) }),
		reqInt32("run", func(r *analyze.RequestRow, _ int) int { return r.Run }),
		reqInt32("index", func(_ *analyze.RequestRow, i int) int { return i }),
		reqInt64("arrival_unix_ns", func(r *analyze.RequestRow, i int) int64 { return r.Chunks[i].ArrivalUnixNs }),
		optDouble("since_write_ms", func(r *analyze.RequestRow, i int) (float64, bool) { return ms(r.Chunks[i].SinceWriteNs), true }),
		optDouble("gap_ms", func(r *analyze.RequestRow, i int) (float64, bool) {
			if i == 0 {
				return 0, false
			}
			return ms(r.Chunks[i].ArrivalUnixNs - r.Chunks[i-1].ArrivalUnixNs), true
		}),
		reqInt32("read", func(r *analyze.RequestRow, i int) int { return r.Chunks[i].Read }),
		reqBool("same_read", func(r *analyze.RequestRow, i int) bool { return r.Chunks[i].SameRead }),
		reqInt32("tokens", func(r *analyze.RequestRow, i int) int { return r.Chunks[i].Tokens }),
	})
}
