package metricexpr

import (
	"fmt"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"

	"github.com/llmbench/llmbench/analyze"
)

// The expressions judgements are written in (package analyze/judge): a goodput objective is
// a condition on one request, in the environment of user metrics; a gate is a condition on a
// run's summary, in its own environment, where each metric of the registry is a name: a
// record metric (a distribution) is a map from its statistics (analyze.StatNames) to their
// values, a single value is a double, and server and gpu map each server or GPU metric's
// name (without its prefix) to the statistics its kind has. The gate syntax users write
// (time_to_first_token.p99<400) is translated into these expressions by analyze/judge.

// Condition compiles src, a boolean expression over one request (the variables and reg's
// per-request metrics, as --where), into what analyze.SLO.Met runs. what names the
// expression in errors.
func Condition(reg *analyze.Registry, what, src string) (func(*analyze.RequestView) (met, ok bool), error) {
	e, err := env(reg)
	if err != nil {
		return nil, err
	}
	c, err := compile(e, what, src, cel.BoolType)
	if err != nil {
		return nil, err
	}
	return func(v *analyze.RequestView) (bool, bool) {
		b, ok := c.eval(v).(types.Bool)
		return bool(b), ok
	}, nil
}

// SummaryExpr is an expression compiled over a run's summary.
type SummaryExpr struct {
	Source string
	c      *compiled
}

// server and gpu are the summary environment's maps of the server and GPU metrics.
const (
	serverVar = "server"
	gpuVar    = "gpu"
)

// summaryEnv is the CEL environment over a summary of a run analysed with reg.
func summaryEnv(reg *analyze.Registry) (*cel.Env, error) {
	stats := cel.MapType(cel.StringType, cel.DoubleType)
	opts := []cel.EnvOption{cel.CrossTypeNumericComparisons(true),
		cel.ParserExpressionSizeLimit(maxExprSize), cel.ParserRecursionLimit(maxExprDepth),
		cel.Variable(serverVar, cel.MapType(cel.StringType, stats)), cel.Variable(gpuVar, cel.MapType(cel.StringType, stats))}
	opts = append(opts, mixedArithmetic()...)
	for _, d := range reg.Metrics() {
		t := cel.DoubleType
		if d.Kind == analyze.Record {
			t = stats
		}
		opts = append(opts, cel.Variable(d.Tag, t))
	}
	e, err := cel.NewEnv(opts...)
	if err != nil {
		return nil, fmt.Errorf("metricexpr: %w", err)
	}
	return e, nil
}

// CompileSummary compiles src, an expression over a run's summary giving one of want (a
// double for a value, a bool for a condition), with reg's metrics. what names it in errors.
func CompileSummary(reg *analyze.Registry, what, src string, want ...*cel.Type) (*SummaryExpr, error) {
	e, err := summaryEnv(reg)
	if err != nil {
		return nil, err
	}
	c, err := compile(e, what, src, want...)
	if err != nil {
		return nil, err
	}
	return &SummaryExpr{Source: src, c: c}, nil
}

// Types of summary expressions, for CompileSummary.
var (
	Double = cel.DoubleType
	Bool   = cel.BoolType
)

// evalSummary evaluates x over s; nil when it gives no value (a metric the run lacks, a
// statistic its kind lacks).
func (x *SummaryExpr) evalSummary(s *analyze.Summary) ref.Val {
	return x.c.evalIn(summaryActivation{s})
}

// Number is x's value over s, false when there is none.
func (x *SummaryExpr) Number(s *analyze.Summary) (float64, bool) {
	out := x.evalSummary(s)
	if out == nil {
		return 0, false
	}
	return number(out)
}

// Holds is x's truth over s, ok false when it has no value.
func (x *SummaryExpr) Holds(s *analyze.Summary) (holds, ok bool) {
	b, ok := x.evalSummary(s).(types.Bool)
	return bool(b), ok
}

// summaryActivation resolves the summary environment's names over one summary.
type summaryActivation struct{ s *analyze.Summary }

// ResolveName implements interpreter.Activation: a metric the run has no result for is no
// binding, so the expression gives no value.
func (a summaryActivation) ResolveName(name string) (any, bool) {
	switch name {
	case serverVar:
		return serverValues(a.s, analyze.PrefixServer), true
	case gpuVar:
		return serverValues(a.s, analyze.PrefixGPU), true
	}
	r, ok := a.s.Result(name)
	if !ok {
		return nil, false
	}
	if r.MetricDef.Kind != analyze.Record {
		if r.Stats != nil {
			return types.Double(r.Stats.Avg), true
		}
		return types.Double(r.Value), true
	}
	m := make(map[string]float64, len(analyze.StatNames))
	for _, n := range analyze.StatNames {
		if r.Stats != nil {
			m[n] = r.Stats.Stat(n)
		} else {
			m[n] = r.Value
		}
	}
	return m, true
}

// Parent implements interpreter.Activation.
func (summaryActivation) Parent() interpreter.Activation { return nil }

// serverValues maps the present server or GPU metrics of s under prefix, by name without
// it, to the statistics their kinds have.
func serverValues(s *analyze.Summary, prefix string) map[string]map[string]float64 {
	out := map[string]map[string]float64{}
	for _, m := range s.ServerMetrics {
		name, ok := strings.CutPrefix(m.Name, prefix)
		if !ok || !m.Present {
			continue
		}
		stats := map[string]float64{}
		for _, st := range analyze.ServerStats(m.Kind) {
			if v, ok := m.Stat(st); ok {
				stats[st] = v
			}
		}
		out[name] = stats
	}
	return out
}
