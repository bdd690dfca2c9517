package report

import (
	"math"
	"strconv"
)

// LTTB downsamples the series (x[i], y[i]), x ascending, to at most n points with
// Largest-Triangle-Three-Buckets (Steinarsson 2013): the first and last points stay, and each
// of n−2 equal buckets keeps the point that spans the largest triangle with the point kept
// before it and the mean of the next bucket, so spikes survive. A series of n points or
// fewer, or n < 3, is returned as is (copied). Points with a NaN y are dropped first.
func LTTB(x, y []float64, n int) ([]float64, []float64) {
	xs, ys := make([]float64, 0, min(len(x), max(n, 0))), make([]float64, 0, min(len(x), max(n, 0)))
	var fx, fy []float64
	for i := range x {
		if !math.IsNaN(y[i]) {
			fx, fy = append(fx, x[i]), append(fy, y[i])
		}
	}
	if len(fx) <= n || n < 3 {
		if n < 3 && len(fx) > n {
			fx, fy = fx[:max(n, 0)], fy[:max(n, 0)]
		}
		return append(xs, fx...), append(ys, fy...)
	}
	every := float64(len(fx)-2) / float64(n-2)
	a := 0
	xs, ys = append(xs, fx[0]), append(ys, fy[0])
	for i := 0; i < n-2; i++ {
		// The next bucket's mean is the third corner.
		lo, hi := int(float64(i+1)*every)+1, int(float64(i+2)*every)+1
		hi = min(hi, len(fx))
		var mx, my float64
		for j := lo; j < hi; j++ {
			mx += fx[j]
			my += fy[j]
		}
		if k := float64(hi - lo); k > 0 {
			mx, my = mx/k, my/k
		} else {
			mx, my = fx[len(fx)-1], fy[len(fy)-1]
		}
		from, to := int(float64(i)*every)+1, int(float64(i+1)*every)+1
		best, area := from, -1.0
		for j := from; j < to; j++ {
			s := math.Abs((fx[a]-mx)*(fy[j]-fy[a]) - (fx[a]-fx[j])*(my-fy[a]))
			if s > area {
				best, area = j, s
			}
		}
		xs, ys = append(xs, fx[best]), append(ys, fy[best])
		a = best
	}
	return append(xs, fx[len(fx)-1]), append(ys, fy[len(fy)-1])
}

// column is one data column of a chart; NaN encodes as null (a gap), numbers with six
// significant digits, which is finer than a chart can show and keeps pages small.
type column []float64

// MarshalJSON writes the column compactly.
func (c column) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2+len(c)*8)
	b = append(b, '[')
	for i, v := range c {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendNum(b, v)
	}
	return append(b, ']'), nil
}

// appendNum appends v with six significant digits, null when it is not finite.
func appendNum(b []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, v, 'g', 6, 64)
}

// Number is a float64 that encodes as null in JSON when it is not finite (a metric the run
// does not have), where encoding/json would fail.
type Number float64

// MarshalJSON writes n, or null.
func (n Number) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(n)) || math.IsInf(float64(n), 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, float64(n), 'g', -1, 64), nil
}
