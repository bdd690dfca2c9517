package sweep

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// SLA is one service-level bound of a search: the run's Stat of Metric compared by Op with
// Value, in the metric's display unit (AIPerf's --search-sla METRIC:STAT:OP:VALUE, e.g.
// time_to_first_token:p95:le:200).
type SLA struct {
	Metric, Stat string
	Op           string // <, <=, > or >=
	Value        float64
}

// slaOps maps AIPerf's operator names (and the symbols) onto the symbols.
var slaOps = map[string]string{"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}

// ParseSLA parses METRIC:STAT:OP:VALUE; OP is lt, le, gt or ge (or <, <=, >, >=). The
// metric and the statistic are checked by the caller, which knows the catalog.
func ParseSLA(s string) (SLA, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 4 {
		return SLA{}, fmt.Errorf("%q: want METRIC:STAT:OP:VALUE, e.g. time_to_first_token:p95:le:200", s)
	}
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	op, ok := slaOps[strings.ToLower(parts[2])]
	if !ok {
		return SLA{}, fmt.Errorf("%q: operator %q: want lt, le, gt or ge", s, parts[2])
	}
	v, err := strconv.ParseFloat(parts[3], 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return SLA{}, fmt.Errorf("%q: threshold %q is not a number", s, parts[3])
	}
	if parts[0] == "" || parts[1] == "" {
		return SLA{}, fmt.Errorf("%q: want METRIC:STAT:OP:VALUE with a metric and a statistic", s)
	}
	return SLA{Metric: parts[0], Stat: parts[1], Op: op, Value: v}, nil
}

// String is the SLA as a gate expression, metric.stat OP value (analyze's --gate syntax),
// e.g. time_to_first_token.p95<=200.
func (s SLA) String() string {
	return s.Metric + "." + s.Stat + s.Op + strconv.FormatFloat(s.Value, 'g', -1, 64)
}
