// Package numfmt writes numbers for people: fixed-point, never an exponent, with enough
// significant digits to read a value and no more, thousands separated, and "–" where there
// is no value. Every human surface of the pages and the comparison uses it: the report
// pages through page.js's num, which follows the same rules (report's
// TestPageNumMatchesNumfmt runs it against Format), the comparison's lines and findings, the
// run page's slice table. Machine output (JSON, AIPerf's CSV) keeps full precision and its
// own format, and analyze's console table keeps AIPerf's two decimals.
//
// The rules, for a finite v:
//
//   - 0 is "0";
//   - otherwise v is rounded to Digits significant digits, but never to fewer than the units
//     (12,345.678 is "12,346", 123.456 is "123.5", -0.0001373 is "-0.0001373");
//     at most MaxDecimals decimals, beyond which a value reads 0 ("0" keeping its sign);
//   - trailing zeros after the point are dropped (1.500 is "1.5"), as is a point left alone;
//   - the integer part is grouped in threes with commas.
//
// NaN, no value, is Absent; ±Inf is "+Inf" or "-Inf".
package numfmt

import (
	"math"
	"strconv"
	"strings"
)

// Digits is how many significant digits a value keeps; MaxDecimals the most decimals.
const (
	Digits      = 4
	MaxDecimals = 12
)

// Absent is what a statistic that does not apply, or a value a run does not have, reads.
const Absent = "–"

// Format writes v by the package's rules.
func Format(v float64) string {
	switch {
	case math.IsNaN(v):
		return Absent
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case v == 0:
		return "0"
	}
	dec := Digits - 1 - int(math.Floor(math.Log10(math.Abs(v))))
	dec = max(0, min(MaxDecimals, dec))
	s := strconv.FormatFloat(v, 'f', dec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	intPart, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	if neg && (intPart != "0" || hasFrac) {
		b.WriteByte('-')
	}
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if hasFrac {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}

// Signed is Format with the sign always shown: a difference ("+0.01", "-12.3", "0").
func Signed(v float64) string {
	s := Format(v)
	if v > 0 && !math.IsInf(v, 0) && s != "0" {
		return "+" + s
	}
	return s
}

// Percent is Signed followed by " %": a relative difference in percent ("+12.3 %").
func Percent(v float64) string {
	if math.IsNaN(v) {
		return Absent
	}
	return Signed(v) + " %"
}

// P writes a p-value: two significant digits, and "< 0.0001" below that (a smaller p says
// nothing more to a reader, and would need an exponent).
func P(p float64) string {
	switch {
	case math.IsNaN(p):
		return Absent
	case p < 0.0001:
		return "< 0.0001"
	}
	dec := max(0, min(4, 1-int(math.Floor(math.Log10(p)))))
	if p == 0 {
		dec = 0
	}
	s := strconv.FormatFloat(p, 'f', dec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return "= " + s
}
