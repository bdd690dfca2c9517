package serverside

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/analyze/accum"
	"github.com/llmbench/llmbench/analyze/rundir"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/servermetrics"
)

// Reading server and GPU metrics into series, one per source and run, and grouping the
// series that several runs (the shards of a distributed run) read from one origin, so that
// what N shards scraped from one server counts once.

// sourceSeries is one stable metric as one run read it from one source: a server endpoint
// (one point per scrape) or one field of one GPU (one point per sample).
type sourceSeries struct {
	name, unit, kind, source string
	scale                    float64
	// origin is what was measured, the same for every run that measured it: the endpoint's
	// URL (with the run's host for a loopback URL) or the GPU's UUID. labels shows it.
	origin, labels string
	run            int
	pts            []scrapePoint
}

// scrapePoint is one scrape's value: v for gauges and counters, the cumulative buckets, sum
// and count for histograms.
type scrapePoint struct {
	t          int64 // wall clock, ns
	v          float64
	buckets    []histBucket
	sum, count float64
}

// histBucket is one cumulative histogram bucket.
type histBucket struct {
	le float64
	n  float64
}

// originSeries are the series of one stable metric from one origin, one per run that read
// it: the shards of a distributed run all scraping one server give one originSeries, which
// counts once.
type originSeries struct {
	name, unit, kind, source, labels string
	scale                            float64
	runs                             []*sourceSeries // by run
}

// GPULog is one log's GPU samples: a telemetry log's, on its run's monotonic clock.
type GPULog struct {
	rundir.Log
	Samples []rawlog.GPUSample
}

// Origins are the server and GPU metrics a set of runs read, one group of series per
// stable name and origin, in the order they first occur.
type Origins struct{ origins []*originSeries }

// Read reads each run's server_metrics.jsonl and the GPU samples of the telemetry logs
// among gpus into series by origin. notes say what was left out: unreadable files, torn
// lines, the scraper's own notes, NaN samples.
func Read(runs []rundir.Run, gpus []GPULog) (o *Origins, notes []string) {
	var sources []*sourceSeries
	nan := map[string]int{} // NaN samples left out, by stable name
	hosts := map[string]bool{}
	for _, r := range runs {
		hosts[r.Manifest.Host] = true
	}
	multiHost := len(hosts) > 1
	for ri, r := range runs {
		path := filepath.Join(r.Dir, servermetrics.FileName)
		f, err := servermetrics.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			notes = append(notes, fmt.Sprintf("server metrics left out: %v", err))
			continue
		}
		if f.Torn > 0 {
			notes = append(notes, fmt.Sprintf("%s: a torn final line (%d bytes) was skipped", path, f.Torn))
		}
		for _, n := range f.Notes {
			notes = append(notes, "server metrics: "+n.Message)
		}
		sources = append(sources, serverSources(f, ri, r.Manifest.Host, multiHost, nan)...)
	}
	sources = append(sources, gpuSources(runs, gpus, multiHost)...)
	notes = append(notes, nanNotes(nan)...)
	return &Origins{origins: byOrigin(sources)}, notes
}

// Empty reports whether no run read any server or GPU metric.
func (o *Origins) Empty() bool { return len(o.origins) == 0 }

// Series are the metrics' series in display units, T in seconds since zero (wall clock,
// ns): one per origin that has points, nil when none has.
func (o *Origins) Series(zero int64) []Series {
	var out []Series
	for _, x := range o.origins {
		if ser := x.series(zero); len(ser.T) > 0 {
			out = append(out, ser)
		}
	}
	return out
}

// Window computes every stable metric over [lo, hi] (wall clock, ns).
func (o *Origins) Window(lo, hi int64) []Metric { return windowMetrics(o.origins, lo, hi) }

