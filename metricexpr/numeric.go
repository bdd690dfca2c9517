package metricexpr

import (
	"fmt"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/overloads"
	"github.com/google/cel-go/common/types"
)

// Numbers mix as a person means them. CEL keeps int, uint and double apart ("osl - 1" with
// osl a double, "osl == 5", "osl > 0 ? osl : 0" are errors in plain CEL); cel-go v0.31
// offers cross-type comparisons (CrossTypeNumericComparisons) but no cross-type arithmetic
// or equality. So:
//
//   - the counts among the variables are doubles holding whole numbers (vars.go): "osl / 2"
//     is a true division, not a truncated one;
//   - +, -, * and / of an int or uint with a double, either way round, is the double
//     operation, the int converted (exact below 2^53): mixedArithmetic declares the
//     overloads for the checker and widen rewrites the checked expression so that the
//     interpreter, which dispatches arithmetic on the operands' own types, sees two doubles;
//   - an int literal beside ==, != (and in a list literal right of "in"), as a branch of
//     ?: or as orValue's default is an untyped number (untypedLiterals): "osl == 5",
//     "osl > 0 ? osl : 0", "usage[?'x'].orValue(0)" check, and compare by value at run time
//     (CEL's equality across numeric types);
//   - a division of two ints in a metric, the one value CEL would still truncate (7 / 2 is
//     3), is refused with the fix (intDivision): a metric is a measurement.
//
// List indexes stay ints: chunks_ms[2], reads[size(reads) - 1].

// arithmetic are the operators mixedArithmetic declares for an int and a double, with the
// overload id of the double operation widen turns them into.
var arithmetic = map[string]string{
	operators.Add:      overloads.AddDouble,
	operators.Subtract: overloads.SubtractDouble,
	operators.Multiply: overloads.MultiplyDouble,
	operators.Divide:   overloads.DivideDouble,
}

// mixedArithmetic declares the cross-type arithmetic overloads (the checker's side; widen
// makes them run as the double operation).
func mixedArithmetic() []cel.EnvOption {
	var out []cel.EnvOption
	for op, id := range arithmetic {
		var fos []cel.FunctionOpt
		for _, t := range []struct {
			name string
			typ  *cel.Type
		}{{"int64", cel.IntType}, {"uint64", cel.UintType}} {
			fos = append(fos,
				cel.Overload(fmt.Sprintf("%s_%s_double", id, t.name), []*cel.Type{t.typ, cel.DoubleType}, cel.DoubleType),
				cel.Overload(fmt.Sprintf("%s_double_%s", id, t.name), []*cel.Type{cel.DoubleType, t.typ}, cel.DoubleType))
		}
		out = append(out, cel.Function(op, fos...))
	}
	return out
}

// untypedLiterals wraps, in a parsed expression, every int or uint literal that is an
// operand of == or !=, an element of a list literal right of "in", a branch of ?: or
// orValue's default in dyn(), so that it checks beside a double. It returns the ids of the
// dyn() calls it made (widen makes those beside a double doubles).
func untypedLiterals(a *cel.Ast) map[int64]bool {
	made := map[int64]bool{}
	native := a.NativeRep()
	fac := ast.NewExprFactory()
	next := ast.MaxID(native)
	wrap := func(es []ast.Expr, from int) {
		for i := from; i < len(es); i++ {
			e := es[i]
			if e.Kind() != ast.LiteralKind {
				continue
			}
			switch e.AsLiteral().(type) {
			case types.Int, types.Uint:
			default:
				continue
			}
			next++
			if r, ok := native.SourceInfo().GetOffsetRange(e.ID()); ok {
				native.SourceInfo().SetOffsetRange(next, r)
			}
			es[i] = fac.NewCall(next, overloads.TypeConvertDyn, e)
			made[next] = true
		}
	}
	ast.PostOrderVisit(native.Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		if e.Kind() != ast.CallKind {
			return
		}
		c := e.AsCall()
		switch c.FunctionName() {
		case operators.Equals, operators.NotEquals:
			wrap(c.Args(), 0)
		case operators.Conditional:
			wrap(c.Args(), 1)
		case "orValue":
			if c.IsMemberFunction() {
				wrap(c.Args(), 0)
			}
		case operators.In:
			if args := c.Args(); len(args) == 2 && args[1].Kind() == ast.ListKind {
				wrap(args[1].AsList().Elements(), 0)
			}
		}
	}))
	return made
}

