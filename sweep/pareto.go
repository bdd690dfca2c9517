package sweep

import "math"

// Pareto returns, in input order, the indices of the points no other point dominates. A
// point is a vector of objective values, maximize[k] saying whether objective k is better
// larger; a dominates b when it is at least as good on every objective and better on one
// (AIPerf's rule). Only points with ok[i] take part (nil ok: all), and a point with a NaN
// objective is left out: it cannot be compared.
func Pareto(points [][]float64, maximize []bool, ok []bool) []int {
	usable := func(i int) bool {
		if ok != nil && !ok[i] {
			return false
		}
		for _, v := range points[i] {
			if math.IsNaN(v) {
				return false
			}
		}
		return true
	}
	var out []int
	for i := range points {
		if !usable(i) {
			continue
		}
		dominated := false
		for j := range points {
			if j != i && usable(j) && dominates(points[j], points[i], maximize) {
				dominated = true
				break
			}
		}
		if !dominated {
			out = append(out, i)
		}
	}
	return out
}

// dominates reports whether a is at least as good as b everywhere and better somewhere.
func dominates(a, b []float64, maximize []bool) bool {
	better := false
	for k := range a {
		x, y := a[k], b[k]
		if !maximize[k] {
			x, y = -x, -y
		}
		if x < y {
			return false
		}
		if x > y {
			better = true
		}
	}
	return better
}

// Best returns the index of the best of values (the largest when maximize, else the
// smallest) among those with ok[i] (nil ok: all), NaN left out; the first wins a tie. It
// returns -1 when no value takes part.
func Best(values []float64, maximize bool, ok []bool) int {
	best := -1
	for i, v := range values {
		if (ok != nil && !ok[i]) || math.IsNaN(v) {
			continue
		}
		if best < 0 || (maximize && v > values[best]) || (!maximize && v < values[best]) {
			best = i
		}
	}
	return best
}