// isLoopback reports whether rawURL names this machine: each host that scraped it scraped
// its own server.
func isLoopback(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// serverSources maps a server-metrics file's server endpoints onto stable-named series of
// run run, which ran on host. On each endpoint a stable name takes the best-ranked family
// (servermetrics.Mappings order) present; its label sets combine per the mapping's Agg,
// without overflow; NaN samples, which have no value, are left out and counted in nan by
// stable name.
func serverSources(f *servermetrics.File, run int, host string, multiHost bool, nan map[string]int) []*sourceSeries {
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
	byKey := map[key]*sourceSeries{}
	var out []*sourceSeries
	for _, sc := range f.Scrapes {
		type acc struct {
			n          int
			v          accum.Total
			buckets    map[float64]*accum.Total
			sum, count accum.Total
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
				x = &acc{buckets: map[float64]*accum.Total{}}
				accs[k] = x
			}
			if math.IsNaN(v.V) {
				nan["server."+m.Stable]++
				continue
			}
			se := &f.Series[v.Series]
			switch {
			case m.Kind != servermetrics.KindHistogram:
				x.v.Add(v.V)
				x.n++
			case strings.HasSuffix(se.Name, "_bucket"):
				le, err := strconv.ParseFloat(se.Labels["le"], 64)
				if err == nil {
					b := x.buckets[le]
					if b == nil {
						b = &accum.Total{}
						x.buckets[le] = b
					}
					b.Add(v.V)
				}
			case strings.HasSuffix(se.Name, "_sum"):
				x.sum.Add(v.V)
			case strings.HasSuffix(se.Name, "_count"):
				x.count.Add(v.V)
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
				u := f.Endpoints[k.ep].URL
				origin, labels := u, "endpoint="+u
				if isLoopback(u) {
					origin += " host=" + host
					if multiHost {
						labels += " host=" + host
					}
				}
				t = &sourceSeries{name: "server." + m.Stable, unit: m.Unit, kind: m.Kind, source: m.Family, scale: m.Scale,
					origin: origin, labels: labels, run: run}
				byKey[k] = t
				out = append(out, t)
			}
			p := scrapePoint{t: f.Header.StartUnixNs + sc.TimeNs, v: x.v.Value()}
			if m.Agg == servermetrics.AggMean {
				p.v = x.v.Div(float64(x.n))
			}
			if m.Kind == servermetrics.KindHistogram {
				p.sum, p.count = x.sum.Value(), x.count.Value()
				for le, n := range x.buckets {
					p.buckets = append(p.buckets, histBucket{le, n.Value()})
				}
				slices.SortFunc(p.buckets, func(a, b histBucket) int { return cmp.Compare(a.le, b.le) })
			}
			t.pts = append(t.pts, p)
		}
	}
	for _, t := range out {
		slices.SortStableFunc(t.pts, func(a, b scrapePoint) int { return cmp.Compare(a.t, b.t) })
	}
	slices.SortStableFunc(out, func(a, b *sourceSeries) int {
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

// gpuOrigin identifies a GPU across runs: its UUID, or (without one) its index on the host
// that sampled it. Shards that sampled one GPU (several on one machine, or all reading one
// DCGM exporter) sampled the same thing.
func gpuOrigin(host string, gpu int, uuid string) string {
	if uuid != "" {
		return "uuid=" + uuid
	}
	return "host=" + host + " gpu=" + strconv.Itoa(gpu)
}

// gpuSources are the GPU samples of the telemetry logs, one series per run, GPU and field.
func gpuSources(runs []rundir.Run, gpus []GPULog, multiHost bool) []*sourceSeries {
	type key struct {
		run, gpu int
		uuid     string
		field    int
	}
	byKey := map[key]*sourceSeries{}
	var out []*sourceSeries
	for _, job := range gpus {
		if !job.Telemetry {
			continue
		}
		m := runs[job.Run].Manifest
		source := "nvml"
		if m.Options["gpu_telemetry_source"] == "dcgm" {
			source = "dcgm"
		}
		for _, g := range job.Samples {
			for fi, f := range gpuFields {
				v := f.get(&g)
				if v < 0 {
					continue
				}
				k := key{job.Run, g.GPU, g.UUID, fi}
				t := byKey[k]
				if t == nil {
					labels := fmt.Sprintf("gpu=%d uuid=%s", g.GPU, g.UUID)
					if g.UUID == "" && multiHost {
						labels += " host=" + m.Host
					}
					t = &sourceSeries{name: f.name, unit: f.unit, kind: servermetrics.KindGauge, source: source, scale: f.scale,
						origin: gpuOrigin(m.Host, g.GPU, g.UUID), labels: labels, run: job.Run}
					byKey[k] = t
					out = append(out, t)
				}
				t.pts = append(t.pts, scrapePoint{t: m.StartUnixNs + g.TimeNs, v: float64(v)})
			}
		}
	}
	for _, t := range out {
		slices.SortStableFunc(t.pts, func(a, b scrapePoint) int { return cmp.Compare(a.t, b.t) })
	}
	return out
}

// byOrigin groups the series by stable name and origin, in the order they first occur;
// within a group by run.
func byOrigin(sources []*sourceSeries) []*originSeries {
	type key struct{ name, origin string }
	by := map[key]*originSeries{}
	var out []*originSeries
	for _, t := range sources {
		k := key{t.name, t.origin}
		o := by[k]
		if o == nil {
			o = &originSeries{name: t.name, unit: t.unit, kind: t.kind, source: t.source, labels: t.labels, scale: t.scale}
			by[k] = o
			out = append(out, o)
		}
		o.runs = append(o.runs, t)
	}
	for _, o := range out {
		slices.SortStableFunc(o.runs, func(a, b *sourceSeries) int { return cmp.Compare(a.run, b.run) })
	}
	return out
}

// series is the origin's metric in display units on the benchmark clock: a gauge's points
// from every run that read it, a counter's rate and a histogram's interval mean between
// consecutive points of one run (never across runs, whose clocks differ), all in time order.
func (o *originSeries) series(zero int64) Series {
	s := Series{Name: o.name, Unit: o.unit, Labels: o.labels, Kind: o.kind}
	if o.kind == servermetrics.KindHistogram {
		s.Kind = "histogram_mean"
	}
	type tv struct {
		t int64
		v float64
	}
	var all []tv
	for _, t := range o.runs {
		for i, p := range t.pts {
			switch o.kind {
			case servermetrics.KindGauge:
				all = append(all, tv{p.t, p.v * o.scale})
			case servermetrics.KindCounter:
				if i == 0 || p.t <= t.pts[i-1].t {
					continue
				}
				var inc accum.Total
				addIncrease(&inc, t.pts[i-1].v, p.v)
				all = append(all, tv{p.t, inc.Div(float64(p.t-t.pts[i-1].t)/1e9) * o.scale})
			case servermetrics.KindHistogram:
				if i == 0 {
					continue
				}
				q := t.pts[i-1]
				var sum, count accum.Total
				sum.AddDiff(p.sum, q.sum)
				count.AddDiff(p.count, q.count)
				if dc := count.Value(); dc > 0 {
					all = append(all, tv{p.t, accum.Ratio(&sum, &count) * o.scale})
				}
			}
		}
	}
	slices.SortStableFunc(all, func(a, b tv) int { return cmp.Compare(a.t, b.t) })
	for _, x := range all {
		s.T = append(s.T, float64(x.t-zero)/1e9)
		s.V = append(s.V, x.v)
	}
	return s
}

// nanNotes say how many NaN samples each metric had.
func nanNotes(nan map[string]int) []string {
	var out []string
	for _, n := range slices.Sorted(maps.Keys(nan)) {
		out = append(out, fmt.Sprintf("server metrics: %s: %d NaN samples left out (a NaN sample has no value)", n, nan[n]))
	}
	return out
}
