package judge

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/internal/suggest"
)

// The small syntaxes that name metrics — --gate (and the gates of a --gates file, and SLA
// searches, which are written as gates), --goodput, and the server and GPU gates — are
// sugar over the one expression layer, package metricexpr (CEL), where user metrics,
// --where and --group-by are compiled too: each is read here, checked with errors in its own
// words, and translated into an expression of that layer (gateSource, objectiveSource),
// which is what runs. The pieces are shared: a name resolved against the registry (its
// metric tags, server.<name> and gpu.<field>), NAME.STAT references with the statistics the
// named metric has, comparisons, finite numbers, and "did you mean" hints from
// internal/suggest. User metrics (Registry.Register) are names like any other, so every
// syntax takes them as soon as they are registered.

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

// target is what a name resolves to: a registry metric, or a server or GPU metric.
type target struct {
	def analyze.MetricDef
	// kind is a server or GPU metric's kind (gauge, counter, histogram, ratio); "" for a
	// registry metric. def is then a stand-in: Tag the name, Unit its unit.
	kind string
}

func (t target) server() bool { return t.kind != "" }

// stats are the statistics the target has; nil for a single value.
func (t target) stats() []string {
	switch {
	case t.server():
		return analyze.ServerStats(t.kind)
	case t.def.Kind == analyze.Record:
		return analyze.StatNames
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

// resolve finds name in scope sc of reg.
func resolve(reg *analyze.Registry, name string, sc scope) (target, bool) {
	if analyze.IsServerName(name) {
		if sc&scopeServer == 0 {
			return target{}, false
		}
		unit, kind, ok := analyze.ServerMetricInfo(name)
		if !ok {
			return target{}, false
		}
		return target{def: analyze.MetricDef{Tag: name, Header: name, Unit: unit, Kind: analyze.Derived, Alias: -1}, kind: kind}, true
	}
	d, ok := reg.Lookup(name)
	switch {
	case !ok:
	case sc&scopeMetrics != 0, sc&scopePerRequest != 0 && d.OneValue():
		return target{def: d}, true
	}
	return target{}, false
}

// names lists every name of scope sc of reg: metric tags in id order, then the server and
// GPU names.
func names(reg *analyze.Registry, sc scope) []string {
	var out []string
	for _, d := range reg.Metrics() {
		if sc&scopeMetrics != 0 || sc&scopePerRequest != 0 && d.OneValue() {
			out = append(out, d.Tag)
		}
	}
	if sc&scopeServer != 0 {
		out = append(append(out, analyze.ServerNames()...), analyze.GPUNames()...)
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
	for _, p := range []string{analyze.PrefixServer, analyze.PrefixGPU} {
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

// valueSource is the value of t's statistic stat (its canonical name) as an expression of
// metricexpr's summary environment: NAME["STAT"] for a distribution, NAME for a single value,
// server["NAME"]["STAT"] and gpu["FIELD"]["STAT"] for the server and GPU metrics.
func valueSource(t target, stat string) string {
	switch {
	case t.server():
		v, prefix := "server", analyze.PrefixServer
		if strings.HasPrefix(t.def.Tag, analyze.PrefixGPU) {
			v, prefix = "gpu", analyze.PrefixGPU
		}
		return v + "[" + strconv.Quote(strings.TrimPrefix(t.def.Tag, prefix)) + "][" + strconv.Quote(stat) + "]"
	case t.stats() == nil:
		return t.def.Tag
	}
	return t.def.Tag + "[" + strconv.Quote(stat) + "]"
}

// literal is v as a CEL double literal (v finite).
func literal(v float64) string {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
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
