package accum

import "math"

// Sums over values from outside (a server's gauges and counters, usage token counts, DCGM
// fields) must not overflow: two gauges at 1e308 have a mean of 1e308, not +Inf, and a
// spread of 2e308 must not turn a percentile into NaN. Sum keeps a sum scaled by a power of
// two, so no partial sum outgrows the number of terms; scaling by a power of two is exact,
// so a sum that fits a float64 comes out bit for bit as the plain compensated sum would.

// Sum is an overflow-free Neumaier-compensated sum of finite values: the sum is
// (s + c)·2^exp, exp being the binary exponent of the largest term so far (never below 0).
// NaN and infinite terms are the caller's to count: Add ignores them.
type Sum struct {
	s, c float64
	exp  int
}

// Add adds v.
func (a *Sum) Add(v float64) {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	if _, e := math.Frexp(v); e > a.exp {
		a.rescale(e)
	}
	a.addScaled(math.Ldexp(v, -a.exp))
}

// addScaled adds x, a term already divided by 2^a.exp.
func (a *Sum) addScaled(x float64) {
	t := a.s + x
	if math.Abs(a.s) >= math.Abs(x) {
		a.c += (a.s - t) + x
	} else {
		a.c += (x - t) + a.s
	}
	a.s = t
}

// rescale changes the scale to 2^e (e > a.exp).
func (a *Sum) rescale(e int) {
	a.s, a.c = math.Ldexp(a.s, a.exp-e), math.Ldexp(a.c, a.exp-e)
	a.exp = e
}

// Merge adds the terms of o.
func (a *Sum) Merge(o Sum) {
	if o.exp > a.exp {
		a.rescale(o.exp)
	}
	a.addScaled(math.Ldexp(o.s, o.exp-a.exp))
	a.addScaled(math.Ldexp(o.c, o.exp-a.exp))
}

// Value is the sum: ±Inf only when the true sum is beyond float64.
func (a *Sum) Value() float64 { return math.Ldexp(a.s+a.c, a.exp) }

// Div is the sum divided by d (a count, a duration, a unit), computed before the scale is
// put back so that a quotient within float64 stays finite whatever the sum.
func (a *Sum) Div(d float64) float64 { return math.Ldexp((a.s+a.c)/d, a.exp) }

// scaleExp is the exponent Sum would scale finite values of largest magnitude m by: their
// binary exponent, never below 0.
func scaleExp(m float64) int {
	_, e := math.Frexp(m)
	return max(e, 0)
}

// nonFinite counts the NaN and infinite values a statistic was offered.
type nonFinite struct {
	posInf, negInf, nan int64
}

// count records v when it is not finite and reports whether it was.
func (n *nonFinite) count(v float64) bool {
	switch {
	case math.IsNaN(v):
		n.nan++
	case math.IsInf(v, 1):
		n.posInf++
	case math.IsInf(v, -1):
		n.negInf++
	default:
		return false
	}
	return true
}

func (n *nonFinite) merge(o nonFinite) {
	n.posInf += o.posInf
	n.negInf += o.negInf
	n.nan += o.nan
}

// infinite is the number of infinite values.
func (n nonFinite) infinite() int64 { return n.posInf + n.negInf }

// apply returns what a sum whose finite part is f becomes with the non-finite terms n
// counted: NaN with a NaN term or infinities of both signs, else the infinity, else f.
func (n nonFinite) apply(f float64) float64 {
	switch {
	case n.nan > 0 || n.posInf > 0 && n.negInf > 0:
		return math.NaN()
	case n.posInf > 0:
		return math.Inf(1)
	case n.negInf > 0:
		return math.Inf(-1)
	}
	return f
}

// Total is a sum of any terms, by IEEE rules but without overflow: the finite terms in an
// Sum, the others counted, so that the value is infinite only when a term was (or the true
// sum is beyond float64), and NaN when a term was NaN or infinities of both signs met.
type Total struct {
	f   Sum
	inf nonFinite
}

// Add adds v, counting it when it is not finite.
func (t *Total) Add(v float64) {
	if !t.inf.count(v) {
		t.f.Add(v)
	}
}

// AddDiff adds b - a without overflowing where the difference itself would.
func (t *Total) AddDiff(b, a float64) {
	if math.IsNaN(a) || math.IsInf(a, 0) || math.IsNaN(b) || math.IsInf(b, 0) {
		t.Add(b - a)
		return
	}
	t.f.Add(b)
	t.f.Add(-a)
}

// Merge adds the terms of o.
func (t *Total) Merge(o *Total) {
	t.f.Merge(o.f)
	t.inf.merge(o.inf)
}

// Value is the sum by IEEE rules (see Total).
func (t *Total) Value() float64 { return t.inf.apply(t.f.Value()) }

// Divided is t divided by d, kept as a Total: a mean of sums each beyond float64 stays
// usable in a ratio.
func (t *Total) Divided(d float64) *Total {
	return &Total{f: Sum{s: t.f.s / d, c: t.f.c / d, exp: t.f.exp}, inf: t.inf}
}

// Div is the sum divided by d, finite whenever the quotient fits a float64.
func (t *Total) Div(d float64) float64 { return t.inf.apply(t.f.Div(d)) }

// Ratio is a / b, finite whenever the quotient fits a float64 (NaN when b is 0 or either
// side is NaN, as IEEE division gives).
func Ratio(a, b *Total) float64 {
	if a.inf != (nonFinite{}) || b.inf != (nonFinite{}) {
		return a.Value() / b.Value()
	}
	num, den := a.f.s+a.f.c, b.f.s+b.f.c
	if den == 0 {
		return num / den
	}
	return math.Ldexp(num/den, a.f.exp-b.f.exp)
}

// ClampInt64 converts v to int64, saturating where Go's conversion is undefined: a count
// from outside may be any float. NaN is 0.
func ClampInt64(v float64) int64 {
	switch {
	case math.IsNaN(v):
		return 0
	case v >= math.MaxInt64:
		return math.MaxInt64
	case v <= math.MinInt64:
		return math.MinInt64
	}
	return int64(v)
}
