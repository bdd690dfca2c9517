package serverside

import (
	"math"
	"slices"
	"strings"

	"github.com/llmbench/llmbench/analyze/accum"
	"github.com/llmbench/llmbench/servermetrics"
)

// Server and GPU metrics over a window (the profile window, or a time slice): gauges get
// statistics over the points inside, counters a rate over the points that bracket it,
// histograms quantile estimates from their bucket increases over it. What several runs
// (shards) read from one origin counts once: a counter's rate and a histogram's increases
// are taken per run and averaged over the runs of one origin, then summed over origins; a
// gauge pools every point. Every sum is overflow-free (accum.Total), and a value that is not
// finite is reported as such (see accum.Stats).

// addIncrease adds a counter's increase from a to b to t, without overflowing where b - a
// itself would; a counter that went down was reset, and counted from zero again.
func addIncrease(t *accum.Total, a, b float64) {
	if b < a {
		t.Add(b)
		return
	}
	t.AddDiff(b, a)
}

// bracket returns the indexes of the points that enclose [lo, hi] (accum.Bracket).
func (t *sourceSeries) bracket(lo, hi int64) (int, int, bool) {
	return accum.Bracket(len(t.pts), func(i int) int64 { return t.pts[i].t }, lo, hi)
}

// windowMetrics computes every stable metric over [lo, hi] (wall clock, ns).
func windowMetrics(origins []*originSeries, lo, hi int64) []Metric {
	type acc struct {
		m          Metric
		d          *accum.Dist
		scale      float64
		rate       accum.Total
		buckets    map[float64]*accum.Total
		sum, count accum.Total
		ok         bool
		ratioN     accum.Total // prefix-cache hits and queries, for the derived hit rate
	}
	byName := map[string]*acc{}
	var names []string
	get := func(o *originSeries) *acc {
		x := byName[o.name]
		if x == nil {
			x = &acc{m: Metric{Name: o.name, Unit: o.unit, Kind: o.kind, Source: o.source}, scale: o.scale, buckets: map[float64]*accum.Total{}}
			byName[o.name] = x
			names = append(names, o.name)
		} else if !strings.Contains(x.m.Source, o.source) {
			x.m.Source += "," + o.source
		}
		return x
	}
	bucket := func(m map[float64]*accum.Total, le float64) *accum.Total {
		b := m[le]
		if b == nil {
			b = &accum.Total{}
			m[le] = b
		}
		return b
	}
	for _, o := range origins {
		switch o.kind {
		case servermetrics.KindGauge:
			var in []float64
			for _, t := range o.runs {
				for _, p := range t.pts {
					if p.t >= lo && p.t <= hi {
						in = append(in, p.v*o.scale)
					}
				}
			}
			if len(in) == 0 {
				// A window shorter than the scrape interval: the points around it.
				for _, t := range o.runs {
					if fi, li, ok := t.bracket(lo, hi); ok {
						in = append(in, t.pts[fi].v*o.scale, t.pts[li].v*o.scale)
					}
				}
			}
			if len(in) == 0 {
				continue
			}
			x := get(o)
			if x.d == nil {
				x.d = accum.NewDist(1<<20, 1e6)
			}
			for _, v := range in {
				x.d.Add(v)
			}
			x.ok = true
		case servermetrics.KindCounter:
			var rate, inc accum.Total
			runs, samples := 0, 0
			for _, t := range o.runs {
				fi, li, ok := t.bracket(lo, hi)
				if !ok {
					continue
				}
				var ti accum.Total
				for i := fi + 1; i <= li; i++ {
					addIncrease(&ti, t.pts[i-1].v, t.pts[i].v)
				}
				rate.Add(ti.Div(float64(t.pts[li].t-t.pts[fi].t) / 1e9))
				inc.Merge(&ti)
				runs++
				samples += li - fi + 1
			}
			if runs == 0 {
				continue
			}
			x := get(o)
			x.rate.Add(rate.Div(float64(runs)) * o.scale)
			x.ratioN.Merge(inc.Divided(float64(runs)))
			x.m.Samples += int64(samples)
			x.ok = true
		case servermetrics.KindHistogram:
			var sum, count accum.Total
			buckets := map[float64]*accum.Total{}
			runs := 0
			for _, t := range o.runs {
				fi, li, ok := t.bracket(lo, hi)
				if !ok {
					continue
				}
				a, b := t.pts[fi], t.pts[li]
				if b.count < a.count { // reset: count from zero
					a = scrapePoint{}
				}
				sum.AddDiff(b.sum, a.sum)
				count.AddDiff(b.count, a.count)
				for _, bk := range b.buckets {
					bucket(buckets, bk.le).AddDiff(bk.n, bucketAt(a.buckets, bk.le))
				}
				runs++
			}
			if runs == 0 {
				continue
			}
			x := get(o)
			k := float64(runs)
			x.sum.Merge(sum.Divided(k))
			x.count.Merge(count.Divided(k))
			for le, b := range buckets {
				bucket(x.buckets, le).Merge(b.Divided(k))
			}
			x.ok = true
		}
	}
	var out []Metric
	for _, n := range names {
		x := byName[n]
		if !x.ok {
			continue
		}
		m := x.m
		switch m.Kind {
		case servermetrics.KindGauge:
			if st := x.d.Stats(1); st != nil {
				m.Avg, m.Min, m.Max, m.P50, m.P99, m.Samples = st.Avg, st.Min, st.Max, st.P[4], st.P[8], st.Count
			} else {
				// Every point NaN (label sets at +Inf and -Inf): reported as such.
				nan := math.NaN()
				m.Avg, m.Min, m.Max, m.P50, m.P99 = nan, nan, nan, nan, nan
			}
		case servermetrics.KindCounter:
			m.Rate = x.rate.Value()
		case servermetrics.KindHistogram:
			count := x.count.Value()
			if count <= 0 {
				continue
			}
			cum := make(map[float64]float64, len(x.buckets))
			for le, b := range x.buckets {
				cum[le] = b.Value()
			}
			m.Avg = accum.Ratio(&x.sum, &x.count) * x.scale
			m.P50 = histQuantile(cum, 0.50) * x.scale
			m.P99 = histQuantile(cum, 0.99) * x.scale
			m.Samples = accum.ClampInt64(math.Round(count))
		}
		m.Present = true
		out = append(out, m)
	}
	// vLLM reports prefix caching as two counters: their ratio is the hit rate.
	if h, q := byName["server.prefix_cache_hits"], byName["server.prefix_cache_queries"]; h != nil && q != nil && h.ok && q.ok && q.ratioN.Value() > 0 && byName["server.prefix_cache_hit_rate"] == nil {
		out = append(out, Metric{Name: "server.prefix_cache_hit_rate", Unit: "ratio", Kind: "ratio", Source: h.m.Source + "/" + q.m.Source,
			Avg: accum.Ratio(&h.ratioN, &q.ratioN), Samples: q.m.Samples, Present: true})
	}
	return out
}

