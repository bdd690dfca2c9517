// Package metricexpr compiles the expressions of user metrics, request selections and
// groupings (analyze --metric, --metrics-file, --where, --group-by; docs/metrics.md "User
// metrics") in CEL (github.com/google/cel-go) over the variables of one request, and turns
// them into what package analyze runs: a registered analyze.UserMetric, an
// analyze.Selection and an analyze.Grouping. Every expression is parsed and type-checked
// once, before any log is read; a bad one is an error naming the metric (or flag) and the
// column. Evaluation reads the request through analyze.RequestView in place.
//
// It is the one expression layer: the gates and goodput objectives of package analyze/judge
// are translated into its expressions too (judged.go), a gate over a run's summary, an
// objective over one request. The user metrics' definitions as given (--metric NAME = EXPR,
// the --metrics-file document: MetricSpec, metricsfile.go) are read here too. metricexpr
// imports analyze, internal/yamlline, cel-go and sigs.k8s.io/yaml; it must not import
// analyze/judge or anything above it.
package metricexpr

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/ext"
	"github.com/google/cel-go/interpreter"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/internal/suggest"
)

// env is the CEL environment over reg: the Variables and every per-request metric of the
// registry by tag (display unit, double).
func env(reg *analyze.Registry) (*cel.Env, error) {
	opts := []cel.EnvOption{
		cel.CrossTypeNumericComparisons(true), // ttft_ms > 100, isl >= 4e3
		cel.OptionalTypes(),                   // chunks_ms[?2].orValue(0.0)
		ext.Math(), ext.Lists(), ext.Strings(),
		cel.ParserExpressionSizeLimit(maxExprSize), cel.ParserRecursionLimit(maxExprDepth),
	}
	opts = append(opts, mixedArithmetic()...) // osl - 1, (osl - 1) / 1000.0 (numeric.go)
	for i := range Variables {
		opts = append(opts, cel.Variable(Variables[i].Name, Variables[i].typ))
	}
	for _, d := range reg.Metrics() {
		if d.Kind == analyze.Record && d.Sampling == analyze.PerRequest {
			opts = append(opts, cel.Variable(d.Tag, cel.DoubleType))
		}
	}
	e, err := cel.NewEnv(opts...)
	if err != nil {
		return nil, fmt.Errorf("metricexpr: %w", err) // a programming error: the variables clash
	}
	return e, nil
}

// Bounds on one expression: its size in code points and nesting when parsed, and the cost
// of evaluating it for one request (CEL's cost units, about one per operation and list
// element visited); past the cost an evaluation stops and the request has no value.
const (
	maxExprSize  = 4096
	maxExprDepth = 64
	maxCost      = 1_000_000
)

// unknownSizes is the cost estimator that knows no list's size (the requests' lists have
// any length).
type unknownSizes struct{}

func (unknownSizes) EstimateSize(checker.AstNode) *checker.SizeEstimate { return nil }

func (unknownSizes) EstimateCallCost(string, string, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
	return nil
}

// compiled is one checked expression, ready to evaluate.
type compiled struct {
	ast *cel.Ast
	prg cel.Program
}

// compile parses and checks src in e; the result's type must be one of want (dyn always
// passes: the value is checked per request). what names the expression in errors.
func compile(e *cel.Env, what, src string, want ...*cel.Type) (*compiled, error) {
	parsed, iss := e.Parse(src)
	if iss != nil && iss.Err() != nil {
		return nil, issueError(what, src, iss)
	}
	untyped := untypedLiterals(parsed) // osl == 5 (numeric.go)
	ast, iss := e.Check(parsed)
	if iss != nil && iss.Err() != nil {
		return nil, issueError(what, src, iss)
	}
	widen(ast, untyped) // osl - 1 runs as osl - 1.0
	out := ast.OutputType()
	ok := out.IsExactType(cel.DynType)
	names := make([]string, 0, len(want))
	for _, w := range want {
		ok = ok || out.IsExactType(w)
		names = append(names, w.String())
	}
	if !ok {
		return nil, fmt.Errorf("%s: %q gives a %s; want %s", what, src, out, strings.Join(names, " or "))
	}
	opts := []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize)}
	// An expression whose cost the checker cannot bound below maxCost (a comprehension over
	// a request's lists, nested ones over literals) is evaluated with the cost tracked and
	// bounded; the others, most, without the tracking's allocations.
	if est, err := e.EstimateCost(ast, unknownSizes{}); err != nil || est.Max > maxCost {
		opts = append(opts, cel.CostLimit(maxCost))
	}
	prg, err := e.Program(ast, opts...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return &compiled{ast: ast, prg: prg}, nil
}

// eval evaluates the expression for one request; nil when it gives no value (an error: an
// index out of range, a missing key, a variable the request has none of; or null).
func (c *compiled) eval(v *analyze.RequestView) ref.Val { return c.evalIn(activation{v}) }

// evalIn evaluates the expression with the names of act (a request's, a summary's); nil
// when it gives no value.
func (c *compiled) evalIn(act interpreter.Activation) ref.Val {
	out, _, err := c.prg.Eval(act)
	if err != nil || out == nil {
		return nil
	}
	if o, ok := out.(*types.Optional); ok {
		if !o.HasValue() {
			return nil
		}
		out = o.GetValue()
	}
	if out == types.NullValue || types.IsError(out) || types.IsUnknown(out) {
		return nil
	}
	return out
}

// undeclared finds the name in the checker's "undeclared reference" message.
var undeclared = regexp.MustCompile(`undeclared reference to '([^']*)'`)

