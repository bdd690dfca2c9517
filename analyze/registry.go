package analyze

import (
	"fmt"
	"math"
	"slices"

	"github.com/llmbench/llmbench/analyze/record"
	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/mmapds"
)

// Registry holds the metrics one analysis computes: the built-in ones (builtin.go), with
// their fixed ids and order, and the metrics a user defines at run time, which join after
// them (as k6's metrics.Registry holds its built-in and custom metrics). Every output reads
// its metrics from the registry the analysis ran with (Options.Metrics, Summary.Registry):
// the console table, the JSON, CSV and JSONL exports, the time slices, report.html, gates,
// goodput and `analyze compare`, so a registered metric appears in all of them.
//
// A nil *Registry is the built-in metrics alone. Register metrics before the registry is
// used (parsing gates against it, analysing with it); it is not safe for concurrent
// registration, and safe for concurrent use once complete.
type Registry struct {
	// defs, perRequest and perRun are indexed by MetricID: the built-ins, then the user
	// metrics in registration order.
	defs       []MetricDef
	perRequest []func(*facts) (float64, bool)
	perRun     []func(*runFacts) scalar
	byTag      map[string]MetricID
	// computed are the built-in record metrics that have a per-request formula, in id order;
	// records every record metric with values of its own (aliases excepted); user the user
	// metrics' evaluators, in registration order.
	computed []MetricID
	records  []MetricID
	user     []userEval
	// columns are the record metrics' profile_export.jsonl columns, in records' order.
	columns []record.Column
}

// userEval is a registered user metric's evaluator.
type userEval struct {
	id     MetricID
	failed bool
	eval   func(*RequestView) (float64, bool)
}

// builtins is the registry of the built-in metrics, which a nil *Registry stands for.
var builtins = newBuiltins()

// catalog is the built-in metrics' definitions, indexed by MetricID.
var catalog = func() (c [numMetrics]MetricDef) {
	copy(c[:], builtins.defs)
	return c
}()

func newBuiltins() *Registry {
	entries := builtinEntries()
	r := &Registry{byTag: map[string]MetricID{}}
	for i, e := range entries {
		d := e.def
		if d.ID != MetricID(i) || d.Tag == "" {
			panic(fmt.Sprintf("analyze: built-in metric %d (%q) is out of MetricID order", i, d.Tag)) // a programming error caught by any test
		}
		if d.Alias >= 0 {
			// An alias shows its target's values: their unit, scale and sampling.
			t := entries[d.Alias].def
			d.Unit, d.div, d.hdrScale, d.Sampling, d.stream, d.Int = t.Unit, t.div, t.hdrScale, t.Sampling, t.stream, t.Int
		}
		r.add(d, e.perRequest, e.perRun)
	}
	if len(r.defs) != int(numMetrics) {
		panic("analyze: the built-in table and the MetricID list differ")
	}
	return r
}

// add appends d under the next id.
func (r *Registry) add(d MetricDef, perRequest func(*facts) (float64, bool), perRun func(*runFacts) scalar) {
	id := MetricID(len(r.defs))
	d.ID = id
	r.defs = append(r.defs, d)
	r.perRequest = append(r.perRequest, perRequest)
	r.perRun = append(r.perRun, perRun)
	r.byTag[d.Tag] = id
	if perRequest != nil {
		r.computed = append(r.computed, id)
	}
	if d.Kind == Record && d.Alias < 0 {
		r.records = append(r.records, id)
		c := record.NewColumn(int(id), d.Tag, d.Unit)
		c.Int, c.NsToMs, c.Div, c.Failed = d.Int, d.div == nsToMs, d.div, d.failed
		switch id {
		case MInterChunkLatency:
			c.List = record.ListICL
		case MEventsPerRead:
			c.List = record.ListEPR
		}
		r.columns = append(r.columns, c)
	}
}

// NewRegistry returns a registry holding the built-in metrics, to which user metrics can be
// added with Register.
func NewRegistry() *Registry {
	b := builtins
	r := &Registry{defs: slices.Clone(b.defs), perRequest: slices.Clone(b.perRequest), perRun: slices.Clone(b.perRun),
		byTag: make(map[string]MetricID, len(b.byTag)), computed: slices.Clone(b.computed),
		records: slices.Clone(b.records), columns: slices.Clone(b.columns)}
	for k, v := range b.byTag {
		r.byTag[k] = v
	}
	return r
}

// or returns r, or the built-ins when r is nil.
func (r *Registry) or() *Registry {
	if r == nil {
		return builtins
	}
	return r
}

