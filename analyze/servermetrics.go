package analyze

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/servermetrics"
)

// Server and GPU metrics on the benchmark's clock (docs/metrics.md "Server metrics"): the
// server's families mapped to stable names, read from each run's server_metrics.jsonl, and
// the GPU fields of the telemetry log (NVML or DCGM). Gauges get statistics over the
// profile window's points, counters a rate over it, histograms quantile estimates from
// their bucket increases over it; the same per time slice.

// ServerMetricSeries is one server (or GPU) metric as scraped during the run: one point per
// scrape (per GPU sample).
type ServerMetricSeries struct {
	// Name is the gate name without its statistic ("server.kv_cache_usage",
	// "gpu.utilization"); Unit its display unit; Labels the series' origin ("endpoint=URL",
	// "gpu=0 uuid=GPU-..."); Kind "gauge" (V is the value), "counter" (V is the rate since
	// the previous point) or "histogram_mean" (V is the mean of the observations since the
	// previous point; intervals without any are left out).
	Name, Unit, Labels, Kind string
	// T is seconds since the benchmark start (Summary.StartUnixNs); V the values, in Unit.
	T []float64
	V []float64
}

// ServerMetric is one server or GPU metric over the profile window (or a time slice).
type ServerMetric struct {
	// Name is the gate name without its statistic ("server.kv_cache_usage"); Unit its display
	// unit; Kind "gauge", "counter", "histogram" (Avg, P50, P99 are estimates from the
	// buckets, Min and Max unknown) or "ratio" (Avg only, a ratio of two counters'
	// increases); Source what it came from ("vllm:kv_cache_usage_perc", "nvml", "dcgm").
	Name, Unit, Kind, Source string
	// Avg, Min, Max, P50, P99 are a gauge's statistics over the points in the window,
	// pooled over endpoints and GPUs; Rate is a counter's increase per second over it.
	Avg, Min, Max, P50, P99, Rate float64
	// Samples is the number of points (a histogram's observations) the values rest on.
	Samples int64
	// Present is true for every metric in Summary.ServerMetrics; a zero ServerMetric from a
	// lookup that found nothing has it false.
	Present bool
}

// ServerMetric returns the named metric ("server.kv_cache_usage", "gpu.utilization").
func (s *Summary) ServerMetric(name string) ServerMetric {
	for _, m := range s.ServerMetrics {
		if m.Name == name {
			return m
		}
	}
	return ServerMetric{}
}

// Statistics each kind of server metric has, for gates.
var serverStats = map[string][]string{
	"gauge":     {"avg", "min", "max", "p50", "p99"},
	"histogram": {"avg", "p50", "p99"},
	"counter":   {"rate"},
	"ratio":     {"avg"},
}

