package accum

import (
	"math"
	"slices"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/llmbench/llmbench/stats"
)

// Percentiles are the percentiles every distribution reports: AIPerf's p1…p99 plus p99.9.
var Percentiles = [...]float64{1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9}

// PercentileNames are the stat names of Percentiles, as used in gates and exports.
var PercentileNames = [...]string{"p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "p99.9"}

// StatNames are the statistics of a distribution (a record metric), in order: avg, min,
// max, std, sum, count, then PercentileNames.
var StatNames = func() []string {
	s := []string{"avg", "min", "max", "std", "sum", "count"}
	return append(s, PercentileNames[:]...)
}()

// Stat returns the named statistic (one of StatNames); NaN for another name.
func (s *Stats) Stat(name string) float64 {
	switch name {
	case "avg":
		return s.Avg
	case "min":
		return s.Min
	case "max":
		return s.Max
	case "std":
		return s.Std
	case "sum":
		return s.Sum
	case "count":
		return float64(s.Count)
	}
	for i, n := range PercentileNames {
		if n == name {
			return s.P[i]
		}
	}
	return math.NaN()
}

// Stats summarises a distribution in display units.
//
// Values that are not finite are reported as such, never dropped and never folded into a
// wrong finite number: an infinite value counts in Count and makes Min or Max, Sum, Avg and
// the percentiles its rank reaches infinite (Sum and Avg NaN when both signs occur, Std NaN).
// NaN is no value (Prometheus writes it for a gauge with nothing to say): it is left out of
// every statistic and counted in NaN. Sums and moments are taken scaled by a power of two
// (see Sum), so finite values never overflow them: the mean of values near the float64 limit
// is finite, and Sum is infinite only when the true sum is beyond float64.
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
	// NaN counts the NaN values left out; PosInf and NegInf the infinite values among Count.
	NaN, PosInf, NegInf int64
}

// NonFinite reports whether any statistic of s is NaN or infinite.
func (s *Stats) NonFinite() bool {
	if s.PosInf+s.NegInf > 0 {
		return true
	}
	for _, v := range append([]float64{s.Sum, s.Avg, s.Std, s.Min, s.Max}, s.P[:]...) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return true
		}
	}
	return false
}

// DefaultExactLimit is how many values a distribution keeps exactly before it folds them
// into an HdrHistogram, bounding memory for runs of millions of requests: with about 45
// metrics, exact values never take more than a few hundred MiB.
const DefaultExactLimit = 1 << 18

// hdrHighest bounds what the histograms track (in hdr units: ns for times, so about 2.4
// hours); larger values are recorded as this.
const hdrHighest = int64(1) << 43

// Dist accumulates one metric's values. Up to limit values are kept exactly; past that they
// move into a pair of sparse HdrHistograms (one for magnitudes of negative values, since a
// lag or a mismatch can be negative), whose memory grows with the buckets in use, not with
// the range. Moments are accumulated exactly either way. Infinite and NaN values are only
// counted (see Stats).
//
// A Dist can also draw on a budget shared with its siblings (the time slices of one log), so
// that many small distributions cannot together hold more exact values than one large one.
// Whether a Dist leaves the exact mode depends only on the values and the order of the log
// they come from, never on scheduling, so results stay deterministic.
type Dist struct {
	n        int64 // finite values
	min, max float64
	inf      nonFinite
	// Running moments (Welford) of the finite values divided by 2^mexp (m2 by 2^(2·mexp)),
	// mexp the binary exponent of the largest so far, and their sum, for the histogram mode.
	mexp     int
	mean, m2 float64
	sum      Sum
	vals     []float64
	pos, neg *hdrhistogram.PackedHistogram
	limit    int
	hdrScale float64
	budget   *Budget
}

// Budget counts the exact values a group of distributions holds (see Dist.Share).
type Budget struct{ used, max int }

// Budgets returns n budgets of max exact values each.
func Budgets(n, max int) []Budget {
	b := make([]Budget, n)
	for i := range b {
		b[i].max = max
	}
	return b
}

// Share makes d draw its exact values from b, shared with the other distributions given it.
func (d *Dist) Share(b *Budget) { d.budget = b }

// NewDist returns an empty distribution that keeps up to limit values exactly; hdrScale
// multiplies a value into the histograms' integer units (0 means 1).
func NewDist(limit int, hdrScale float64) *Dist {
	if hdrScale == 0 {
		hdrScale = 1
	}
	return &Dist{limit: limit, hdrScale: hdrScale}
}

