// Package window judges one adaptive-scale window: from the per-request records of the
// requests that ran inside it, each SLA's value (a statistic of a per-request metric, or a
// window rate: error, success and cancellation rates, request, output-token and goodput
// throughput, goodput ratio), whether it holds, and the binding SLA. The in-run controller
// and analyze's audit both judge through it, so a window recomputed offline from the raw
// logs gives the controller's numbers.
//
// A record's metric values come from analyze's per-request code (analyze.RequestAnalyzer,
// which the live OpenTelemetry export also uses), and a distribution's statistics from
// analyze/accum, the definitions analyze's console reports (numpy's linear percentiles,
// population std): a window's TTFT p95 is computed as the run's is.
//
// It imports adaptive (the SLA spec), analyze (the registry, a request's metrics),
// analyze/accum and internal/suggest; never replay or anything that runs a benchmark.
package window

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/llmbench/llmbench/adaptive"
	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/analyze/accum"
	"github.com/llmbench/llmbench/internal/suggest"
)

// Kind is how an SLA's value is taken from a window's requests.
type Kind uint8

const (
	// Distribution: a statistic of a per-request metric over the window's requests that
	// have a value (successful ones; failed ones too for metrics kept for them).
	Distribution Kind = iota + 1
	// ErrorRate: failed requests (neither successful nor cancelled) over attempts.
	ErrorRate
	// SuccessRate: successful requests over attempts.
	SuccessRate
	// CancellationRate: cancelled requests over attempts.
	CancellationRate
	// RequestThroughput: successful requests per second of the window.
	RequestThroughput
	// OutputTokenThroughput: output tokens of successful requests per second of the window.
	OutputTokenThroughput
	// Goodput: successful requests that meet every Distribution SLA of the set, taken for
	// that one request (AIPerf's per-request quality filters), per second of the window.
	Goodput
	// GoodputRatio: those requests over attempts.
	GoodputRatio
)

// windowRates are the names of the window-level metrics, AIPerf's tags and aliases, with
// their kind; rateTags their canonical tags.
var windowRates = map[string]Kind{
	"error_rate": ErrorRate, "request_error_rate": ErrorRate,
	"success_rate": SuccessRate, "request_success_rate": SuccessRate,
	"cancellation_rate": CancellationRate, "request_cancellation_rate": CancellationRate,
	"throughput": RequestThroughput, "request_throughput": RequestThroughput, "completed_request_throughput": RequestThroughput,
	"output_token_throughput": OutputTokenThroughput,
	"goodput":                 Goodput,
	"goodput_ratio":           GoodputRatio,
}

var rateTags = map[Kind]string{ErrorRate: "error_rate", SuccessRate: "success_rate", CancellationRate: "cancellation_rate",
	RequestThroughput: "request_throughput", OutputTokenThroughput: "output_token_throughput", Goodput: "goodput", GoodputRatio: "goodput_ratio"}

var rateUnits = map[Kind]string{ErrorRate: "ratio", SuccessRate: "ratio", CancellationRate: "ratio", RequestThroughput: "requests/sec",
	OutputTokenThroughput: "tokens/sec", Goodput: "requests/sec", GoodputRatio: "ratio"}

// recordAliases are AIPerf's adaptive-scale spellings of per-request metrics that are not
// analyze tags.
var recordAliases = map[string]string{"ttft": "time_to_first_token", "itl": "inter_token_latency", "tpot": "inter_token_latency",
	"e2e_latency": "request_latency"}

// rateStats are the statistics a window rate accepts: one value, so all three are it.
var rateStats = []string{"avg", "min", "max"}

// Criterion is one SLA resolved: what its metric is and how its value is taken.
type Criterion struct {
	adaptive.SLA
	// Tag is the metric's canonical name (time_to_first_token for ttft); Unit its display
	// unit; Stat (in SLA) is made canonical too (mean is avg).
	Tag, Unit string
	Kind      Kind
	// NeedsStream: the metric has values only in a streaming run.
	NeedsStream bool
	id          analyze.MetricID
	failed      bool
}

// Criteria are a window's SLAs, resolved against a registry, in the order given.
type Criteria struct {
	list []Criterion
}

// Resolve resolves each SLA's metric and statistic against reg (nil: the built-in
// metrics): a window rate (error_rate, success_rate, cancellation_rate, request_throughput,
// output_token_throughput, goodput, goodput_ratio and AIPerf's aliases of them), AIPerf's
// adaptive aliases (ttft, itl, tpot), a metric tag or its short name (ttft_ms), user metrics
// included. Errors are one line naming the SLA.
func Resolve(slas []adaptive.SLA, reg *analyze.Registry) (*Criteria, error) {
	c := &Criteria{}
	quality := false
	for _, s := range slas {
		cr, err := resolveOne(s, reg)
		if err != nil {
			return nil, err
		}
		quality = quality || cr.Kind == Distribution
		c.list = append(c.list, cr)
	}
	for _, cr := range c.list {
		if (cr.Kind == Goodput || cr.Kind == GoodputRatio) && !quality {
			return nil, fmt.Errorf("adaptive-scale SLA %q: %s counts the requests that meet the per-request SLAs, and there is none: add one (e.g. ttft:p95:le:200)", cr.String(), cr.Tag)
		}
	}
	return c, nil
}