// stat returns the named statistic, false when the metric's kind has none by that name.
func (m ServerMetric) stat(name string) (float64, bool) {
	if !slices.Contains(serverStats[m.Kind], name) {
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

// smBucket is one cumulative histogram bucket.
type smBucket struct {
	le float64
	n  float64
}

// smPoint is one scrape's value of a track: v for gauges and counters, the buckets, sum and
// count for histograms.
type smPoint struct {
	t          int64 // wall clock, ns
	v          float64
	buckets    []smBucket
	sum, count float64
}

// smTrack is one stable metric on one endpoint (or one GPU field of one GPU).
type smTrack struct {
	name, unit, kind, source, labels string
	scale                            float64
	pts                              []smPoint
}

// serverMetrics fills s.ServerSeries, s.ServerMetrics and each slice's ServerMetrics.
func (a *analysis) serverMetrics(s *Summary, parts []*logAnalysis) {
	var tracks []*smTrack
	for ri, r := range a.in.runs {
		path := filepath.Join(r.dir, servermetrics.FileName)
		f, err := servermetrics.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			s.Notes = append(s.Notes, fmt.Sprintf("server metrics left out: %v", err))
			continue
		}
		if f.Torn > 0 {
			s.Notes = append(s.Notes, fmt.Sprintf("%s: a torn final line (%d bytes) was skipped", path, f.Torn))
		}
		for _, n := range f.Notes {
			s.Notes = append(s.Notes, "server metrics: "+n.Message)
		}
		runLabel := ""
		if len(a.in.runs) > 1 {
			runLabel = " run=" + strconv.Itoa(ri)
		}
		tracks = append(tracks, serverTracks(f, runLabel)...)
	}
	tracks = append(tracks, gpuTracks(a, parts)...)
	if len(tracks) == 0 {
		return
	}
	for _, t := range tracks {
		if ser := t.series(s.StartUnixNs); len(ser.T) > 0 {
			s.ServerSeries = append(s.ServerSeries, ser)
		}
	}
	s.ServerMetrics = windowMetrics(tracks, s.StartUnixNs, s.EndUnixNs)
	for i := range s.Slices {
		sl := &s.Slices[i]
		sl.ServerMetrics = windowMetrics(tracks, sl.StartUnixNs, sl.EndUnixNs)
	}
}

// serverTracks maps a server-metrics file's server endpoints onto stable-named tracks. On
// each endpoint a stable name takes the best-ranked family (servermetrics.Mappings order)
// present; its label sets combine per the mapping's Agg.
func serverTracks(f *servermetrics.File, runLabel string) []*smTrack {
	type key struct {
		ep     int
		stable string
	}
	best := map[key]int{} // rank of the family used
	maps := map[int]servermetrics.Mapping{}
	for _, se := range f.Series {
		if f.Endpoints[se.Endpoint].Role != servermetrics.RoleServer {
			continue
		}
		m, rank, ok := servermetrics.Lookup(se.Family)
		if !ok {
			continue
		}
		k := key{se.Endpoint, m.Stable}
		if r, seen := best[k]; !seen || rank < r {
			best[k] = rank
		}
		maps[se.ID] = m
	}
	byKey := map[key]*smTrack{}
	var out []*smTrack
	for _, sc := range f.Scrapes {
		type acc struct {
			n          int
			v          float64
			buckets    map[float64]float64
			sum, count float64
		}
		accs := map[key]*acc{}
		for _, v := range sc.Values {
			m, ok := maps[v.Series]
			if !ok {
				continue
			}
			k := key{sc.Endpoint, m.Stable}
			if _, rank, _ := servermetrics.Lookup(f.Series[v.Series].Family); rank != best[k] {
				continue
			}
			x := accs[k]
			if x == nil {
				x = &acc{buckets: map[float64]float64{}}
				accs[k] = x
			}
			if math.IsNaN(v.V) {
				continue
			}
			se := &f.Series[v.Series]
			switch {
			case m.Kind != servermetrics.KindHistogram:
				x.v += v.V
				x.n++
			case strings.HasSuffix(se.Name, "_bucket"):
				le, err := strconv.ParseFloat(se.Labels["le"], 64)
				if err == nil {
					x.buckets[le] += v.V
				}
			case strings.HasSuffix(se.Name, "_sum"):
				x.sum += v.V
			case strings.HasSuffix(se.Name, "_count"):
				x.count += v.V
				x.n++
			}
		}
		for k, x := range accs {
			if x.n == 0 {
				continue
			}
			m := servermetrics.Mappings[best[k]]
			t := byKey[k]
			if t == nil {
				kind := m.Kind
				t = &smTrack{name: "server." + m.Stable, unit: m.Unit, kind: kind, source: m.Family, scale: m.Scale,
					labels: "endpoint=" + f.Endpoints[k.ep].URL + runLabel}
				byKey[k] = t
				out = append(out, t)
			}
			p := smPoint{t: f.Header.StartUnixNs + sc.TimeNs, v: x.v}
			if m.Agg == servermetrics.AggMean {
				p.v /= float64(x.n)
			}
			if m.Kind == servermetrics.KindHistogram {
				p.sum, p.count = x.sum, x.count
				for le, n := range x.buckets {
					p.buckets = append(p.buckets, smBucket{le, n})
				}
				slices.SortFunc(p.buckets, func(a, b smBucket) int { return cmp.Compare(a.le, b.le) })
			}
			t.pts = append(t.pts, p)
		}
	}
	for _, t := range out {
		slices.SortStableFunc(t.pts, func(a, b smPoint) int { return cmp.Compare(a.t, b.t) })
	}
	slices.SortStableFunc(out, func(a, b *smTrack) int {
		if c := cmp.Compare(a.name, b.name); c != 0 {
			return c
		}
		return cmp.Compare(a.labels, b.labels)
	})
	return out
}

// gpuFields are the GPU fields as server metrics: gate names gpu.<field>.<stat>. The
// utilisations are ratios (0.8 is 80%), like the KV-cache usage.
var gpuFields = []struct {
	name, unit string
	scale      float64
	get        func(*rawlog.GPUSample) int64
}{
	{"gpu.power", "W", 1e-3, func(g *rawlog.GPUSample) int64 { return g.PowerMilliwatts }},
	{"gpu.utilization", "ratio", 0.01, func(g *rawlog.GPUSample) int64 { return g.GPUUtilPct }},
	{"gpu.memory_utilization", "ratio", 0.01, func(g *rawlog.GPUSample) int64 { return g.MemUtilPct }},
	{"gpu.memory_used", "GB", 1e-9, func(g *rawlog.GPUSample) int64 { return g.MemUsedBytes }},
	{"gpu.sm_clock", "MHz", 1, func(g *rawlog.GPUSample) int64 { return g.SMClockMHz }},
	{"gpu.temperature", "°C", 1, func(g *rawlog.GPUSample) int64 { return g.TempC }},
}

// gpuTracks are the GPU samples of the telemetry logs, one track per GPU and field.
func gpuTracks(a *analysis, parts []*logAnalysis) []*smTrack {
	type key struct {
		run, gpu int
		uuid     string
		field    int
	}
	byKey := map[key]*smTrack{}
	var out []*smTrack
	for i, job := range a.in.jobs {
		if !job.telemetry || parts[i] == nil {
			continue
		}
		m := a.in.runs[job.run].m
		source := "nvml"
		if m.Options["gpu_telemetry_source"] == "dcgm" {
			source = "dcgm"
		}
		for _, g := range parts[i].gpu {
			for fi, f := range gpuFields {
				v := f.get(&g)
				if v < 0 {
					continue
				}
				k := key{job.run, g.GPU, g.UUID, fi}
				t := byKey[k]
				if t == nil {
					labels := fmt.Sprintf("gpu=%d uuid=%s", g.GPU, g.UUID)
					if len(a.in.runs) > 1 {
						labels += " run=" + strconv.Itoa(job.run)
					}
					t = &smTrack{name: f.name, unit: f.unit, kind: servermetrics.KindGauge, source: source, scale: f.scale, labels: labels}
					byKey[k] = t
					out = append(out, t)
				}
				t.pts = append(t.pts, smPoint{t: m.StartUnixNs + g.TimeNs, v: float64(v)})
			}
		}
	}
	for _, t := range out {
		slices.SortStableFunc(t.pts, func(a, b smPoint) int { return cmp.Compare(a.t, b.t) })
	}
	return out
}

// series is the track's points in display units on the benchmark clock.
func (t *smTrack) series(zero int64) ServerMetricSeries {
	s := ServerMetricSeries{Name: t.name, Unit: t.unit, Labels: t.labels, Kind: t.kind}
	sec := func(ns int64) float64 { return float64(ns-zero) / 1e9 }
	for i, p := range t.pts {
		switch t.kind {
		case servermetrics.KindGauge:
			s.T, s.V = append(s.T, sec(p.t)), append(s.V, p.v*t.scale)
		case servermetrics.KindCounter:
			if i == 0 || p.t <= t.pts[i-1].t {
				continue
			}
			s.T = append(s.T, sec(p.t))
			s.V = append(s.V, increase(t.pts[i-1].v, p.v)*t.scale/(float64(p.t-t.pts[i-1].t)/1e9))
		case servermetrics.KindHistogram:
			s.Kind = "histogram_mean"
			if i == 0 {
				continue
			}
			q := t.pts[i-1]
			if dc := p.count - q.count; dc > 0 {
				s.T, s.V = append(s.T, sec(p.t)), append(s.V, (p.sum-q.sum)/dc*t.scale)
			}
		}
	}
	return s
}

// increase is a counter's increase from a to b; a counter that went down was reset, and
// counted from zero again.
func increase(a, b float64) float64 {
	if b < a {
		return b
	}
	return b - a
}

// bracket returns the indexes of the points that enclose [lo, hi] as tightly as they allow:
// the last at or before lo (else the first) and the first at or after hi (else the last).
func (t *smTrack) bracket(lo, hi int64) (int, int, bool) {
	if len(t.pts) < 2 {
		return 0, 0, false
	}
	fi, li := 0, len(t.pts)-1
	for i, p := range t.pts {
		if p.t <= lo {
			fi = i
		}
	}
	for i := len(t.pts) - 1; i >= 0; i-- {
		if t.pts[i].t >= hi {
			li = i
		}
	}
	return fi, li, t.pts[li].t > t.pts[fi].t
}

// windowMetrics computes every stable metric over [lo, hi] (wall clock, ns).
func windowMetrics(tracks []*smTrack, lo, hi int64) []ServerMetric {
	type acc struct {
		m       ServerMetric
		d       *dist
		rate    float64
		buckets map[float64]float64
		sum     float64
		count   float64
		ok      bool
		ratioN  float64 // prefix-cache hits and queries, for the derived hit rate
	}
	byName := map[string]*acc{}
	var names []string
	get := func(t *smTrack) *acc {
		x := byName[t.name]
		if x == nil {
			x = &acc{m: ServerMetric{Name: t.name, Unit: t.unit, Kind: t.kind, Source: t.source}, buckets: map[float64]float64{}}
			byName[t.name] = x
			names = append(names, t.name)
		} else if !strings.Contains(x.m.Source, t.source) {
			x.m.Source += "," + t.source
		}
		return x
	}
	for _, t := range tracks {
		switch t.kind {
		case servermetrics.KindGauge:
			var in []float64
			for _, p := range t.pts {
				if p.t >= lo && p.t <= hi {
					in = append(in, p.v*t.scale)
				}
			}
			if len(in) == 0 {
				// A window shorter than the scrape interval: the points around it.
				if fi, li, ok := t.bracket(lo, hi); ok {
					in = append(in, t.pts[fi].v*t.scale, t.pts[li].v*t.scale)
				}
			}
			if len(in) == 0 {
				continue
			}
			x := get(t)
			if x.d == nil {
				x.d = newDist(1<<20, 1e6)
			}
			for _, v := range in {
				x.d.add(v)
			}
			x.ok = true
		case servermetrics.KindCounter:
			fi, li, ok := t.bracket(lo, hi)
			if !ok {
				continue
			}
			inc := 0.0
			for i := fi + 1; i <= li; i++ {
				inc += increase(t.pts[i-1].v, t.pts[i].v)
			}
			x := get(t)
			x.rate += inc * t.scale / (float64(t.pts[li].t-t.pts[fi].t) / 1e9)
			x.ratioN += inc
			x.m.Samples += int64(li - fi + 1)
			x.ok = true
		case servermetrics.KindHistogram:
			fi, li, ok := t.bracket(lo, hi)
			if !ok {
				continue
			}
			a, b := t.pts[fi], t.pts[li]
			x := get(t)
			if b.count < a.count { // reset: count from zero
				a = smPoint{}
			}
			x.sum += b.sum - a.sum
			x.count += b.count - a.count
			for _, bk := range b.buckets {
				x.buckets[bk.le] += bk.n - bucketAt(a.buckets, bk.le)
			}
			x.ok = true
		}
	}
	var out []ServerMetric
	for _, n := range names {
		x := byName[n]
		if !x.ok {
			continue
		}
		m := x.m
		switch m.Kind {
		case servermetrics.KindGauge:
			st := x.d.stats(1)
			m.Avg, m.Min, m.Max, m.P50, m.P99, m.Samples = st.Avg, st.Min, st.Max, st.P[4], st.P[8], st.Count
		case servermetrics.KindCounter:
			m.Rate = x.rate
		case servermetrics.KindHistogram:
			if x.count <= 0 {
				continue
			}
			scale := 1.0
			for _, t := range tracks {
				if t.name == n {
					scale = t.scale
					break
				}
			}
			m.Avg = x.sum / x.count * scale
			m.P50 = histQuantile(x.buckets, 0.50) * scale
			m.P99 = histQuantile(x.buckets, 0.99) * scale
			m.Samples = int64(math.Round(x.count))
		}
		m.Present = true
		out = append(out, m)
	}
	// vLLM reports prefix caching as two counters: their ratio is the hit rate.
	if h, q := byName["server.prefix_cache_hits"], byName["server.prefix_cache_queries"]; h != nil && q != nil && h.ok && q.ok && q.ratioN > 0 && byName["server.prefix_cache_hit_rate"] == nil {
		out = append(out, ServerMetric{Name: "server.prefix_cache_hit_rate", Unit: "ratio", Kind: "ratio", Source: h.m.Source + "/" + q.m.Source,
			Avg: h.ratioN / q.ratioN, Samples: q.m.Samples, Present: true})
	}
	return out
}

func bucketAt(b []smBucket, le float64) float64 {
	for _, x := range b {
		if x.le == le {
			return x.n
		}
	}
	return 0
}

// histQuantile estimates quantile q from cumulative bucket counts as Prometheus's
// histogram_quantile does: linear within the bucket holding the rank, the lower bound of the
// first bucket being 0; a rank in the +Inf bucket gives the largest finite bound.
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
	if total <= 0 {
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
			return prevLE + (le-prevLE)*(rank-prevN)/(n-prevN)
		}
		prevLE, prevN = le, n
	}
	return prevLE
}

