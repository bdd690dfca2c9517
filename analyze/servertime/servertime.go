// Package servertime owns the join of a server's own trace spans to a run's requests, and
// the per-request server metrics it derives: server_queue_time, server_prefill_time,
// server_decode_time, server_time_to_first_token, server_e2e_latency, ttft_outside_server
// (our TTFT minus the server's) and server_clock_offset (docs/metrics.md "Server traces").
//
// A span belongs to the request whose traceparent carried its trace id (internal/tracectx:
// the run's key maps a trace id back to a plan index, without any table). Durations come
// from the span's attributes, in the server's own words (layouts.go maps each server's);
// the server's clock is never used for an instant of the run's timeline: a span's start
// only gives the request's clock offset.
//
// It registers its metrics in an analyze.Registry (Register), so every output that reads
// the registry (console, JSON, CSV, JSONL, Parquet, expressions, gates, compare, time
// slices, report.html) has them. It may import analyze, servertrace, rawlog and internal/,
// never replay or cmd.
package servertime

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/internal/tracectx"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/servertrace"
)

// The metrics' tags, in the order Register adds them.
const (
	TagQueue     = "server_queue_time"
	TagPrefill   = "server_prefill_time"
	TagDecode    = "server_decode_time"
	TagTTFT      = "server_time_to_first_token"
	TagE2E       = "server_e2e_latency"
	TagOutside   = "ttft_outside_server"
	TagClockSkew = "server_clock_offset"
)

// metric is one derived metric: its definition and its value from a joined request.
type metric struct {
	tag, header string
	v, desc     string
	console     bool
	value       func(j *joined, v *analyze.RequestView) (float64, bool)
}

// phase returns the joined span's phase p in ms.
func phase(p Phase) func(*joined, *analyze.RequestView) (float64, bool) {
	return func(j *joined, _ *analyze.RequestView) (float64, bool) {
		return float64(j.ns[p]) / 1e6, j.has[p]
	}
}

var metrics = []metric{
	{TagQueue, "Server Queue Time", "server_queue_ms", "Time the request waited in the server's queue before it was scheduled (its span's queue attribute).", true, phase(Queue)},
	{TagPrefill, "Server Prefill Time", "server_prefill_ms", "Time the server spent computing the request's prompt (prefill), from its span.", true, phase(Prefill)},
	{TagDecode, "Server Decode Time", "server_decode_ms", "Time the server spent generating the request's output after the first token (decode), from its span.", true, phase(Decode)},
	{TagTTFT, "Server Time to First Token", "server_ttft_ms", "The server's own time to first token: from the request's arrival at the server to its first token, from its span.", true, phase(TTFT)},
	{TagE2E, "Server E2E Latency", "server_e2e_ms", "The server's own end-to-end latency of the request, from its span.", true, phase(E2E)},
	{TagOutside, "TTFT Outside Server", "ttft_outside_ms", "Our time to first token minus the server's: the network, HTTP and client part of TTFT.", true,
		func(j *joined, v *analyze.RequestView) (float64, bool) {
			ttft, ok := v.Value(analyze.MTimeToFirstToken)
			if !ok || !j.has[TTFT] {
				return 0, false
			}
			// In whole nanoseconds (ours are, the server's are rounded to them), so that TTFT
			// = server TTFT + this, digit for digit.
			return float64(int64(math.Round(ttft*1e6))-j.ns[TTFT]) / 1e6, true
		}},
	{TagClockSkew, "Server Clock Offset", "", "The server span's start minus the instant our write of the request began, on the two machines' clocks: network one way plus the clocks' offset (never used for a duration).", false,
		func(j *joined, v *analyze.RequestView) (float64, bool) {
			send := v.SendUnixNs()
			if send < 0 || j.startUnixNs <= 0 {
				return 0, false
			}
			return float64(j.startUnixNs-send) / 1e6, true
		}},
}

// Metrics are the server metrics registered in one registry, and the join they read once
// bound (Bind).
type Metrics struct {
	join atomic.Pointer[Join]
}

// Register adds the server metrics to reg (a NewRegistry) and returns them, unbound: every
// request has no value until Bind gives them a join.
func Register(reg *analyze.Registry) (*Metrics, error) {
	m := &Metrics{}
	for i := range metrics {
		d := &metrics[i]
		first := i == 0
		eval := func(v *analyze.RequestView) (float64, bool) {
			j := m.join.Load()
			if j == nil {
				return 0, false
			}
			r := j.byIndex[v.Index()]
			if first { // once per valid profile request
				if r != nil {
					j.joinedRequests.Add(1)
					j.tally(r, v)
				} else {
					j.withoutSpan.Add(1)
				}
			}
			if r == nil {
				return 0, false
			}
			return d.value(r, v)
		}
		if _, err := reg.RegisterJoined(analyze.JoinedMetric{UserMetric: analyze.UserMetric{Name: d.tag, Unit: "ms",
			Description: d.desc, Eval: eval}, Header: d.header, Var: d.v, Console: d.console, Order: 310 + i}); err != nil {
			return nil, fmt.Errorf("servertime: %w", err)
		}
	}
	return m, nil
}

// Bind makes m's metrics read j (nil: no values).
func (m *Metrics) Bind(j *Join) { m.join.Store(j) }