// issueError is the first of the issues in one line: what, the column (and the line of a
// multi-line expression), the checker's message and a "did you mean" for a misspelt name.
func issueError(what, src string, iss *cel.Issues) error {
	errs := iss.Errors()
	if len(errs) == 0 {
		return fmt.Errorf("%s: %v", what, iss.Err())
	}
	e := errs[0]
	msg := strings.ReplaceAll(e.Message, " (in container '')", "")
	if strings.Contains(msg, "'_%_' applied to '(double") {
		msg += " (token counts are doubles: write int(osl) % 2)"
	}
	if m := undeclared.FindStringSubmatch(msg); m != nil {
		if s := suggest.Nearest(m[1], names()); s != "" {
			msg += " (did you mean " + s + "?)"
		} else {
			msg += " (docs/metrics.md \"User metrics\" lists the variables)"
		}
	}
	where := fmt.Sprintf("column %d", e.Location.Column()+1)
	if strings.Contains(src, "\n") {
		where = fmt.Sprintf("line %d column %d", e.Location.Line(), e.Location.Column()+1)
	}
	return fmt.Errorf("%s: %s: %s", what, where, strings.Join(strings.Fields(msg), " "))
}

// names are the variables' names and the built-in per-request metrics' tags.
func names() []string {
	out := make([]string, 0, len(Variables))
	for _, v := range Variables {
		out = append(out, v.Name)
	}
	for _, d := range analyze.Metrics() {
		if d.Kind == analyze.Record && d.Sampling == analyze.PerRequest {
			out = append(out, d.Tag)
		}
	}
	return out
}

// number is a numeric value as a float64.
func number(v ref.Val) (float64, bool) {
	switch x := v.(type) {
	case types.Double:
		return float64(x), true
	case types.Int:
		return float64(x), true
	case types.Uint:
		return float64(x), true
	}
	return 0, false
}

// Register compiles each metric's expression, in order, and registers it on reg: a metric
// may use the metrics registered before it by name. A name that is a variable, a bad
// expression or one that does not give a number is an error naming the metric (and its
// column), and nothing after it is registered.
func Register(reg *analyze.Registry, specs []MetricSpec) error {
	if len(specs) == 0 {
		return nil
	}
	e, err := env(reg)
	if err != nil {
		return err
	}
	for _, s := range specs {
		what := s.From
		if what == "" {
			what = "metric " + s.Name
		}
		if _, clash := variables[s.Name]; clash {
			return fmt.Errorf("%s: %q is a variable of expressions (docs/metrics.md \"User metrics\"): choose another name", what, s.Name)
		}
		c, err := compile(e, what, s.Expression, cel.DoubleType, cel.IntType, cel.UintType)
		if err != nil {
			return err
		}
		if col, ok := intDivision(c.ast); ok {
			return fmt.Errorf("%s: column %d: a division of two ints truncates (7 / 2 is 3): write double(a) / b for a ratio", what, col)
		}
		if _, err := reg.Register(analyze.UserMetric{Name: s.Name, Unit: s.Unit, Description: describe(s), Expression: s.Expression,
			LargerIsBetter: s.LargerIsBetter, Failed: s.Failed, Eval: c.number}); err != nil {
			return fmt.Errorf("%s: %s", what, strings.TrimPrefix(err.Error(), "analyze: "))
		}
		if e, err = e.Extend(cel.Variable(s.Name, cel.DoubleType)); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	return nil
}

// describe is a metric's description, or its expression when it has none.
func describe(s MetricSpec) string {
	if s.Description != "" {
		return s.Description
	}
	return s.Name + " = " + s.Expression
}

// number evaluates a metric: its value, false when it has none.
func (c *compiled) number(v *analyze.RequestView) (float64, bool) {
	out := c.eval(v)
	if out == nil {
		return 0, false
	}
	return number(out)
}

// Where compiles --where: a boolean expression over the variables and reg's metrics (user
// metrics included) that selects the requests an analysis is over.
func Where(reg *analyze.Registry, expr string) (*analyze.Selection, error) {
	e, err := env(reg)
	if err != nil {
		return nil, err
	}
	c, err := compile(e, "--where", expr, cel.BoolType)
	if err != nil {
		return nil, err
	}
	return &analyze.Selection{Expr: expr, Keep: func(v *analyze.RequestView) (bool, bool) {
		b, ok := c.eval(v).(types.Bool)
		return bool(b), ok
	}}, nil
}

// GroupBy compiles --group-by: an expression over the variables and reg's metrics giving a
// string, a number or a bool, the request's group.
func GroupBy(reg *analyze.Registry, expr string) (*analyze.Grouping, error) {
	e, err := env(reg)
	if err != nil {
		return nil, err
	}
	c, err := compile(e, "--group-by", expr, cel.StringType, cel.IntType, cel.UintType, cel.DoubleType, cel.BoolType)
	if err != nil {
		return nil, err
	}
	return &analyze.Grouping{Expr: expr, Key: func(v *analyze.RequestView) (string, bool) { return key(c.eval(v)) }}, nil
}

// key is a group's name for value v.
func key(v ref.Val) (string, bool) {
	switch x := v.(type) {
	case types.String:
		return string(x), true
	case types.Int:
		return strconv.FormatInt(int64(x), 10), true
	case types.Uint:
		return strconv.FormatUint(uint64(x), 10), true
	case types.Bool:
		return strconv.FormatBool(bool(x)), true
	case types.Double:
		if math.IsNaN(float64(x)) {
			return "", false
		}
		return strconv.FormatFloat(float64(x), 'g', -1, 64), true
	}
	return "", false
}
