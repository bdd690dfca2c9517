package analyze

import (
	"math"
	"slices"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Percentiles are the percentiles every distribution reports: AIPerf's p1…p99 plus p99.9.
var Percentiles = [...]float64{1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9}

// PercentileNames are the stat names of Percentiles, as used in gates and exports.
var PercentileNames = [...]string{"p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "p99.9"}

// Stats summarises a distribution in display units.
type Stats struct {
	Count int64
	Sum   float64
	Avg   float64
	// Std is the population standard deviation (numpy's default, which AIPerf uses).
	Std      float64
	Min, Max float64
	// P holds the values at Percentiles, by numpy's default method (linear interpolation
	// between the closest ranks).
	P [len(Percentiles)]float64
	// Approx is true when the distribution grew past the exact limit and its percentiles
	// come from an HdrHistogram (3 significant digits). Count, Sum, Avg, Std, Min and Max
	// stay exact.
	Approx bool
}

// DefaultExactLimit is how many values a distribution keeps exactly before it folds them
// into an HdrHistogram, bounding memory for runs of millions of requests: with about 45
// metrics, exact values never take more than a few hundred MiB.
const DefaultExactLimit = 1 << 18

// hdrHighest bounds what the histograms track (in hdr units: ns for times, so about 2.4
// hours); larger values are recorded as this.
const hdrHighest = int64(1) << 43

// dist accumulates one metric's values. Up to limit values are kept exactly; past that they
// move into a pair of sparse HdrHistograms (one for magnitudes of negative values, since a
// lag or a mismatch can be negative), whose memory grows with the buckets in use, not with
// the range. Moments are accumulated exactly either way.
//
// A dist can also draw on a budget shared with its siblings (the time slices of one log), so
// that many small distributions cannot together hold more exact values than one large one.
// Whether a dist leaves the exact mode depends only on the values and the order of the log
// they come from, never on scheduling, so results stay deterministic.
type dist struct {
	n        int64
	min, max float64
	// Running moments (Welford) and a compensated sum, for the histogram mode.
	mean, m2  float64
	sum, sumC float64
	vals      []float64
	pos, neg  *hdrhistogram.PackedHistogram
	limit     int
	hdrScale  float64
	budget    *budget
}

// budget counts the exact values a group of distributions holds.
type budget struct{ used, max int }

func newDist(limit int, hdrScale float64) *dist {
	if hdrScale == 0 {
		hdrScale = 1
	}
	return &dist{limit: limit, hdrScale: hdrScale}
}

// add records one value. NaN and infinities are ignored: a metric that cannot be computed
// is left out, never recorded as a number.
func (d *dist) add(v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	if d.n == 0 || v < d.min {
		d.min = v
	}
	if d.n == 0 || v > d.max {
		d.max = v
	}
	d.n++
	delta := v - d.mean
	d.mean += delta / float64(d.n)
	d.m2 += delta * (v - d.mean)
	d.addSum(v)
	if d.pos == nil {
		if d.budget != nil {
			if d.budget.used >= d.budget.max {
				d.toHistogram()
				d.record(v)
				return
			}
			d.budget.used++
		}
		d.vals = append(d.vals, v)
		if len(d.vals) > d.limit {
			d.toHistogram()
		}
		return
	}
	d.record(v)
}

// addSum adds v to the Neumaier-compensated sum.
func (d *dist) addSum(v float64) {
	t := d.sum + v
	if math.Abs(d.sum) >= math.Abs(v) {
		d.sumC += (d.sum - t) + v
	} else {
		d.sumC += (v - t) + d.sum
	}
	d.sum = t
}

func (d *dist) toHistogram() {
	d.pos = hdrhistogram.NewPacked(1, hdrHighest, 3)
	d.neg = hdrhistogram.NewPacked(1, hdrHighest, 3)
	for _, v := range d.vals {
		d.record(v)
	}
	if d.budget != nil {
		d.budget.used -= len(d.vals)
	}
	d.vals = nil
}

func (d *dist) record(v float64) {
	x := math.Round(math.Abs(v) * d.hdrScale)
	var iv int64
	switch {
	case x >= float64(hdrHighest):
		iv = hdrHighest
	case x < 1:
		iv = 0
	default:
		iv = int64(x)
	}
	if v < 0 {
		_ = d.neg.RecordValue(iv)
	} else {
		_ = d.pos.RecordValue(iv)
	}
}

// merge folds o into d. Callers merge in a fixed order, so results are deterministic.
func (d *dist) merge(o *dist) {
	if o == nil || o.n == 0 {
		return
	}
	if d.n == 0 || o.min < d.min {
		d.min = o.min
	}
	if d.n == 0 || o.max > d.max {
		d.max = o.max
	}
	// Chan et al.'s pairwise update of mean and M2.
	n := d.n + o.n
	delta := o.mean - d.mean
	d.mean += delta * float64(o.n) / float64(n)
	d.m2 += o.m2 + delta*delta*float64(d.n)*float64(o.n)/float64(n)
	d.n = n
	d.addSum(o.sum)
	d.addSum(o.sumC)
	switch {
	case d.pos == nil && o.pos == nil:
		d.vals = append(d.vals, o.vals...)
		if len(d.vals) > d.limit {
			d.toHistogram()
		}
	case d.pos == nil:
		d.toHistogram()
		d.pos.Merge(o.pos)
		d.neg.Merge(o.neg)
	default:
		if o.pos != nil {
			d.pos.Merge(o.pos)
			d.neg.Merge(o.neg)
		} else {
			for _, v := range o.vals {
				d.record(v)
			}
		}
	}
}

// stats computes the summary, dividing every value by div into display units. It sorts the
// exact values in place. It returns nil for an empty distribution.
func (d *dist) stats(div float64) *Stats {
	if d == nil || d.n == 0 {
		return nil
	}
	s := &Stats{Count: d.n, Min: d.min / div, Max: d.max / div}
	if d.pos == nil {
		slices.Sort(d.vals)
		// Sum and moments over the sorted values, so the result does not depend on the
		// order requests were read in.
		var sum, c float64
		for _, v := range d.vals {
			t := sum + v
			if math.Abs(sum) >= math.Abs(v) {
				c += (sum - t) + v
			} else {
				c += (v - t) + sum
			}
			sum = t
		}
		sum += c
		mean := sum / float64(len(d.vals))
		var ss float64
		for _, v := range d.vals {
			ss += (v - mean) * (v - mean)
		}
		s.Sum = sum / div
		s.Avg = mean / div
		s.Std = math.Sqrt(ss/float64(len(d.vals))) / div
		for i, p := range Percentiles {
			s.P[i] = percentileSorted(d.vals, p) / div
		}
		return s
	}
	s.Approx = true
	sum := d.sum + d.sumC
	s.Sum = sum / div
	s.Avg = sum / float64(d.n) / div
	s.Std = math.Sqrt(d.m2/float64(d.n)) / div
	for i, p := range Percentiles {
		v := d.histPercentile(p)
		s.P[i] = math.Min(math.Max(v, d.min), d.max) / div
	}
	return s
}

// percentileSorted is numpy.percentile(x, p) with the default "linear" method, including
// numpy's lerp, which computes from the upper neighbour when the fraction is at least 0.5.
func percentileSorted(x []float64, p float64) float64 {
	n := len(x)
	if n == 1 {
		return x[0]
	}
	vi := float64(n-1) * (p / 100)
	lo := math.Floor(vi)
	i := int(lo)
	if i >= n-1 {
		return x[n-1]
	}
	if i < 0 {
		return x[0]
	}
	return lerp(x[i], x[i+1], vi-lo)
}

func lerp(a, b, t float64) float64 {
	diff := b - a
	if t >= 0.5 {
		return b - diff*(1-t)
	}
	return a + diff*t
}

// histPercentile applies the same linear method to the histogram pair, reading the values
// at the two neighbouring ranks.
func (d *dist) histPercentile(p float64) float64 {
	n := d.n
	vi := float64(n-1) * (p / 100)
	lo := math.Floor(vi)
	i := int64(lo)
	if i >= n-1 {
		return d.max
	}
	return lerp(d.histAt(i), d.histAt(i+1), vi-lo)
}

// histAt returns the value of the k-th smallest recorded value (0-based).
func (d *dist) histAt(k int64) float64 {
	nNeg := d.neg.TotalCount()
	if k < nNeg {
		// Negative values sorted ascending are their magnitudes sorted descending.
		return -rankValue(d.neg, nNeg-k) / d.hdrScale
	}
	return rankValue(d.pos, k-nNeg+1) / d.hdrScale
}

// rankValue returns the value of the r-th smallest entry (1-based) of h.
func rankValue(h *hdrhistogram.PackedHistogram, r int64) float64 {
	total := h.TotalCount()
	// ValueAtPercentile rounds percentile/100*total+0.5 down to a rank; aim a quarter below r.
	return float64(h.ValueAtPercentile((float64(r) - 0.25) / float64(total) * 100))
}

// PercentileSorted is numpy.percentile(x, p) with the default "linear" method over x sorted
// ascending: the definition every distribution here reports, for other packages' curves.
func PercentileSorted(x []float64, p float64) float64 { return percentileSorted(x, p) }