func bucketAt(b []histBucket, le float64) float64 {
	for _, x := range b {
		if x.le == le {
			return x.n
		}
	}
	return 0
}

// histQuantile estimates quantile q from cumulative bucket counts as Prometheus's
// histogram_quantile does: linear within the bucket holding the rank, the lower bound of the
// first bucket being 0; a rank in the +Inf bucket gives the largest finite bound. Without a
// finite, positive number of observations there is no estimate (NaN).
func histQuantile(buckets map[float64]float64, q float64) float64 {
	les := make([]float64, 0, len(buckets))
	for le := range buckets {
		les = append(les, le)
	}
	slices.Sort(les)
	if len(les) == 0 {
		return math.NaN()
	}
	total := buckets[les[len(les)-1]]
	if !(total > 0) || math.IsInf(total, 1) {
		return math.NaN()
	}
	rank := q * total
	prevLE, prevN := 0.0, 0.0
	for _, le := range les {
		n := buckets[le]
		if n >= rank {
			if math.IsInf(le, 1) {
				return prevLE
			}
			if n == prevN {
				return le
			}
			// Linear within the bucket; weighed instead where the bounds' span overflows.
			if x := (le - prevLE) * (rank - prevN); !math.IsInf(x, 0) {
				return prevLE + x/(n-prevN)
			}
			f := (rank - prevN) / (n - prevN)
			return prevLE*(1-f) + le*f
		}
		prevLE, prevN = le, n
	}
	return prevLE
}
