package serverside

import (
	"strings"

	"github.com/llmbench/llmbench/servermetrics"
)

// The names the server and GPU metrics go by in gates and the expression layer:
// server.<stable name> (servermetrics.Mappings) and gpu.<field> (gpuFields).

// Name prefixes of the server and GPU metrics.
const (
	PrefixServer = "server."
	PrefixGPU    = "gpu."
)

// IsName reports whether name is in the server or GPU namespace.
func IsName(name string) bool {
	return strings.HasPrefix(name, PrefixServer) || strings.HasPrefix(name, PrefixGPU)
}

// Info returns the unit and kind of a server.* or gpu.* name.
func Info(name string) (unit, kind string, ok bool) {
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
