package analyze

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/internal/suggest"
	"github.com/llmbench/llmbench/servermetrics"
)

// The one expression layer under the small syntaxes that name metrics: --gate (and the
// gates of a --gates file, and SLA searches, which are written as gates), --goodput, and the
// server and GPU gates. Each is a thin grammar over the same pieces: a name resolved against
// the registry (its metric tags, server.<name> and gpu.<field>), NAME.STAT references with
// the statistics the named metric has, comparisons, finite numbers, and "did you mean"
// hints from internal/suggest. User metrics (Registry.Register) are names like any other,
// so every syntax takes them as soon as they are registered.

// scope says which names an expression may use.
type scope uint8

const (
	// scopeMetrics: the registry's metric tags.
	scopeMetrics scope = 1 << iota
	// scopeServer: server.<stable name> and gpu.<field> (analyze/servermetrics.go).
	scopeServer
	// scopePerRequest: the metric tags with one value per request (goodput objectives).
	scopePerRequest
)

// Name prefixes of the server and GPU metrics.
const (
	prefixServer = "server."
	prefixGPU    = "gpu."
)

// target is what a name resolves to: a registry metric, or a server or GPU metric.
type target struct {
	def MetricDef
	// kind is a server or GPU metric's kind (gauge, counter, histogram, ratio); "" for a
	// registry metric. def is then a stand-in: Tag the name, Unit its unit.
	kind string
}

func (t target) server() bool { return t.kind != "" }

// stats are the statistics the target has; nil for a single value.
func (t target) stats() []string {
	switch {
	case t.server():
		return serverStats[t.kind]
	case t.def.Kind == Record:
		return statNames
	}
	return nil
}

// statistic returns the canonical name of statistic stat of t, false when t has no such
// statistic. "mean" is avg; a distribution's "p99_9" and "p999" are p99.9.
func (t target) statistic(stat string) (string, bool) {
	switch stat {
	case "mean":
		stat = "avg"
	case "p99_9", "p999":
		if !t.server() {
			stat = "p99.9"
		}
	}
	return stat, slices.Contains(t.stats(), stat)
}

// isServerName reports whether name is in the server or GPU namespace.
func isServerName(name string) bool {
	return strings.HasPrefix(name, prefixServer) || strings.HasPrefix(name, prefixGPU)
}

// resolve finds name in scope sc.
func (r *Registry) resolve(name string, sc scope) (target, bool) {
	if isServerName(name) {
		if sc&scopeServer == 0 {
			return target{}, false
		}
		unit, kind, ok := serverMetricInfo(name)
		if !ok {
			return target{}, false
		}
		return target{def: MetricDef{Tag: name, Header: name, Unit: unit, Kind: Derived, Alias: -1}, kind: kind}, true
	}
	d, ok := r.Lookup(name)
	switch {
	case !ok:
	case sc&scopeMetrics != 0, sc&scopePerRequest != 0 && d.oneValue():
		return target{def: d}, true
	}
	return target{}, false
}

// names lists every name of scope sc: metric tags in id order, then the server and GPU names.
func (r *Registry) names(sc scope) []string {
	var out []string
	switch {
	case sc&scopeMetrics != 0:
		out = r.tags(nil)
	case sc&scopePerRequest != 0:
		out = r.tags(func(d *MetricDef) bool { return d.oneValue() })
	}
	if sc&scopeServer != 0 {
		out = append(append(out, serverGateNames()...), gpuGateNames()...)
	}
	return out
}

// didYouMean is "did you mean X? " for the name of names nearest to name, "" when none is near.
func didYouMean(name string, names []string) string {
	if s := suggest.Nearest(name, names); s != "" {
		return "did you mean " + s + "? "
	}
	return ""
}

// ref is a NAME[.STAT] reference as written.
type ref struct {
	name, stat string
	hasStat    bool
}

// splitRef splits NAME.STAT. A metric tag holds no dot, a server or GPU name one (after its
// prefix); the statistic is the rest, dots included (p99.9).
func splitRef(s string) ref {
	skip := 0
	for _, p := range []string{prefixServer, prefixGPU} {
		if strings.HasPrefix(s, p) {
			skip = len(p)
		}
	}
	i := strings.IndexByte(s[skip:], '.')
	if i < 0 {
		return ref{name: s}
	}
	return ref{name: s[:skip+i], stat: s[skip+i+1:], hasStat: true}
}

// compareOps are the comparison operators, the two-character ones first.
var compareOps = [...]string{"<=", ">=", "==", "<", ">"}

// splitComparison finds the comparison in s: the operator that comes first (the longer one
// where two start at the same place), and the trimmed sides around it.
func splitComparison(s string) (lhs, op, rhs string, ok bool) {
	s = strings.TrimSpace(s)
	at := -1
	for _, o := range compareOps {
		if i := strings.Index(s, o); i >= 0 && (at < 0 || i < at || (i == at && len(o) > len(op))) {
			at, op = i, o
		}
	}
	if at < 0 {
		return "", "", "", false
	}
	return strings.TrimSpace(s[:at]), op, strings.TrimSpace(s[at+len(op):]), true
}

// compare applies op to a and b.
func compare(a float64, op string, b float64) bool {
	switch op {
	case "<":
		return a < b
	case "<=":
		return a <= b
	case ">":
		return a > b
	case ">=":
		return a >= b
	case "==":
		return a == b
	}
	return false
}

// parseFinite parses a finite number (NaN and infinities are not).
func parseFinite(s string) (float64, bool) {
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil && !math.IsNaN(v) && !math.IsInf(v, 0)
}

// splitList splits a list of items separated by spaces, tabs or commas.
func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' })
}

// cutPair splits NAME:VALUE (or NAME=VALUE); ok is false without a separator or with an
// empty side.
func cutPair(s string) (name, value string, ok bool) {
	name, value, ok = strings.Cut(s, ":")
	if !ok {
		name, value, ok = strings.Cut(s, "=")
	}
	return name, value, ok && name != "" && value != ""
}

// serverMetricInfo returns the unit and kind of a server.* or gpu.* name.
func serverMetricInfo(name string) (unit, kind string, ok bool) {
	if stable, found := strings.CutPrefix(name, prefixServer); found {
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
		out = append(out, prefixServer+n)
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