// Join is a run's requests joined to the server spans whose trace ids they carried.
type Join struct {
	key     tracectx.Key
	planned int64 // the run's planned requests (0: unknown): a larger index is no request
	byIndex map[uint32]*joined
	counts  analyze.TraceJoin
	// joinedRequests and withoutSpan count the valid profile requests as the analysis
	// evaluates them.
	joinedRequests, withoutSpan atomic.Int64
	// split sums the TTFT split of the joined requests (analyze.TTFTSplit's fields).
	split [6]atomic.Int64
}

// tally adds request v's TTFT split to the join's sums: queue, prefill, other server time
// (the server's TTFT beyond both) and outside the server, which add up to its TTFT.
func (j *Join) tally(r *joined, v *analyze.RequestView) {
	ttft, ok := v.Value(analyze.MTimeToFirstToken)
	if !ok || !r.has[TTFT] || !r.has[Queue] {
		return
	}
	t := int64(math.Round(ttft * 1e6))
	pre := int64(0)
	if r.has[Prefill] {
		pre = r.ns[Prefill]
	}
	for k, x := range [6]int64{1, t, r.ns[Queue], pre, r.ns[TTFT] - r.ns[Queue] - pre, t - r.ns[TTFT]} {
		j.split[k].Add(x)
	}
}

// joined is the span chosen for one request, and what the join derived from it.
type joined struct {
	name, kind, service string
	spanID              [8]byte
	layout              *Layout
	score               int
	others              int // further spans of the request's trace
	ns                  [numPhases]int64
	has                 [numPhases]bool
	startUnixNs         int64
	attributes          []byte // the span's attributes as a JSON object
}

// Open joins the run in runDirs (their run.json's trace_key) to the spans of file, or,
// when file is "", of each run directory's servertrace.FileName that exists (none: a join
// without spans). It returns nil, nil when the run carried no trace context and no file is
// given: there is nothing to join.
func Open(runDirs []string, file string) (*Join, error) {
	if len(runDirs) == 0 {
		return nil, nil
	}
	man, err := rawlog.ReadManifest(runDirs[0])
	if err != nil {
		return nil, nil // analyze reports the run directory's own problems
	}
	j := &Join{byIndex: map[uint32]*joined{}, planned: int64(man.Counts.Planned)}
	if man.TraceKey != "" {
		if j.key, err = tracectx.ParseKey(man.TraceKey); err != nil {
			return nil, fmt.Errorf("%s: trace_key: %w", filepath.Join(runDirs[0], rawlog.ManifestName), err)
		}
	}
	var files []string
	if file != "" {
		if j.key.IsZero() {
			return nil, fmt.Errorf("--server-traces %s: the run sent no traceparent (its run.json has no trace_key), so no span can be joined to its requests", file)
		}
		files = []string{file}
	} else {
		if j.key.IsZero() {
			return nil, nil
		}
		for _, d := range runDirs {
			if p := filepath.Join(d, servertrace.FileName); fileExists(p) {
				files = append(files, p)
			}
		}
	}
	for _, name := range files {
		if err := j.read(name, file != ""); err != nil {
			return nil, err
		}
	}
	return j, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// read adds the spans of one traces file.
func (j *Join) read(name string, given bool) error {
	f, err := os.Open(name)
	if err != nil {
		if given {
			return fmt.Errorf("--server-traces: %w", err)
		}
		return err
	}
	defer f.Close()
	st, err := servertrace.Read(f, name, j.add)
	if err != nil {
		return err
	}
	c := &j.counts
	if c.Source != "" {
		c.Source += ", "
	}
	c.Source += name
	if c.Layout == "" || c.Layout == st.Layout {
		c.Layout = st.Layout
	} else if st.Layout != "" {
		c.Layout += ", " + st.Layout
	}
	c.Spans += st.Spans
	return nil
}

// add joins one span: to the request its trace id names, the best span of its trace
// (choose) winning. Only what the join keeps of the span is kept: its phases, identity and
// attributes as JSON.
func (j *Join) add(s *servertrace.Span) error {
	i, ok := j.key.Index(s.TraceID)
	if !ok || (j.planned > 0 && int64(i) >= j.planned) {
		j.counts.Unmatched++
		return nil
	}
	j.counts.Matched++
	l, score := choose(s)
	cur := j.byIndex[i]
	if cur != nil {
		cur.others++
		if score <= cur.score {
			return nil
		}
	}
	n := &joined{name: s.Name, kind: s.Kind, service: s.Service, spanID: s.SpanID, layout: l, score: score, startUnixNs: s.StartUnixNs}
	if cur != nil {
		n.others = cur.others
	}
	if l != nil {
		for p := Phase(0); p < numPhases; p++ {
			n.ns[p], n.has[p] = l.phase(s, p)
		}
	}
	n.attributes = []byte("{}")
	if len(s.Attributes) > 0 {
		if b, err := json.Marshal(s.Attributes); err == nil {
			n.attributes = b
		}
	}
	j.byIndex[i] = n
	return nil
}

// Counts are the join's counts, once the analysis has evaluated every request.
func (j *Join) Counts() *analyze.TraceJoin {
	c := j.counts
	c.Joined, c.WithoutSpan = j.joinedRequests.Load(), j.withoutSpan.Load()
	sp := &j.split
	c.Split = analyze.TTFTSplit{Requests: sp[0].Load(), TTFTNs: sp[1].Load(), QueueNs: sp[2].Load(), PrefillNs: sp[3].Load(),
		OtherNs: sp[4].Load(), OutsideNs: sp[5].Load()}
	return &c
}