// TTFTComparison is the server's TTFT histogram next to the client's TTFT over the same
// window: the difference is the network, the client, and queueing outside the server's
// histogram.
type TTFTComparison struct {
	// Server and Client in ms: avg, p50, p99 (the server's are bucket estimates).
	ServerAvg, ServerP50, ServerP99 float64
	ClientAvg, ClientP50, ClientP99 float64
	Source                          string
}

// CompareTTFT returns the comparison, false when the run lacks either side.
func (s *Summary) CompareTTFT() (TTFTComparison, bool) {
	sm := s.ServerMetric("server.server_ttft")
	r := s.result(MTimeToFirstToken)
	if !sm.Present || r == nil || r.Stats == nil {
		return TTFTComparison{}, false
	}
	return TTFTComparison{ServerAvg: sm.Avg, ServerP50: sm.P50, ServerP99: sm.P99,
		ClientAvg: r.Stats.Avg, ClientP50: r.Stats.P[4], ClientP99: r.Stats.P[8], Source: sm.Source}, true
}

// parseServerGate parses the left side of a gate on a server or GPU metric:
// server.<stable name>.<stat> or gpu.<field>.<stat>, the stat one of avg, min, max, p50,
// p99 (gauges), avg, p50, p99 (histograms) or rate (counters).
func parseServerGate(g Gate, lhs string) (Gate, error) {
	i := strings.LastIndexByte(lhs, '.')
	name, stat := lhs[:i], lhs[i+1:]
	unit, kind, ok := serverMetricInfo(name)
	if !ok {
		return g, fmt.Errorf("--gate %q: unknown server metric %q (%sserver.<name> of docs/metrics.md \"Server metrics\": %s; or gpu.<field>: %s)",
			g.Expr, name, didYouMean(name, append(serverGateNames(), gpuGateNames()...)), strings.Join(serverGateNames(), ", "), strings.Join(gpuGateNames(), ", "))
	}
	if stat == "mean" {
		stat = "avg"
	}
	if !slices.Contains(serverStats[kind], stat) {
		return g, fmt.Errorf("--gate %q: %s is a %s; its statistics are %s", g.Expr, name, kind, strings.Join(serverStats[kind], ", "))
	}
	g.Server, g.Stat = true, stat
	g.Metric = MetricDef{Tag: name, Header: name, Unit: unit, Kind: Derived}
	return g, nil
}