// UserMetric is a metric defined at run time (analyze --metric, docs/metrics.md "User
// metrics"): a per-request distribution like the built-in record metrics, computed by Eval
// for every valid profile request (every sent one with Failed), reported in Unit.
type UserMetric struct {
	// Name is the metric's tag in every output and expression: a lower-case letter or
	// underscore, then lower-case letters, digits or underscores, at most 64 in all; not a
	// built-in tag, nor "server" or "gpu" (the server and GPU metrics' prefixes).
	Name string
	// Unit is the display unit of Eval's values ("" for none).
	Unit string
	// Description says what the metric is (the report shows it as its definition).
	Description string
	// Expression is the metric's definition as the user wrote it (analyze --metric), which
	// the exports record; "" when it has none to show.
	Expression string
	// LargerIsBetter gives the direction of goodput objectives and of a comparison's
	// "worse" (default: smaller is better, as for latencies).
	LargerIsBetter bool
	// Failed also evaluates the metric for failed requests that were sent.
	Failed bool
	// Eval gives the request's value in Unit. No value (ok false, or NaN) skips the request
	// for this metric; Result.Skipped counts the skipped requests. It is called from the
	// goroutines reading the logs, several at once, with a view valid only during the call.
	Eval func(r *RequestView) (v float64, ok bool)
}

// maxNameLen bounds a user metric's name.
const maxNameLen = 64

// MaxUserMetrics bounds how many metrics one registry takes at run time: each holds a value
// per request in memory wherever per-request values are kept (report.Records).
const MaxUserMetrics = 256

// userOrder places user metrics after every built-in in the console table.
const userOrder = 10000

// Register adds a user metric and returns its definition. It fails, saying why, on a name
// that is not allowed or already taken, or a metric without Eval.
func (r *Registry) Register(m UserMetric) (MetricDef, error) {
	if r == nil || r == builtins {
		return MetricDef{}, fmt.Errorf("analyze: metric %q: register on a NewRegistry, not the built-in one", m.Name)
	}
	if err := CheckMetricName(m.Name); err != nil {
		return MetricDef{}, err
	}
	if id, ok := r.byTag[m.Name]; ok {
		if r.defs[id].User {
			return MetricDef{}, fmt.Errorf("analyze: metric %q is defined twice", m.Name)
		}
		return MetricDef{}, fmt.Errorf("analyze: metric %q is a built-in metric (docs/metrics.md): choose another name", m.Name)
	}
	if m.Eval == nil {
		return MetricDef{}, fmt.Errorf("analyze: metric %q has no evaluator", m.Name)
	}
	if len(r.user) >= MaxUserMetrics {
		return MetricDef{}, fmt.Errorf("analyze: metric %q: more than %d user metrics", m.Name, MaxUserMetrics)
	}
	for _, c := range m.Unit {
		if c < ' ' || c == 0x7f {
			return MetricDef{}, fmt.Errorf("analyze: metric %q: its unit %q has a control character", m.Name, m.Unit)
		}
	}
	d := MetricDef{Tag: m.Name, Header: m.Name, Unit: m.Unit, Kind: Record, Origin: OriginUser, Console: true,
		LargerIsBetter: m.LargerIsBetter, Alias: -1, User: true, Description: m.Description, Expression: m.Expression, failed: m.Failed,
		div: 1, hdrScale: 1000, order: userOrder + len(r.user)}
	r.add(d, nil, nil)
	d = r.defs[len(r.defs)-1]
	r.user = append(r.user, userEval{id: d.ID, failed: m.Failed, eval: m.Eval})
	return d, nil
}

// CheckMetricName says what is wrong with a user metric's name, nil when nothing.
func CheckMetricName(name string) error {
	bad := name == "" || len(name) > maxNameLen || (name[0] >= '0' && name[0] <= '9')
	for _, c := range []byte(name) {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			bad = true
		}
	}
	if bad {
		return fmt.Errorf("analyze: metric name %q: want a lower-case letter or _, then lower-case letters, digits or _ (at most %d), e.g. third_event_ms", name, maxNameLen)
	}
	if name == "server" || name == "gpu" {
		return fmt.Errorf("analyze: metric name %q is reserved: %s.NAME are the %s metrics (docs/metrics.md \"Server metrics\")", name, name, name)
	}
	return nil
}

// Lookup returns the definition of the metric with the given tag.
func (r *Registry) Lookup(tag string) (MetricDef, bool) {
	r = r.or()
	if id, ok := r.byTag[tag]; ok {
		return r.defs[id], true
	}
	return MetricDef{}, false
}

// Metrics returns every metric of the registry, in MetricID order.
func (r *Registry) Metrics() []MetricDef { return slices.Clone(r.or().defs) }

// Compared returns the per-request metrics `analyze compare` compares: the built-in ones in
// their order, then the user metrics.
func (r *Registry) Compared() []MetricDef {
	r = r.or()
	out := make([]MetricDef, 0, len(compareOrder)+len(r.user))
	for _, id := range compareOrder {
		out = append(out, r.defs[id])
	}
	for _, u := range r.user {
		out = append(out, r.defs[u.id])
	}
	return out
}

// def returns the definition of id.
// UserMetricDefs returns the user metrics' definitions, in the order they were registered.
func (r *Registry) UserMetricDefs() []MetricDef {
	r = r.or()
	out := make([]MetricDef, 0, len(r.user))
	for _, u := range r.user {
		out = append(out, r.defs[u.id])
	}
	return out
}

