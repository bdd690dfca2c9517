package analyze

import (
	"github.com/llmbench/llmbench/analyze/accum"
	"github.com/llmbench/llmbench/analyze/serverside"
)

// The names a run's values go by outside the registry's tags, as gates and the expression
// layer (package metricexpr, analyze/judge) name them: a distribution's statistics, and the
// server and GPU metrics (server.<stable name>, gpu.<field>) with their kinds and units.

// StatNames are the statistics of a distribution (a record metric), in order
// (accum.StatNames).
var StatNames = accum.StatNames

// Name prefixes of the server and GPU metrics (package serverside names them).
const (
	PrefixServer = serverside.PrefixServer
	PrefixGPU    = serverside.PrefixGPU
)

// IsServerName reports whether name is in the server or GPU namespace.
func IsServerName(name string) bool { return serverside.IsName(name) }

// ServerStats are the statistics a server or GPU metric of kind has (gauge, histogram,
// counter, ratio).
func ServerStats(kind string) []string { return serverside.KindStats(kind) }

// ServerMetricInfo returns the unit and kind of a server.* or gpu.* name.
func ServerMetricInfo(name string) (unit, kind string, ok bool) { return serverside.Info(name) }

// ServerNames are the server metrics' names (server.<stable name>).
func ServerNames() []string { return serverside.ServerNames() }

// GPUNames are the GPU metrics' names (gpu.<field>).
func GPUNames() []string { return serverside.GPUNames() }