func resolveOne(s adaptive.SLA, reg *analyze.Registry) (Criterion, error) {
	cr := Criterion{SLA: s}
	if k, ok := windowRates[s.Metric]; ok {
		if s.Stat == "mean" {
			cr.Stat = "avg"
		}
		if !slices.Contains(rateStats, cr.Stat) {
			return cr, fmt.Errorf("adaptive-scale SLA %q: %s is one value per window: its statistic is avg, min or max, not %q", s.String(), s.Metric, s.Stat)
		}
		cr.Kind, cr.Tag, cr.Unit = k, rateTags[k], rateUnits[k]
		return cr, nil
	}
	name := s.Metric
	if t, ok := recordAliases[name]; ok {
		name = t
	}
	d, ok := reg.Lookup(name)
	if !ok {
		for _, m := range reg.Metrics() {
			if m.Var != "" && m.Var == name {
				d, ok = m, true
				break
			}
		}
	}
	if !ok {
		hint := ""
		if n := suggest.Nearest(s.Metric, names(reg)); n != "" {
			hint = ": did you mean " + n + "?"
		}
		return cr, fmt.Errorf("adaptive-scale SLA %q: no metric %q%s", s.String(), s.Metric, hint)
	}
	if !d.OneValue() {
		return cr, fmt.Errorf("adaptive-scale SLA %q: %s is not a per-request metric nor a window rate (error_rate, success_rate, cancellation_rate, request_throughput, output_token_throughput, goodput, goodput_ratio)", s.String(), d.Tag)
	}
	switch cr.Stat {
	case "mean":
		cr.Stat = "avg"
	case "p99_9", "p999":
		cr.Stat = "p99.9"
	}
	if !slices.Contains(analyze.StatNames, cr.Stat) {
		return cr, fmt.Errorf("adaptive-scale SLA %q: statistic %q: want one of %s", s.String(), s.Stat, strings.Join(analyze.StatNames, ", "))
	}
	cr.Kind, cr.Tag, cr.Unit, cr.id, cr.failed, cr.NeedsStream = Distribution, d.Tag, d.Unit, d.ID, d.ForFailedRequests(), d.NeedsStream()
	return cr, nil
}

// names are every name Resolve accepts, for "did you mean".
func names(reg *analyze.Registry) []string {
	var out []string
	for n := range windowRates {
		out = append(out, n)
	}
	for n := range recordAliases {
		out = append(out, n)
	}
	for _, m := range reg.Metrics() {
		if m.OneValue() {
			out = append(out, m.Tag)
		}
	}
	return out
}

// List returns the criteria, in the order of the SLAs.
func (c *Criteria) List() []Criterion { return slices.Clone(c.list) }

// NeedsStream reports the first criterion whose metric needs a streaming run, false when none.
func (c *Criteria) NeedsStream() (Criterion, bool) {
	for _, cr := range c.list {
		if cr.NeedsStream {
			return cr, true
		}
	}
	return Criterion{}, false
}

// Record is one finished request as a window judges it.
type Record struct {
	// StartNs and EndNs are when the request was sent and when it ended, on the clock of
	// the per-request export's request_start_ns and request_end_ns (Unix nanoseconds).
	StartNs, EndNs int64
	// Valid: the request succeeded (analyze's valid record); Cancelled: it was cancelled.
	Valid, Cancelled bool
	// OutputTokens is a successful request's output sequence length (0 otherwise).
	OutputTokens float64
	// Values holds each criterion's per-request value, by criterion index; NaN for none
	// (and for window rates).
	Values []float64
}

// Record takes what the criteria need from one request's metrics m (analyze's
// RequestAnalyzer), sent at startNs and ended at endNs on the per-request export's clock.
func (c *Criteria) Record(m analyze.RequestMetrics, startNs, endNs int64) Record {
	r := Record{StartNs: startNs, EndNs: endNs, Valid: m.Valid(), Cancelled: m.ErrorKind() == "cancelled", Values: make([]float64, len(c.list))}
	if r.Valid {
		if v, ok := m.Value(analyze.MOutputSequenceLength); ok {
			r.OutputTokens = v
		}
	}
	for i, cr := range c.list {
		r.Values[i] = math.NaN()
		if cr.Kind != Distribution || !r.Valid && !cr.failed {
			continue
		}
		if v, ok := m.Value(cr.id); ok {
			r.Values[i] = v
		}
	}
	return r
}

// Bounds are a window's bounds on the per-request export's clock: it judges the requests
// sent in [StartNs, EndNs) that ended before EndNs.
type Bounds struct{ StartNs, EndNs int64 }

