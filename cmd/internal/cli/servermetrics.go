package cli

import (
	"fmt"
	"strings"
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

// gpuTelemetryDefault and serverMetricsDefault are --gpu-telemetry and --server-metrics
// given without a value.
const (
	gpuTelemetryDefault  = "dcgm"
	serverMetricsDefault = "default"
)

func addServerMetricsFlags(fs *pflag.FlagSet) *serverMetricsFlags {
	f := &serverMetricsFlags{fs: fs}
	f.urls = fs.StringArray("server-metrics-url", nil, "extra Prometheus endpoint to scrape during the run, besides <url scheme://host>/metrics (repeatable; http:// and /metrics added when missing)")
	f.aiperf = fs.StringArray("server-metrics", nil, "AIPerf's spelling: --server-metrics alone (on by default), --server-metrics=URL like --server-metrics-url")
	fs.Lookup("server-metrics").NoOptDefVal = serverMetricsDefault
	f.off = fs.Bool("no-server-metrics", false, "do not scrape the server's Prometheus metrics")
	f.interval = fs.Duration("server-metrics-interval", servermetrics.DefaultInterval, "server-metrics and DCGM scrape period")
	f.gpu = fs.StringArray("gpu-telemetry", nil, "GPU telemetry from DCGM exporters instead of NVML: --gpu-telemetry alone scrapes :9400 and :9401 on each --url host, --gpu-telemetry=URL that exporter (repeatable); nvml keeps NVML")
	fs.Lookup("gpu-telemetry").NoOptDefVal = gpuTelemetryDefault
	return f
}

// apply sets o's server-metrics and DCGM options from the flags.
func (f *serverMetricsFlags) apply(o *replay.Options) error {
	urls := append([]string(nil), *f.urls...) // the flags stay as given: apply runs once per replay
	for _, u := range *f.aiperf {
		if u != serverMetricsDefault {
			urls = append(urls, u)
		}
	}
	if *f.off && len(urls) > 0 {
		return fmt.Errorf("--no-server-metrics and --server-metrics-url contradict each other")
	}
	o.NoServerMetrics = *f.off
	for _, u := range urls {
		if _, err := servermetrics.NormalizeURL(u); err != nil {
			return fmt.Errorf("--server-metrics-url: %w", err)
		}
	}
	o.ServerMetricsURLs = urls
	if *f.interval < 10*time.Millisecond {
		return fmt.Errorf("--server-metrics-interval %v: must be at least 10ms", *f.interval)
	}
	o.ServerMetricsInterval = *f.interval
	for _, g := range *f.gpu {
		switch strings.ToLower(strings.TrimSpace(g)) {
		case "nvml", "pynvml":
			continue
		case gpuTelemetryDefault, "default", "":
			d, err := servermetrics.DefaultDCGMURLs(o.URLs)
			if err != nil {
				return fmt.Errorf("--gpu-telemetry: %w", err)
			}
			o.GPUTelemetryURLs = append(o.GPUTelemetryURLs, d...)
		default:
			if _, err := servermetrics.NormalizeURL(g); err != nil {
				return fmt.Errorf("--gpu-telemetry: %w (write --gpu-telemetry=URL; a bare --gpu-telemetry scrapes the default DCGM ports)", err)
			}
			o.GPUTelemetryURLs = append(o.GPUTelemetryURLs, g)
		}
	}
	if len(o.GPUTelemetryURLs) > 0 && Changed(f.fs, "no-gpu-telemetry") {
		if v, _ := f.fs.GetBool("no-gpu-telemetry"); v {
			return fmt.Errorf("--gpu-telemetry and --no-gpu-telemetry contradict each other")
		}
	}
	return nil
}
