package report

import (
	"math"
	"slices"

	"github.com/llmbench/llmbench/stats"
)

// Limits that keep a page's size independent of the run's length and request count.
const (
	maxScatter   = 1200 // points per scatter series (LTTB)
	maxLine      = 600  // points per telemetry line (LTTB)
	timeGrid     = 400  // instants of the cumulative and in-flight curves
	maxHistBins  = 40   // bins of a length histogram
	quantileStep = 0.025
	maxQuantileX = 4 // −log10(1−q): p99.99
)

// Chart is one chart of a page: uPlot's aligned data (Data[0] is x) and how to draw it.
type Chart struct {
	ID      string `json:"id"`
	Section string `json:"section"`
	Title   string `json:"title"`
	Caption string `json:"caption"`
	X       Axis   `json:"x"`
	Y       Axis   `json:"y"`
	// Y2 is a second y axis, on the right, for the series marked Y2 (nil: none).
	Y2     *Axis    `json:"y2,omitempty"`
	Series []Series `json:"series"`
	Data   []column `json:"data"`
	Marks  []Mark   `json:"marks,omitempty"`
	// Time says the x axis is seconds since the benchmark started, shared (range and cursor)
	// by every time chart of the page.
	Time bool `json:"time,omitempty"`
	// Raw is the series a binned chart was drawn from, which a button on the page shows
	// instead (nil: none).
	Raw *RawView `json:"raw,omitempty"`
}

// RawView is what a chart's button switches it to: the raw series behind its bins, on the
// same x axis.
type RawView struct {
	Button string   `json:"button"`
	Y      Axis     `json:"y"`
	Series []Series `json:"series"`
	Data   []column `json:"data"`
}

// Axis names an axis; Kind "quantile" means x is −log10(1−q) (0 = p0, 1 = p90, 2 = p99).
type Axis struct {
	Label string `json:"label"`
	Kind  string `json:"kind,omitempty"`
}

// Series is one data column after x: its legend label and style (line, points, step, bars;
// stack: bars drawn over each other, each a running sum, so the parts show as bands).
type Series struct {
	Label string `json:"label"`
	Style string `json:"style"`
	Color string `json:"color,omitempty"`
	// Y2 draws the series against the chart's second axis.
	Y2 bool `json:"y2,omitempty"`
}

// Mark is a labelled vertical line at X (a percentile on a quantile chart).
type Mark struct {
	Label string `json:"label"`
	X     Number `json:"x"`
}

// quantileGrid is the x grid of a quantile chart of n values: −log10(1−q) from 0 (p0) up to
// log10(n) (beyond it the curve is the maximum), at most maxQuantileX.
func quantileGrid(n int) column {
	top := math.Min(maxQuantileX, math.Max(1, math.Log10(float64(max(n, 2)))))
	var g column
	for x := 0.0; x < top+quantileStep/2; x += quantileStep {
		g = append(g, math.Round(x*1000)/1000)
	}
	return g
}

// quantiles evaluates sorted (ascending) at the grid's percentiles, NaN when it is empty.
func quantiles(sorted []float64, grid column) column {
	out := make(column, len(grid))
	for i, x := range grid {
		if len(sorted) == 0 {
			out[i] = math.NaN()
			continue
		}
		out[i] = stats.PercentileSorted(sorted, 100*(1-math.Pow(10, -x)))
	}
	return out
}

// percentileMarks are the p50, p90 and p99 lines that fit the grid.
func percentileMarks(grid column) []Mark {
	var m []Mark
	for _, p := range []struct {
		l string
		x float64
	}{{"p50", math.Log10(2)}, {"p90", 1}, {"p99", 2}} {
		if len(grid) > 0 && p.x <= grid[len(grid)-1]+1e-9 {
			m = append(m, Mark{Label: p.l, X: Number(p.x)})
		}
	}
	return m
}

// sortedCopy returns v sorted ascending, NaNs left out.
func sortedCopy(v []float64) []float64 {
	out := make([]float64, 0, len(v))
	for _, x := range v {
		if !math.IsNaN(x) {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}

// countAtOrBefore returns how many of sorted are ≤ t.
func countAtOrBefore(sorted []float64, t float64) int {
	i, found := slices.BinarySearch(sorted, t)
	for found && i < len(sorted) && sorted[i] == t {
		i++
	}
	return i
}

// grid returns n+1 evenly spaced instants from lo to hi.
func grid(lo, hi float64, n int) column {
	g := make(column, n+1)
	for i := range g {
		g[i] = lo + (hi-lo)*float64(i)/float64(n)
	}
	return g
}

// align merges series with their own ascending x into one x column and one y column per
// series, NaN (a gap) where a series has no point at an x.
func align(xs, ys []column) []column {
	var all []float64
	for _, x := range xs {
		all = append(all, x...)
	}
	slices.Sort(all)
	all = slices.Compact(all)
	out := []column{all}
	for k := range xs {
		y := make(column, len(all))
		j := 0
		for i, x := range all {
			y[i] = math.NaN()
			for j < len(xs[k]) && xs[k][j] < x {
				j++
			}
			if j < len(xs[k]) && xs[k][j] == x {
				y[i] = ys[k][j]
			}
		}
		out = append(out, y)
	}
	return out
}

// histogram bins the whole-number values of each series into at most maxHistBins equal
// bins over their common range; x is each bin's lower edge.
func histogram(series ...[]float64) []column {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, v := range s {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if math.IsInf(lo, 0) {
		return nil
	}
	lo, hi = math.Floor(lo), math.Floor(hi)
	width := math.Max(1, math.Ceil((hi-lo+1)/maxHistBins))
	n := int((hi-lo)/width) + 1
	out := []column{make(column, n)}
	for i := range n {
		out[0][i] = lo + float64(i)*width
	}
	for _, s := range series {
		c := make(column, n)
		for _, v := range s {
			c[min(n-1, int((math.Floor(v)-lo)/width))]++
		}
		out = append(out, c)
	}
	return out
}
