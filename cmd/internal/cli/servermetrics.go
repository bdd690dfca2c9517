package cli

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/replay"
	"github.com/llmbench/llmbench/servermetrics"
)

// serverMetricsFlags are AIPerf's server-metrics and DCGM GPU-telemetry flags, shared by
// replay and profile (through the replay flag set).
type serverMetricsFlags struct {
	fs       *pflag.FlagSet
	urls     *[]string
	aiperf   *[]string // AIPerf's --server-metrics [URLs]
	off      *bool
	interval *time.Duration
	gpu      *[]string
}

// serverMetricsDefault is --server-metrics given without a value (--gpu-telemetry's is
// replay.GPUTelemetryDefault).
const serverMetricsDefault = "default"

func addServerMetricsFlags(fs *pflag.FlagSet) *serverMetricsFlags {
	f := &serverMetricsFlags{fs: fs}
	f.urls = fs.StringArray("server-metrics-url", nil, "extra Prometheus endpoint to scrape during the run, besides <url scheme://host>/metrics (repeatable; http:// and /metrics added when missing)")
	f.aiperf = fs.StringArray("server-metrics", nil, "AIPerf's spelling: --server-metrics alone (on by default), --server-metrics=URL like --server-metrics-url")
	fs.Lookup("server-metrics").NoOptDefVal = serverMetricsDefault
	f.off = fs.Bool("no-server-metrics", false, "do not scrape the server's Prometheus metrics")
	f.interval = fs.Duration("server-metrics-interval", servermetrics.DefaultInterval, "server-metrics and DCGM scrape period")
	f.gpu = fs.StringArray("gpu-telemetry", nil, "GPU telemetry from DCGM exporters instead of NVML: --gpu-telemetry alone scrapes :9400 and :9401 on each --url host, --gpu-telemetry=URL that exporter (repeatable); nvml keeps NVML")
	fs.Lookup("gpu-telemetry").NoOptDefVal = replay.GPUTelemetryDefault
	return f
}

// settings puts the flags into s, which checks them: AIPerf's --server-metrics URLs join
// --server-metrics-url (the flags stay as given: this runs once per replay).
func (f *serverMetricsFlags) settings(s *replay.Settings) {
	urls := append([]string(nil), *f.urls...)
	for _, u := range *f.aiperf {
		if u != serverMetricsDefault {
			urls = append(urls, u)
		}
	}
	s.ServerMetricsURLs, s.NoServerMetrics, s.ServerMetricsInterval, s.GPUTelemetry = urls, *f.off, *f.interval, *f.gpu
}