// serverMetricInfo returns the unit and kind of a server.* or gpu.* name.
func serverMetricInfo(name string) (unit, kind string, ok bool) {
	if stable, found := strings.CutPrefix(name, "server."); found {
		if stable == "prefix_cache_hit_rate" {
			return "ratio", "ratio", true // a gauge (SGLang) or a ratio of counters (vLLM): avg either way
		}
		for _, m := range servermetrics.Mappings {
			if m.Stable == stable {
				return m.Unit, m.Kind, true
			}
		}
		return "", "", false
	}
	for _, f := range gpuFields {
		if f.name == name {
			return f.unit, servermetrics.KindGauge, true
		}
	}
	return "", "", false
}

func serverGateNames() []string {
	var out []string
	for _, n := range servermetrics.StableNames() {
		out = append(out, "server."+n)
	}
	return out
}

func gpuGateNames() []string {
	var out []string
	for _, f := range gpuFields {
		out = append(out, f.name)
	}
	return out
}

// evalServerGate checks a gate on a server or GPU metric; one whose metric the run lacks is
// not evaluable (and fails), saying why.
func evalServerGate(s *Summary, g Gate) GateResult {
	r := GateResult{Gate: g}
	m := s.ServerMetric(g.Metric.Tag)
	if !m.Present {
		r.Missing = true
		switch {
		case strings.HasPrefix(g.Metric.Tag, "gpu."):
			r.Why = fmt.Sprintf("the run has no %s values (no GPU telemetry: NVML found no GPU here, and no --gpu-telemetry DCGM exporter answered)", g.Metric.Tag)
		case !hasServerSeries(s):
			r.Why = fmt.Sprintf("the run has no %s values (no server metrics were scraped: see %s and --server-metrics-url)", g.Metric.Tag, servermetrics.FileName)
		default:
			r.Why = fmt.Sprintf("the run has no %s values (the scraped endpoints expose none of its families)", g.Metric.Tag)
		}
		return r
	}
	v, ok := m.stat(g.Stat)
	if !ok {
		r.Missing = true
		r.Why = fmt.Sprintf("%s is a %s here (%s); its statistics are %s", m.Name, m.Kind, m.Source, strings.Join(serverStats[m.Kind], ", "))
		return r
	}
	r.Actual = v
	r.OK = g.holds(v)
	return r
}

// hasServerSeries reports whether any server.* series was scraped.
func hasServerSeries(s *Summary) bool {
	for _, x := range s.ServerSeries {
		if strings.HasPrefix(x.Name, "server.") {
			return true
		}
	}
	return false
}