// Add records one value.
func (d *Dist) Add(v float64) {
	if d.inf.count(v) {
		return
	}
	if d.n == 0 || v < d.min {
		d.min = v
	}
	if d.n == 0 || v > d.max {
		d.max = v
	}
	d.n++
	if e := scaleExp(v); e > d.mexp {
		d.rescaleMoments(e)
	}
	x := math.Ldexp(v, -d.mexp)
	delta := x - d.mean
	d.mean += delta / float64(d.n)
	d.m2 += delta * (x - d.mean)
	d.sum.Add(v)
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

// rescaleMoments changes the moments' scale to 2^e (e > d.mexp).
func (d *Dist) rescaleMoments(e int) {
	d.mean = math.Ldexp(d.mean, d.mexp-e)
	d.m2 = math.Ldexp(d.m2, 2*(d.mexp-e))
	d.mexp = e
}

func (d *Dist) toHistogram() {
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

func (d *Dist) record(v float64) {
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

// Merge folds o into d. Callers merge in a fixed order, so results are deterministic.
func (d *Dist) Merge(o *Dist) {
	if o == nil {
		return
	}
	d.inf.merge(o.inf)
	if o.n == 0 {
		return
	}
	if d.n == 0 || o.min < d.min {
		d.min = o.min
	}
	if d.n == 0 || o.max > d.max {
		d.max = o.max
	}
	// Chan et al.'s pairwise update of mean and M2, on one scale.
	if o.mexp > d.mexp {
		d.rescaleMoments(o.mexp)
	}
	om, om2 := math.Ldexp(o.mean, o.mexp-d.mexp), math.Ldexp(o.m2, 2*(o.mexp-d.mexp))
	n := d.n + o.n
	delta := om - d.mean
	d.mean += delta * float64(o.n) / float64(n)
	d.m2 += om2 + delta*delta*float64(d.n)*float64(o.n)/float64(n)
	d.n = n
	d.sum.Merge(o.sum)
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

// Stats computes the summary, dividing every value by div into display units. It sorts the
// exact values in place. It returns nil for a distribution without values (NaN is none).
func (d *Dist) Stats(div float64) *Stats {
	if d == nil || d.n+d.inf.infinite() == 0 {
		return nil
	}
	s := &Stats{Count: d.n + d.inf.infinite(), NaN: d.inf.nan, PosInf: d.inf.posInf, NegInf: d.inf.negInf}
	switch {
	case d.n == 0:
	case d.pos == nil:
		s.Min, s.Max = d.min/div, d.max/div
		slices.Sort(d.vals)
		// Sum and moments over the sorted values, so the result does not depend on the
		// order requests were read in; scaled by 2^e, e the exponent of the largest
		// magnitude, so that no partial sum or square overflows.
		e := scaleExp(math.Max(math.Abs(d.min), math.Abs(d.max)))
		var sum Sum
		sum.exp = e
		for _, v := range d.vals {
			sum.addScaled(math.Ldexp(v, -e))
		}
		mean := (sum.s + sum.c) / float64(len(d.vals))
		var ss float64
		for _, v := range d.vals {
			x := math.Ldexp(v, -e) - mean
			ss += x * x
		}
		s.Sum = sum.Div(div)
		s.Avg = math.Ldexp(mean/div, e)
		s.Std = math.Ldexp(math.Sqrt(ss/float64(len(d.vals)))/div, e)
		for i, p := range Percentiles {
			s.P[i] = stats.PercentileSorted(d.vals, p) / div
		}
	default:
		s.Min, s.Max = d.min/div, d.max/div
		s.Approx = true
		s.Sum = d.sum.Div(div)
		s.Avg = math.Ldexp((d.sum.s+d.sum.c)/float64(d.n)/div, d.sum.exp)
		s.Std = math.Ldexp(math.Sqrt(d.m2/float64(d.n))/div, d.mexp)
		for i, p := range Percentiles {
			v := d.histPercentile(p)
			s.P[i] = math.Min(math.Max(v, d.min), d.max) / div
		}
	}
	if d.inf.infinite() > 0 {
		d.withInfinities(s, div)
	}
	return s
}

// withInfinities puts the infinite values into the statistics of the finite ones.
func (d *Dist) withInfinities(s *Stats, div float64) {
	pos, neg := d.inf.posInf > 0, d.inf.negInf > 0
	switch {
	case neg:
		s.Min = math.Inf(-1)
	case d.n == 0:
		s.Min = math.Inf(1)
	}
	switch {
	case pos:
		s.Max = math.Inf(1)
	case d.n == 0:
		s.Max = math.Inf(-1)
	}
	switch {
	case pos && neg:
		s.Sum, s.Avg = math.NaN(), math.NaN()
	case pos:
		s.Sum, s.Avg = math.Inf(1), math.Inf(1)
	default:
		s.Sum, s.Avg = math.Inf(-1), math.Inf(-1)
	}
	s.Std = math.NaN()
	// Percentiles over the whole order: -Inf values first, the finite ones, +Inf last.
	at := func(k int64) float64 {
		if k < d.inf.negInf {
			return math.Inf(-1)
		}
		k -= d.inf.negInf
		if k >= d.n {
			return math.Inf(1)
		}
		if d.pos == nil {
			return d.vals[k]
		}
		return math.Min(math.Max(d.histAt(k), d.min), d.max)
	}
	for i, p := range Percentiles {
		s.P[i] = stats.PercentileRanked(s.Count, p, at) / div
	}
}

// histPercentile applies the same linear method to the histogram pair, reading the values
// at the two neighbouring ranks.
func (d *Dist) histPercentile(p float64) float64 {
	n := d.n
	vi := float64(n-1) * (p / 100)
	lo := math.Floor(vi)
	i := int64(lo)
	if i >= n-1 {
		return d.max
	}
	return stats.Lerp(d.histAt(i), d.histAt(i+1), vi-lo)
}

// histAt returns the value of the k-th smallest recorded value (0-based).
func (d *Dist) histAt(k int64) float64 {
	nNeg := d.neg.TotalCount()
	if k < nNeg {
		// Negative values sorted ascending are their magnitudes sorted descending.
		return -rankValue(d.neg, nNeg-k) / d.hdrScale
	}
	return rankValue(d.pos, k-nNeg+1) / d.hdrScale
}

// rankValue returns the value of the r-th smallest entry (1-based) of h.
func rankValue(h *hdrhistogram.PackedHistogram, r int64) float64 {
	Total := h.TotalCount()
	// ValueAtPercentile rounds percentile/100*Total+0.5 down to a rank; aim a quarter below r.
	return float64(h.ValueAtPercentile((float64(r) - 0.25) / float64(Total) * 100))
}