// Value is one SLA's outcome in a window.
type Value struct {
	Criterion Criterion
	// Value is the measured value in the metric's display unit; NaN when the window has
	// none (no request with a value): the SLA then fails, as AIPerf's missing samples do.
	Value float64
	// Samples are the values a distribution's statistic was taken over (the attempts for a
	// rate).
	Samples int
	Passed  bool
	// Margin is Criterion.Margin(Value): how far inside the bound, as a fraction.
	Margin float64
}

// Verdict is a judged window.
type Verdict struct {
	Bounds
	// Completed are the requests judged: sent inside the window and ended before its end,
	// whatever their outcome (the attempts of the rates); Succeeded the successful ones.
	Completed, Succeeded int
	// Straddling are the requests that overlap the window without lying inside it (sent
	// before it and ended inside it, or sent inside it and ended at or after its end):
	// counted apart, never judged.
	Straddling int
	// Values has one entry per criterion, in order.
	Values []Value
	// Passed: every SLA held. Binding is the Spelling of the SLA with the least margin
	// among the failing ones when any fails, else among all (the first on a tie).
	Passed  bool
	Binding string
}

// Judge judges the window b over records (any records: those outside b are ignored, those
// overlapping it counted as straddling).
func (c *Criteria) Judge(records []Record, b Bounds) Verdict {
	v := Verdict{Bounds: b, Values: make([]Value, len(c.list))}
	inside := make([]*Record, 0, len(records))
	for i := range records {
		r := &records[i]
		switch {
		case r.StartNs >= b.StartNs && r.StartNs < b.EndNs && r.EndNs < b.EndNs:
			inside = append(inside, r)
		case r.StartNs >= b.StartNs && r.StartNs < b.EndNs, r.StartNs < b.StartNs && r.EndNs >= b.StartNs && r.EndNs < b.EndNs:
			v.Straddling++
		}
	}
	v.Completed = len(inside)
	var cancelled, good int
	var tokens float64
	for _, r := range inside {
		switch {
		case r.Valid:
			v.Succeeded++
			tokens += r.OutputTokens
			if c.good(r) {
				good++
			}
		case r.Cancelled:
			cancelled++
		}
	}
	secs := float64(b.EndNs-b.StartNs) / 1e9
	attempts := float64(v.Completed)
	ratio := func(n int) float64 {
		if v.Completed == 0 {
			return math.NaN()
		}
		return float64(n) / attempts
	}
	perSec := func(x float64) float64 {
		if !(secs > 0) {
			return math.NaN()
		}
		return x / secs
	}
	v.Passed = true
	best, bestFails := math.Inf(1), false
	for i, cr := range c.list {
		val := Value{Criterion: cr, Samples: v.Completed}
		switch cr.Kind {
		case Distribution:
			val.Value, val.Samples = distribution(inside, i, cr.Stat)
		case ErrorRate:
			val.Value = ratio(v.Completed - v.Succeeded - cancelled)
		case SuccessRate:
			val.Value = ratio(v.Succeeded)
		case CancellationRate:
			val.Value = ratio(cancelled)
		case RequestThroughput:
			val.Value = perSec(float64(v.Succeeded))
		case OutputTokenThroughput:
			val.Value = perSec(tokens)
		case Goodput:
			val.Value = perSec(float64(good))
		case GoodputRatio:
			val.Value = ratio(good)
		}
		val.Passed = cr.Holds(val.Value)
		val.Margin = cr.Margin(val.Value)
		v.Passed = v.Passed && val.Passed
		// A failing SLA binds before any passing one (a strict bound fails on a zero margin).
		if v.Binding == "" || !val.Passed && !bestFails || val.Passed == !bestFails && val.Margin < best {
			best, bestFails, v.Binding = val.Margin, !val.Passed, cr.Spelling
		}
		v.Values[i] = val
	}
	return v
}

// good reports whether successful request r meets every Distribution SLA taken for it alone.
func (c *Criteria) good(r *Record) bool {
	for i, cr := range c.list {
		if cr.Kind == Distribution && !cr.Holds(r.Values[i]) {
			return false
		}
	}
	return true
}

// distribution is statistic stat of the values of criterion i over records, through
// analyze/accum (exact: a window's values are few), and how many values there were.
func distribution(records []*Record, i int, stat string) (float64, int) {
	d := accum.NewDist(len(records)+1, 1)
	n := 0
	for _, r := range records {
		if x := r.Values[i]; !math.IsNaN(x) {
			d.Add(x)
			n++
		}
	}
	s := d.Stats(1)
	if s == nil {
		return math.NaN(), 0
	}
	return s.Stat(stat), n
}

// SLAValues is the verdict's values keyed by SLA spelling, as an adaptive_window event's
// sla_values holds them; an SLA without a value (NaN) is left out.
func (v Verdict) SLAValues() map[string]float64 {
	out := make(map[string]float64, len(v.Values))
	for _, x := range v.Values {
		if !math.IsNaN(x.Value) && !math.IsInf(x.Value, 0) {
			out[x.Criterion.Spelling] = x.Value
		}
	}
	return out
}