func (r *Registry) def(id MetricID) *MetricDef { return &r.or().defs[id] }

// has reports whether d is the registry's metric of its id (not one of another registry).
func (r *Registry) has(d MetricDef) bool {
	r = r.or()
	return d.ID >= 0 && int(d.ID) < len(r.defs) && r.defs[d.ID].Tag == d.Tag
}

// Metrics returns the built-in metrics, in MetricID order.
func Metrics() []MetricDef { return builtins.Metrics() }

// LookupMetric returns the definition of the built-in metric with the given tag.
func LookupMetric(tag string) (MetricDef, bool) { return builtins.Lookup(tag) }

// RequestView is one request as a user metric's evaluator sees it: the built-in metrics'
// values (and those of the user metrics registered before), what the raw record and the plan
// say of it. Times are nanoseconds on the run's monotonic clock (the worker's run.json
// start is 0). A view is valid only during the call it is given to.
type RequestView struct {
	p *processor
}

// Value returns the request's value of metric id in its display unit, false when it has
// none (or the metric is not per-request: pooled gaps, CPU samples, single values).
func (v *RequestView) Value(id MetricID) (float64, bool) {
	if id < 0 || int(id) >= len(v.p.reg.defs) {
		return 0, false
	}
	if d := v.p.reg.def(id); d.Kind != Record || d.Sampling != PerRequest {
		return 0, false
	}
	return v.p.value(id)
}

// Valid reports whether the request succeeded (docs/metrics.md: valid requests).
func (v *RequestView) Valid() bool { return v.p.m.Valid }

// ErrorKind is the error class of a failed request (http_500, timeout, ...), "" for a valid
// one.
func (v *RequestView) ErrorKind() string {
	if e := v.p.m.Err; e != nil {
		return e.Kind
	}
	return ""
}

// Status is the HTTP status, 0 when none was received.
func (v *RequestView) Status() int { return v.p.m.Status }

// Phase is the plan phase: profile (evaluators see no warmup request).
func (v *RequestView) Phase() mmapds.Phase { return v.p.m.Phase }

// Session and Turn are the request's conversation and turn in the plan; Worker the worker
// that sent it.
func (v *RequestView) Session() uint32 { return v.p.m.Session }

// Turn is the request's turn in its session.
func (v *RequestView) Turn() uint32 { return v.p.m.Turn }

// Worker is the worker that sent the request.
func (v *RequestView) Worker() int { return v.p.m.Worker }

// IntendedNs is the instant the plan had the request sent (-1: as soon as a slot was free);
// SendNs the instant its write began (-1: not sent).
func (v *RequestView) IntendedNs() int64 { return v.p.m.IntendedNs }

// SendNs is the instant the request's write began, -1 when it was not sent.
func (v *RequestView) SendNs() int64 { return v.p.m.SendNs }

// AppendContentNs appends to dst each content event's arrival in ns since the write began
// (the first is the TTFT of a streamed response) and returns the extended slice.
func (v *RequestView) AppendContentNs(dst []int64) []int64 {
	send := v.p.m.SendNs
	for _, t := range v.p.f.times {
		dst = append(dst, t-send)
	}
	return dst
}

// GapsNs are the gaps between consecutive content events of a valid streamed response (the
// inter-chunk latencies), valid only during the call.
func (v *RequestView) GapsNs() []int64 { return v.p.m.ICL }

// EventsPerRead holds, for each socket read that completed a content event, how many it
// completed; valid only during the call.
func (v *RequestView) EventsPerRead() []int32 { return v.p.m.EPR }

// Usage is the server's usage block of a valid response (Has says which fields it sent).
func (v *RequestView) Usage() endpoint.Usage { return v.p.f.usage }

// view is the processor's current request as evaluators see it (a user metric's; a request
// filter or grouping would see the same).
// It is the processor's own, so evaluating allocates nothing.
func (p *processor) view() *RequestView {
	p.rv.p = p
	return &p.rv
}

// evalUser evaluates the user metrics for the processor's current request, a profile one
// that is valid (or sent, for a metric of failed requests too).
func (p *processor) evalUser() {
	m := &p.m
	if m.Phase != mmapds.PhaseProfile {
		return
	}
	view := p.view()
	for _, u := range p.reg.user {
		if !m.Valid && !(u.failed && m.Sent) {
			continue
		}
		if v, ok := u.eval(view); ok && !math.IsNaN(v) {
			set(m, u.id, v)
		}
	}
}

// userNotes say, for each user metric, how many requests had no value for it.
func userNotes(r *Registry, c *collector) []string {
	var out []string
	for _, u := range r.or().user {
		n := c.skipped[u.id]
		if n == 0 || !r.def(u.id).User { // a joined metric's counts are its own (joined.go)
			continue
		}
		d := r.def(u.id)
		of := c.valid
		if u.failed {
			of = c.sent
		}
		out = append(out, fmt.Sprintf("metric %s: %d of %d requests had no value and were skipped (llmbench.extra_stats.%s.skipped)",
			d.Tag, n, of, d.Tag))
	}
	return out
}