// widen rewrites each arithmetic call of a checked expression that mixes an int or uint with
// a double into the double operation: the int operand becomes double(operand). A literal
// untypedLiterals made untyped (its dyn() call's id in untyped) that is the other branch of
// a double's ?: or the default of an optional double's orValue becomes a double literal: the
// value is then a double wherever the checker expects one.
func widen(a *cel.Ast, untyped map[int64]bool) {
	native := a.NativeRep()
	fac := ast.NewExprFactory()
	next := ast.MaxID(native)
	toDouble := func(e ast.Expr) {
		if !untyped[e.ID()] {
			return
		}
		var x float64
		switch v := e.AsCall().Args()[0].AsLiteral().(type) {
		case types.Int:
			x = float64(v)
		case types.Uint:
			x = float64(v)
		}
		e.SetKindCase(fac.NewLiteral(e.ID(), types.Double(x)))
		native.SetType(e.ID(), cel.DoubleType)
		delete(native.ReferenceMap(), e.ID())
	}
	// The real nodes (a NavigableExpr's arguments are copies), children before parents.
	ast.PostOrderVisit(native.Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		if e.Kind() != ast.CallKind {
			return
		}
		c := e.AsCall()
		switch args := c.Args(); {
		case c.FunctionName() == operators.Conditional && len(args) == 3:
			if isDouble(native.GetType(args[1].ID())) || isDouble(native.GetType(args[2].ID())) {
				toDouble(args[1])
				toDouble(args[2])
				if isDouble(native.GetType(args[1].ID())) && isDouble(native.GetType(args[2].ID())) {
					native.SetType(e.ID(), cel.DoubleType)
				}
			}
			return
		case c.FunctionName() == "orValue" && c.IsMemberFunction() && len(args) == 1:
			if t := native.GetType(c.Target().ID()); t != nil && len(t.Parameters()) == 1 && isDouble(t.Parameters()[0]) {
				toDouble(args[0])
				native.SetType(e.ID(), cel.DoubleType)
			}
			return
		}
		id, ok := arithmetic[c.FunctionName()]
		args := c.Args()
		if !ok || len(args) != 2 {
			return
		}
		t0, t1 := native.GetType(args[0].ID()), native.GetType(args[1].ID())
		if !(isInt(t0) && isDouble(t1) || isDouble(t0) && isInt(t1)) {
			return
		}
		for i, arg := range args {
			t := native.GetType(arg.ID())
			if !isInt(t) {
				continue
			}
			conv := overloads.IntToDouble
			if t.IsExactType(cel.UintType) {
				conv = overloads.UintToDouble
			}
			next++
			args[i] = fac.NewCall(next, overloads.TypeConvertDouble, arg)
			native.SetType(next, cel.DoubleType)
			native.SetReference(next, ast.NewFunctionReference(conv))
		}
		native.SetReference(e.ID(), ast.NewFunctionReference(id))
	}))
}

// intDivision finds a division of two ints in a checked expression: CEL truncates it (7 / 2
// is 3), which a metric, a measurement, never means ("size(a) / size(b)" as a ratio). It
// returns the column of the first; ok is false when there is none.
func intDivision(a *cel.Ast) (col int, ok bool) {
	native := a.NativeRep()
	for _, e := range ast.MatchDescendants(ast.NavigateAST(native), ast.FunctionMatcher(operators.Divide)) {
		args := e.AsCall().Args()
		if len(args) != 2 {
			continue
		}
		if isInt(native.GetType(args[0].ID())) && isInt(native.GetType(args[1].ID())) {
			loc := native.SourceInfo().GetStartLocation(e.ID())
			return loc.Column() + 1, true
		}
	}
	return 0, false
}

// isInt reports whether t is int or uint.
func isInt(t *cel.Type) bool {
	return t != nil && (t.IsExactType(cel.IntType) || t.IsExactType(cel.UintType))
}

// isDouble reports whether t is double.
func isDouble(t *cel.Type) bool { return t != nil && t.IsExactType(cel.DoubleType) }
