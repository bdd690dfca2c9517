package analyze

import (
	"fmt"
	"strings"
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

var statNames = func() []string {
	s := []string{"avg", "min", "max", "std", "sum", "count"}
	return append(s, PercentileNames[:]...)
}()

// ParseGate parses one --gate expression against the built-in metrics (Registry.ParseGate).
func ParseGate(expr string) (Gate, error) { return builtins.ParseGate(expr) }

// ParseGate parses one --gate expression, NAME.STAT OP VALUE, its name one of the registry's
// metrics or a server or GPU metric (expr.go). Errors name the flag and say what was
// expected, with the nearest known name or statistic to a misspelt one.
func (r *Registry) ParseGate(expr string) (Gate, error) {
	g := Gate{Expr: expr}
	lhs, op, rhs, ok := splitComparison(expr)
	if !ok {
		return g, fmt.Errorf("--gate %q: no comparison; want metric.stat<value, e.g. time_to_first_token.p99<400 (operators < <= > >= ==)", expr)
	}
	g.Op = op
	v, ok := parseFinite(rhs)
	if !ok {
		return g, fmt.Errorf("--gate %q: %q is not a finite number", expr, rhs)
	}
	g.Value = v
	ref := splitRef(lhs)
	t, found := r.resolve(ref.name, scopeMetrics|scopeServer)
	switch {
	case !found && isServerName(ref.name):
		server, gpu := serverGateNames(), gpuGateNames()
		return g, fmt.Errorf("--gate %q: unknown server metric %q (%sserver.<name> of docs/metrics.md \"Server metrics\": %s; or gpu.<field>: %s)",
			expr, ref.name, didYouMean(ref.name, append(server, gpu...)), strings.Join(server, ", "), strings.Join(gpu, ", "))
	case !found && ref.name == "":
		return g, fmt.Errorf("--gate %q: no metric before %s", expr, op)
	case !found:
		return g, fmt.Errorf("--gate %q: unknown metric %q (%ssee docs/metrics.md for tags)", expr, ref.name, didYouMean(ref.name, r.names(scopeMetrics|scopeServer)))
	}
	stat, stats := "avg", t.stats()
	switch {
	case t.server():
		if stat, ok = t.statistic(ref.stat); !ok {
			return g, fmt.Errorf("--gate %q: %s is a %s; its statistics are %s", expr, ref.name, t.kind, strings.Join(stats, ", "))
		}
	case stats == nil:
		if ref.hasStat && ref.stat != "avg" && ref.stat != "value" {
			return g, fmt.Errorf("--gate %q: %s is a single value; write %s%s%s or %s.avg%s%s", expr, ref.name, ref.name, op, rhs, ref.name, op, rhs)
		}
	case !ref.hasStat:
		return g, fmt.Errorf("--gate %q: %s is a distribution; name a statistic, e.g. %s.p99%s%s (one of %s)", expr, ref.name, ref.name, op, rhs, strings.Join(stats, ", "))
	default:
		if stat, ok = t.statistic(ref.stat); !ok {
			return g, fmt.Errorf("--gate %q: unknown statistic %q (%sone of %s)", expr, ref.stat, didYouMean(ref.stat, stats), strings.Join(stats, ", "))
		}
	}
	g.Metric, g.Stat, g.Server = t.def, stat, t.server()
	return g, nil
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
func (g Gate) holds(actual float64) bool { return compare(actual, g.Op, g.Value) }

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
			r.Actual = res.Stats.Stat(g.Stat)
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
// not failures) with max. It is the whole run's, whatever --where selected: a selection
// leaves out successful requests only (choose), and they are counted back here.
func CheckErrorRate(s *Summary, max float64) ErrorRateResult {
	r := ErrorRateResult{Errors: s.Counts.GateErrors, Total: s.Counts.Profile + s.Excluded(), Max: max}
	if r.Total > 0 {
		r.Rate = float64(r.Errors) / float64(r.Total)
	}
	r.OK = r.Rate <= max
	return r
}
