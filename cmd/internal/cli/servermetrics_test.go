package cli

import (
	"io"
	"strings"
	"testing"
)

func TestServerMetricsFlags(t *testing.T) {
	base := []string{"--plan", "p", "--url", "http://gpu-host:8000", "--output-dir", "d"}
	for _, c := range []struct {
		args    []string
		sm, gpu string // the options set, joined
		noSM    bool
		err     string
	}{
		{nil, "", "", false, ""},
		{[]string{"--gpu-telemetry"}, "", "http://gpu-host:9400/metrics http://gpu-host:9401/metrics", false, ""},
		{[]string{"--gpu-telemetry=h:9500", "--gpu-telemetry=nvml"}, "", "h:9500", false, ""},
		{[]string{"--server-metrics-url", "h:9090", "--server-metrics-url", "http://x/prom"}, "h:9090 http://x/prom", "", false, ""},
		{[]string{"--no-server-metrics"}, "", "", true, ""},
		{[]string{"--server-metrics", "--server-metrics=h:1"}, "h:1", "", false, ""},
		{[]string{"--no-server-metrics", "--server-metrics-url", "h"}, "", "", false, "contradict"},
		{[]string{"--server-metrics-url", "ftp://h"}, "", "", false, "--server-metrics-url: metrics URL \"ftp://h\": scheme must be http or https"},
		{[]string{"--server-metrics-interval", "1ms"}, "", "", false, "--server-metrics-interval 1ms: must be at least 10ms"},
		{[]string{"--gpu-telemetry=ftp://x"}, "", "", false, "write --gpu-telemetry=URL"},
		{[]string{"--gpu-telemetry", "--no-gpu-telemetry"}, "", "", false, "contradict"},
	} {
		r := NewReplay()
		if err := r.FS.Parse(append(append([]string(nil), base...), c.args...)); err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		o, err := r.Options(nil, io.Discard, func(string) string { return "" })
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err %v, want %q", c.args, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if got := strings.Join(o.ServerMetricsURLs, " "); got != c.sm {
			t.Errorf("%q: server-metrics URLs %q, want %q", c.args, got, c.sm)
		}
		if got := strings.Join(o.GPUTelemetryURLs, " "); got != c.gpu {
			t.Errorf("%q: DCGM URLs %q, want %q", c.args, got, c.gpu)
		}
		if o.NoServerMetrics != c.noSM {
			t.Errorf("%q: no-server-metrics %v", c.args, o.NoServerMetrics)
		}
	}
}
