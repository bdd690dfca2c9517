package adaptive

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/sweep"
)

// SLA is one bound an adaptive-scale window is judged by: AIPerf's
// --adaptive-scale-sla METRIC:STAT:OP:THRESHOLD (request_latency:p95:le:30000), the same
// syntax as its --search-sla, which package sweep parses for both. The metric and the
// statistic are kept as written; package adaptive/window resolves them against analyze's
// metric registry (tags, AIPerf's adaptive aliases such as ttft and itl, user metrics) and
// the window-level rates (error_rate, goodput, ...). Thresholds are in the metric's display
// unit: milliseconds for latencies, a fraction for rates, per second for throughputs.
type SLA struct {
	Metric, Stat string
	// Op is <, <=, > or >= (AIPerf's lt, le, gt, ge).
	Op        string
	Threshold float64
	// Spelling is METRIC:STAT as written (lower case), the key of the SLA's value in an
	// adaptive_window event's sla_values and the name binding_sla gives.
	Spelling string
}

// opWords are AIPerf's names of the comparisons, by symbol.
var opWords = map[string]string{"<": "lt", "<=": "le", ">": "gt", ">=": "ge"}

// ParseSLA parses one --adaptive-scale-sla value, METRIC:STAT:OP:THRESHOLD with OP lt, le,
// gt or ge (or <, <=, >, >=). Errors are one line naming the spec.
func ParseSLA(s string) (SLA, error) {
	sw, err := sweep.ParseSLA(s)
	if err != nil {
		return SLA{}, fmt.Errorf("adaptive-scale SLA %w", err)
	}
	m, st := strings.ToLower(sw.Metric), strings.ToLower(sw.Stat)
	return SLA{Metric: m, Stat: st, Op: sw.Op, Threshold: sw.Value, Spelling: m + ":" + st}, nil
}

// ParseSLAs parses each spec with ParseSLA and refuses two SLAs of one spelling (their
// values would share one key of sla_values).
func ParseSLAs(specs []string) ([]SLA, error) {
	out := make([]SLA, 0, len(specs))
	seen := map[string]string{}
	for _, s := range specs {
		sla, err := ParseSLA(s)
		if err != nil {
			return nil, err
		}
		if prev, ok := seen[sla.Spelling]; ok {
			return nil, fmt.Errorf("adaptive-scale SLA %q: %s is already bounded by %q: give one bound per metric and statistic", s, sla.Spelling, prev)
		}
		seen[sla.Spelling] = s
		out = append(out, sla)
	}
	return out, nil
}

// String is the SLA as AIPerf writes it, METRIC:STAT:OP:THRESHOLD with OP a word
// (ttft:p95:le:120); ParseSLA reads it back to the same SLA.
func (s SLA) String() string {
	return s.Spelling + ":" + opWords[s.Op] + ":" + strconv.FormatFloat(s.Threshold, 'g', -1, 64)
}

// Holds reports whether value v meets the SLA. NaN (no value) never does.
func (s SLA) Holds(v float64) bool {
	switch s.Op {
	case "<":
		return v < s.Threshold
	case "<=":
		return v <= s.Threshold
	case ">":
		return v > s.Threshold
	case ">=":
		return v >= s.Threshold
	}
	return false
}

// Margin is how far v is inside the bound, as a fraction of the threshold: positive when
// v passes with room, 0 on the bound, negative when it fails (AIPerf's normalized margin,
// whose smallest value over a window's SLAs names the binding SLA and sizes a margin step).
// A zero threshold gives the plain difference; NaN (no value) gives -Inf.
func (s SLA) Margin(v float64) float64 {
	if math.IsNaN(v) {
		return math.Inf(-1)
	}
	d := s.Threshold - v
	if s.Op == ">" || s.Op == ">=" {
		d = -d
	}
	if s.Threshold != 0 {
		d /= math.Abs(s.Threshold)
	}
	return d
}
