package judge

import (
	"fmt"
	"strings"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/metricexpr"
	"github.com/llmbench/llmbench/servermetrics"
)

// Gate is one release gate of --gate: "metric.stat OP value", e.g.
// "time_to_first_token.p99<400". The value is in the metric's display unit (ms, tokens/sec).
type Gate struct {
	Expr   string // as given
	Metric analyze.MetricDef
	Stat   string // avg, min, max, std, sum, count, p1 … p99, p99.9; "avg" for single values
	Op     string // <, <=, >, >=, ==
	Value  float64
	// Server marks a gate on a server or GPU metric (server.<name>.<stat>, gpu.<field>.<stat>;
	// analyze/servermetrics.go): Metric.Tag is then the name without the statistic.
	Server bool
	// actual and holds are the gate compiled into metricexpr's summary environment: the
	// statistic's value, and the comparison (sugar.go).
	actual, holds *metricexpr.SummaryExpr
}

// ParseGate parses one --gate expression against the built-in metrics (ParseGateOf).
func ParseGate(expr string) (Gate, error) { return ParseGateOf(nil, expr) }

// ParseGateOf parses one --gate expression, NAME.STAT OP VALUE, its name one of reg's
// metrics (nil: the built-ins) or a server or GPU metric (sugar.go), and compiles it. Errors
// name the flag and say what was expected, with the nearest known name or statistic to a
// misspelt one.
func ParseGateOf(reg *analyze.Registry, expr string) (Gate, error) {
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
	t, found := resolve(reg, ref.name, scopeMetrics|scopeServer)
	switch {
	case !found && analyze.IsServerName(ref.name):
		server, gpu := analyze.ServerNames(), analyze.GPUNames()
		return g, fmt.Errorf("--gate %q: unknown server metric %q (%sserver.<name> of docs/metrics.md \"Server metrics\": %s; or gpu.<field>: %s)",
			expr, ref.name, didYouMean(ref.name, append(server, gpu...)), strings.Join(server, ", "), strings.Join(gpu, ", "))
	case !found && ref.name == "":
		return g, fmt.Errorf("--gate %q: no metric before %s", expr, op)
	case !found:
		return g, fmt.Errorf("--gate %q: unknown metric %q (%ssee docs/metrics.md for tags)", expr, ref.name, didYouMean(ref.name, names(reg, scopeMetrics|scopeServer)))
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
	what, value := fmt.Sprintf("--gate %q", expr), valueSource(t, stat)
	var err error
	if g.actual, err = metricexpr.CompileSummary(reg, what, value, metricexpr.Double); err != nil {
		return g, err
	}
	g.holds, err = metricexpr.CompileSummary(reg, what, value+" "+op+" "+literal(v), metricexpr.Bool)
	return g, err
}

// String returns the gate expression.
func (g Gate) String() string { return g.Expr }

// Source is the gate as an expression of metricexpr's summary environment, as it runs.
func (g Gate) Source() string {
	if g.holds == nil {
		return ""
	}
	return g.holds.Source
}

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

// EvaluateGates checks every gate against the summary. A gate on a metric the run did not
// produce fails: a release gate that cannot be checked must not pass silently.
func EvaluateGates(s *analyze.Summary, gates []Gate) []GateResult {
	out := make([]GateResult, 0, len(gates))
	for _, g := range gates {
		r := GateResult{Gate: g}
		if g.Server {
			if r.Why = serverMissing(s, g); r.Why != "" {
				r.Missing = true
				out = append(out, r)
				continue
			}
		}
		if g.actual == nil { // a Gate not made by ParseGate: nothing to evaluate
			r.Missing = true
			out = append(out, r)
			continue
		}
		actual, ok := g.actual.Number(s)
		if !ok {
			r.Missing = true
			out = append(out, r)
			continue
		}
		r.Actual = actual
		r.OK, _ = g.holds.Holds(s)
		out = append(out, r)
	}
	return out
}

// serverMissing says why a gate on a server or GPU metric cannot be evaluated on s, "" when
// it can.
func serverMissing(s *analyze.Summary, g Gate) string {
	m := s.ServerMetric(g.Metric.Tag)
	if !m.Present {
		switch {
		case strings.HasPrefix(g.Metric.Tag, analyze.PrefixGPU):
			return fmt.Sprintf("the run has no %s values (no GPU telemetry: NVML found no GPU here, and no --gpu-telemetry DCGM exporter answered)", g.Metric.Tag)
		case !s.HasServerSeries():
			return fmt.Sprintf("the run has no %s values (no server metrics were scraped: see %s and --server-metrics-url)", g.Metric.Tag, servermetrics.FileName)
		default:
			return fmt.Sprintf("the run has no %s values (the scraped endpoints expose none of its families)", g.Metric.Tag)
		}
	}
	if _, ok := m.Stat(g.Stat); !ok {
		return fmt.Sprintf("%s is a %s here (%s); its statistics are %s", m.Name, m.Kind, m.Source, strings.Join(analyze.ServerStats(m.Kind), ", "))
	}
	return ""
}
