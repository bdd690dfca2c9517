package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"github.com/llmbench/llmbench/analyze"
)

// Field names one per-request value the pages chart: an analyze metric tag of
// profile_export.jsonl, in its display unit.
type Field int

// The per-request values the pages use.
const (
	FTTFT Field = iota
	FTTFO
	FITL
	FLatency
	FCorrectedTTFT
	FScheduleLag
	FISL
	FOSL
	FOSLMismatchPct
	FTPSUser
	numFields
)

// fieldTags are the profile_export.jsonl metric tags of the fields, by Field.
var fieldTags = [numFields]string{
	"time_to_first_token", "time_to_first_output_token", "inter_token_latency", "request_latency",
	"corrected_time_to_first_token", "schedule_lag", "input_sequence_length", "output_sequence_length",
	"osl_mismatch_diff_pct", "output_token_throughput_per_user",
}

// Tag returns the metric tag of f.
func (f Field) Tag() string { return fieldTags[f] }

// Request is one profile request as profile_export.jsonl gives it. Times are wall-clock
// nanoseconds, -1 when the record has none; values are NaN when absent.
type Request struct {
	IntendedNs, SendNs, EndNs int64
	// OK is true for a request without error.
	OK bool
	// ErrKind is the error's type when OK is false.
	ErrKind string
	Values  [numFields]float32
}

// Value returns the request's value of f, NaN when it has none.
func (r *Request) Value(f Field) float64 { return float64(r.Values[f]) }

// Records collects the per-request records of one analysis. It is an io.Writer for the
// profile_export.jsonl stream (analyze.Analyze writes to it, alone or through an
// io.MultiWriter); it keeps a few values per request (about 64 bytes), not the lines, and
// the values of every metric that is not a built-in one (user metrics, which `analyze
// compare` compares), 4 bytes per request each.
type Records struct {
	// Requests are the records in the order analyze wrote them.
	Requests []Request
	// user holds the user metrics' values, by tag: one per request (NaN: none).
	user    map[string][]float32
	partial []byte
	line    int
}

// Write parses the complete lines of p (a line may span calls). A line that is not a
// profile_export.jsonl record is an error naming its number.
func (r *Records) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			r.partial = append(r.partial, p...)
			break
		}
		line := p[:i]
		if len(r.partial) > 0 {
			r.partial = append(r.partial, line...)
			line = r.partial
		}
		r.line++
		if err := r.add(line); err != nil {
			return 0, err
		}
		r.partial = r.partial[:0]
		p = p[i+1:]
	}
	return n, nil
}

// jsonlRecord is the part of a profile_export.jsonl line that the pages read.
type jsonlRecord struct {
	Metadata struct {
		Intended *int64 `json:"credit_issued_ns"`
		Start    *int64 `json:"request_start_ns"`
		End      *int64 `json:"request_end_ns"`
	} `json:"metadata"`
	Metrics map[string]struct {
		Value json.RawMessage `json:"value"`
	} `json:"metrics"`
	Error *struct {
		Type string `json:"type"`
	} `json:"error"`
}

func (r *Records) add(line []byte) error {
	if len(bytes.TrimSpace(line)) == 0 {
		return nil
	}
	var j jsonlRecord
	if err := json.Unmarshal(line, &j); err != nil {
		return fmt.Errorf("report: records line %d: %w", r.line, err)
	}
	q := Request{IntendedNs: orNeg(j.Metadata.Intended), SendNs: orNeg(j.Metadata.Start), EndNs: orNeg(j.Metadata.End), OK: j.Error == nil}
	if j.Error != nil {
		q.ErrKind = j.Error.Type
	}
	for f := range numFields {
		v, err := r.number(&j, fieldTags[f])
		if err != nil {
			return err
		}
		q.Values[f] = v
	}
	n := len(r.Requests)
	for tag := range j.Metrics {
		if _, builtin := analyze.LookupMetric(tag); builtin {
			continue
		}
		if r.user == nil {
			r.user = map[string][]float32{}
		}
		if _, ok := r.user[tag]; !ok {
			if len(r.user) >= analyze.MaxUserMetrics {
				// Bounded: a line can name any keys, and each column costs 4 bytes a request.
				return fmt.Errorf("report: records line %d: more than %d metrics that are not built-in (%s)", r.line, analyze.MaxUserMetrics, tag)
			}
			col := make([]float32, n, n+1) // the requests before had no value
			for i := range col {
				col[i] = float32(math.NaN())
			}
			r.user[tag] = col
		}
	}
	for _, tag := range sortedTags(r.user) {
		v, err := r.number(&j, tag)
		if err != nil {
			return err
		}
		r.user[tag] = append(r.user[tag], v)
	}
	r.Requests = append(r.Requests, q)
	return nil
}

// number is the record's single value of metric tag, NaN when it has none (or a list).
func (r *Records) number(j *jsonlRecord, tag string) (float32, error) {
	m, ok := j.Metrics[tag]
	if !ok || len(m.Value) == 0 || m.Value[0] == '[' {
		return float32(math.NaN()), nil
	}
	var v float64
	if err := json.Unmarshal(m.Value, &v); err != nil {
		return 0, fmt.Errorf("report: records line %d: %s: %w", r.line, tag, err)
	}
	return float32(v), nil
}

func sortedTags(m map[string][]float32) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Close reports a last line without its newline.
func (r *Records) Close() error {
	if len(bytes.TrimSpace(r.partial)) == 0 {
		return nil
	}
	r.line++
	err := r.add(r.partial)
	r.partial = r.partial[:0]
	return err
}

// ReadRecords reads a profile_export.jsonl file.
func ReadRecords(path string) (*Records, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	defer f.Close()
	r := &Records{}
	if _, err := io.Copy(r, f); err != nil {
		return nil, fmt.Errorf("report: %s: %w", path, err)
	}
	if err := r.Close(); err != nil {
		return nil, fmt.Errorf("report: %s: %w", path, err)
	}
	return r, nil
}

// values returns the finite values of f over the requests that pass keep (all when nil).
func (r *Records) values(f Field, keep func(*Request) bool) []float64 {
	if r == nil {
		return nil
	}
	return r.collect(func(i int) float64 { return r.Requests[i].Value(f) }, keep)
}

// valuesOf returns the finite values of the metric tag (a field's, or a user metric's) over
// the requests that pass keep.
func (r *Records) valuesOf(tag string, keep func(*Request) bool) []float64 {
	if r == nil {
		return nil
	}
	for f := range numFields {
		if fieldTags[f] == tag {
			return r.values(f, keep)
		}
	}
	col := r.user[tag]
	if col == nil {
		return nil
	}
	return r.collect(func(i int) float64 { return float64(col[i]) }, keep)
}

func (r *Records) collect(value func(int) float64, keep func(*Request) bool) []float64 {
	var out []float64
	for i := range r.Requests {
		if keep != nil && !keep(&r.Requests[i]) {
			continue
		}
		if v := value(i); !math.IsNaN(v) && !math.IsInf(v, 0) {
			out = append(out, v)
		}
	}
	return out
}

func orNeg(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}
