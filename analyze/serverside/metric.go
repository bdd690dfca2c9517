package serverside

import "slices"

// Series is one server (or GPU) metric as scraped during the run: one point per
// scrape (per GPU sample), one series per origin (endpoint or GPU) however many shards
// scraped it.
type Series struct {
	// Name is the gate name without its statistic ("server.kv_cache_usage",
	// "gpu.utilization"); Unit its display unit; Labels the series' origin ("endpoint=URL",
	// "gpu=0 uuid=GPU-..."); Kind "gauge" (V is the value), "counter" (V is the rate since
	// the previous point) or "histogram_mean" (V is the mean of the observations since the
	// previous point; intervals without any are left out).
	Name, Unit, Labels, Kind string
	// T is seconds since the benchmark start (the zero given to Origins.Series); V the values, in Unit.
	T []float64
	V []float64
}

// Metric is one server or GPU metric over the profile window (or a time slice).
type Metric struct {
	// Name is the gate name without its statistic ("server.kv_cache_usage"); Unit its display
	// unit; Kind "gauge", "counter", "histogram" (Avg, P50, P99 are estimates from the
	// buckets, Min and Max unknown) or "ratio" (Avg only, a ratio of two counters'
	// increases); Source what it came from ("vllm:kv_cache_usage_perc", "nvml", "dcgm").
	Name, Unit, Kind, Source string
	// Avg, Min, Max, P50, P99 are a gauge's statistics over the points in the window,
	// pooled over endpoints and GPUs; Rate is a counter's increase per second over it,
	// summed over endpoints (each counted once, however many shards scraped it). A value
	// that is not finite is reported as such (see accum.Stats; null in JSON).
	Avg, Min, Max, P50, P99, Rate float64
	// Samples is the number of points (a histogram's observations) the values rest on.
	Samples int64
	// Present is true for every metric Window computes; a zero Metric from a
	// lookup that found nothing has it false.
	Present bool
}

// kindStats are the statistics each kind of server metric has, for gates.
var kindStats = map[string][]string{
	"gauge":     {"avg", "min", "max", "p50", "p99"},
	"histogram": {"avg", "p50", "p99"},
	"counter":   {"rate"},
	"ratio":     {"avg"},
}

// StatNames are the statistics the metric's kind has (avg, min, max, p50, p99, rate).
func (m Metric) StatNames() []string { return kindStats[m.Kind] }

// Has reports whether the metric's kind has the statistic stat (avg, min, max, p50, p99,
// rate): a reporter shows the others as absent, never as 0.
func (m Metric) Has(stat string) bool { return slices.Contains(kindStats[m.Kind], stat) }

// Stat returns the named statistic, false when the metric's kind has none by that name.
func (m Metric) Stat(name string) (float64, bool) {
	if !slices.Contains(kindStats[m.Kind], name) {
		return 0, false
	}
	switch name {
	case "avg":
		return m.Avg, true
	case "min":
		return m.Min, true
	case "max":
		return m.Max, true
	case "p50":
		return m.P50, true
	case "p99":
		return m.P99, true
	}
	return m.Rate, true
}

// KindStats are the statistics a server or GPU metric of kind has (gauge, histogram,
// counter, ratio).
func KindStats(kind string) []string { return kindStats[kind] }
