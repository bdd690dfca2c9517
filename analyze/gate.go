package analyze

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/internal/suggest"
)

// Gate is one release gate of --gate: "metric.stat OP value", e.g.
// "time_to_first_token.p99<400". The value is in the metric's display unit (ms, tokens/sec).
type Gate struct {
	Expr   string // as given
	Metric MetricDef
	Stat   string // avg, min, max, std, sum, count, p1 … p99, p99.9; "avg" for single values
	Op     string // <, <=, >, >=, ==
	Value  float64
	// Server marks a gate on a server or GPU metric (server.<name>.<stat>, gpu.<field>.<stat>;
	// analyze/servermetrics.go): Metric.Tag is then the name without the statistic.
	Server bool
}

var gateOps = [...]string{"<=", ">=", "==", "<", ">"}

var statNames = func() []string {
	s := []string{"avg", "min", "max", "std", "sum", "count"}
	return append(s, PercentileNames[:]...)
}()

// ParseGate parses one --gate expression. Errors name the flag and say what was expected.
func ParseGate(expr string) (Gate, error) {
	g := Gate{Expr: expr}
	s := strings.TrimSpace(expr)
	at, op := -1, ""
	for _, o := range gateOps {
		if i := strings.Index(s, o); i >= 0 && (at < 0 || i < at || (i == at && len(o) > len(op))) {
			at, op = i, o
		}
	}
	if at < 0 {
		return g, fmt.Errorf("--gate %q: no comparison; want metric.stat<value, e.g. time_to_first_token.p99<400 (operators < <= > >= ==)", expr)
	}
	lhs, rhs := strings.TrimSpace(s[:at]), strings.TrimSpace(s[at+len(op):])
	g.Op = op
	v, err := strconv.ParseFloat(rhs, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return g, fmt.Errorf("--gate %q: %q is not a finite number", expr, rhs)
	}
	g.Value = v
	if strings.HasPrefix(lhs, "server.") || strings.HasPrefix(lhs, "gpu.") {
		return parseServerGate(g, lhs)
	}
	tag, stat, hasStat := strings.Cut(lhs, ".")
	def, ok := LookupMetric(tag)
	if !ok {
		if tag == "" {
			return g, fmt.Errorf("--gate %q: no metric before %s", expr, op)
		}
		return g, fmt.Errorf("--gate %q: unknown metric %q (%ssee docs/metrics.md for tags)", expr, tag, didYouMean(tag, gateMetricNames()))
	}
	g.Metric = def
	if def.Kind != Record {
		if hasStat && stat != "avg" && stat != "value" {
			return g, fmt.Errorf("--gate %q: %s is a single value; write %s%s%s or %s.avg%s%s", expr, tag, tag, op, rhs, tag, op, rhs)
		}
		g.Stat = "avg"
		return g, nil
	}
	if !hasStat {
		return g, fmt.Errorf("--gate %q: %s is a distribution; name a statistic, e.g. %s.p99%s%s (one of %s)", expr, tag, tag, op, rhs, strings.Join(statNames, ", "))
	}
	switch stat {
	case "p99_9", "p999":
		stat = "p99.9"
	case "mean":
		stat = "avg"
	}
	for _, n := range statNames {
		if n == stat {
			g.Stat = stat
			return g, nil
		}
	}
	return g, fmt.Errorf("--gate %q: unknown statistic %q (%sone of %s)", expr, stat, didYouMean(stat, statNames), strings.Join(statNames, ", "))
}

// didYouMean is "did you mean X? " for the name of names nearest to name, "" when none is near.
func didYouMean(name string, names []string) string {
	if s := suggest.Nearest(name, names); s != "" {
		return "did you mean " + s + "? "
	}
	return ""
}

// gateMetricNames are the metric tags a gate may name, with the server and GPU names.
func gateMetricNames() []string {
	names := make([]string, 0, len(catalog))
	for i := range catalog {
		names = append(names, catalog[i].Tag)
	}
	return append(append(names, serverGateNames()...), gpuGateNames()...)
}

// String returns the gate expression.
func (g Gate) String() string { return g.Expr }

// GateResult is the outcome of one gate.
type GateResult struct {
	Gate   Gate
	Actual float64
	// Missing is true when the run has no value for the metric; the gate then fails.
	Missing bool
	OK      bool
	// Why says why a Missing gate could not be evaluated, when more is known than that.
	Why string
}

// holds compares actual with the gate's value.
func (g Gate) holds(actual float64) bool {
	switch g.Op {
	case "<":
		return actual < g.Value
	case "<=":
		return actual <= g.Value
	case ">":
		return actual > g.Value
	case ">=":
		return actual >= g.Value
	case "==":
		return actual == g.Value
	}
	return false
}

// statValue extracts a named statistic.
func statValue(s *Stats, stat string) float64 {
	switch stat {
	case "avg":
		return s.Avg
	case "min":
		return s.Min
	case "max":
		return s.Max
	case "std":
		return s.Std
	case "sum":
		return s.Sum
	case "count":
		return float64(s.Count)
	}
	for i, n := range PercentileNames {
		if n == stat {
			return s.P[i]
		}
	}
	return math.NaN()
}

// EvaluateGates checks every gate against the summary. A gate on a metric the run did not
// produce fails: a release gate that cannot be checked must not pass silently.
func EvaluateGates(s *Summary, gates []Gate) []GateResult {
	out := make([]GateResult, 0, len(gates))
	for _, g := range gates {
		if g.Server {
			out = append(out, evalServerGate(s, g))
			continue
		}
		r := GateResult{Gate: g}
		res, ok := s.Result(g.Metric.Tag)
		switch {
		case !ok:
			r.Missing = true
		case res.Stats != nil:
			r.Actual = statValue(res.Stats, g.Stat)
			r.OK = g.holds(r.Actual)
		default:
			r.Actual = res.Value
			r.OK = g.holds(r.Actual)
		}
		out = append(out, r)
	}
	return out
}

// ErrorRateResult is the outcome of the --max-error-rate check.
type ErrorRateResult struct {
	Errors, Total int64
	Rate, Max     float64
	OK            bool
}

// CheckErrorRate compares the run's error rate (failed profile requests, including lost and
// never-sent ones, over all planned profile requests; cancellations the plan asked for are
// not failures) with max.
func CheckErrorRate(s *Summary, max float64) ErrorRateResult {
	r := ErrorRateResult{Errors: s.Counts.GateErrors, Total: s.Counts.Profile, Max: max}
	if r.Total > 0 {
		r.Rate = float64(r.Errors) / float64(r.Total)
	}
	r.OK = r.Rate <= max
	return r
}
