package analyze

import (
	"strings"

	"github.com/llmbench/llmbench/analyze/accum"
	"github.com/llmbench/llmbench/servermetrics"
)

// The names a run's values go by outside the registry's tags, as gates and the expression
// layer (package metricexpr, analyze/judge) name them: a distribution's statistics, and the
// server and GPU metrics (server.<stable name>, gpu.<field>) with their kinds and units.

// StatNames are the statistics of a distribution (a record metric), in order
// (accum.StatNames).
var StatNames = accum.StatNames

// Name prefixes of the server and GPU metrics.
const (
	PrefixServer = "server."
	PrefixGPU    = "gpu."
)

// IsServerName reports whether name is in the server or GPU namespace.
func IsServerName(name string) bool {
	return strings.HasPrefix(name, PrefixServer) || strings.HasPrefix(name, PrefixGPU)
}

// ServerStats are the statistics a server or GPU metric of kind has (gauge, histogram,
// counter, ratio).
func ServerStats(kind string) []string { return serverStats[kind] }

// ServerMetricInfo returns the unit and kind of a server.* or gpu.* name.
func ServerMetricInfo(name string) (unit, kind string, ok bool) {
	if stable, found := strings.CutPrefix(name, PrefixServer); found {
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

// ServerNames are the server metrics' names (server.<stable name>).
func ServerNames() []string {
	var out []string
	for _, n := range servermetrics.StableNames() {
		out = append(out, PrefixServer+n)
	}
	return out
}

// GPUNames are the GPU metrics' names (gpu.<field>).
func GPUNames() []string {
	var out []string
	for _, f := range gpuFields {
		out = append(out, f.name)
	}
	return out
}
