package replay

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/servermetrics"
)

// Server metrics and DCGM GPU telemetry (package servermetrics), scraped by the coordinator,
// off the workers' CPUs: the server's Prometheus endpoints into server_metrics.jsonl, and
// DCGM exporter pages there too and, as GPU samples, into telemetry.rawlog in place of NVML.

// serverMetricsState is the coordinator's side of the scraper.
type serverMetricsState struct {
	dcgm    bool // DCGM replaces NVML as the GPU source
	done    chan error
	file    *os.File
	gpuLog  *rawlog.Writer
	gpuFile *os.File
	start   time.Time
}

// normalizeServerMetrics completes the server-metrics options: the default endpoint of each
// URL plus ServerMetricsURLs, the DCGM URLs, the interval.
func (o *Options) normalizeServerMetrics() error {
	if o.ServerMetricsInterval == 0 {
		o.ServerMetricsInterval = servermetrics.DefaultInterval
	}
	if o.ServerMetricsInterval < 10*time.Millisecond {
		return fmt.Errorf("server-metrics-interval %v: must be at least 10ms", o.ServerMetricsInterval)
	}
	if !o.NoServerMetrics {
		def, err := servermetrics.DefaultServerURLs(o.URLs)
		if err != nil {
			return fmt.Errorf("server-metrics-url: %w", err)
		}
		if o.ServerMetricsURLs, err = servermetrics.Merge(def, o.ServerMetricsURLs); err != nil {
			return fmt.Errorf("server-metrics-url: %w", err)
		}
	} else {
		o.ServerMetricsURLs = nil
	}
	if len(o.GPUTelemetryURLs) > 0 {
		urls, err := servermetrics.Merge(nil, o.GPUTelemetryURLs)
		if err != nil {
			return fmt.Errorf("gpu-telemetry: %w", err)
		}
		o.GPUTelemetryURLs = urls
	}
	return nil
}

// startServerMetrics starts the scraper when there is anything to scrape; stop closes after
// the last response, for the final scrape (at most one scrape timeout later), and an abort
// (a second Ctrl-C) ends every scrape at once. Its warnings go to the console and to
// run.json's server_metrics_notes. It runs before startTelemetry, which it tells
// (sm.dcgm) when DCGM is the GPU source.
func (r *Replay) startServerMetrics(start time.Time, stop <-chan struct{}) {
	o := &r.opts
	m := &r.manifest
	var targets []servermetrics.Target
	for _, u := range o.ServerMetricsURLs {
		targets = append(targets, servermetrics.Target{URL: u, Role: servermetrics.RoleServer})
	}
	gpu := len(o.GPUTelemetryURLs) > 0 && o.GPUSampleInterval >= 0
	if gpu {
		for _, u := range o.GPUTelemetryURLs {
			targets = append(targets, servermetrics.Target{URL: u, Role: servermetrics.RoleGPU})
		}
	}
	r.mu.Lock()
	m.Options["server_metrics_urls"] = redactURLs(o.ServerMetricsURLs)
	m.Options["server_metrics_interval_ms"] = float64(o.ServerMetricsInterval) / 1e6
	if gpu {
		m.Options["gpu_telemetry_urls"] = redactURLs(o.GPUTelemetryURLs)
		m.Options["gpu_telemetry_source"] = "dcgm"
	}
	r.mu.Unlock()
	if len(targets) == 0 {
		return
	}
	f, err := os.OpenFile(filepath.Join(r.dir, servermetrics.FileName), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		r.notice("replay: no server metrics: " + err.Error())
		return
	}
	w, err := servermetrics.NewWriter(f, servermetrics.Header{StartUnixNs: start.UnixNano(), IntervalNs: int64(o.ServerMetricsInterval), ToolVersion: o.ToolVersion})
	if err != nil {
		f.Close()
		r.notice("replay: no server metrics: " + err.Error())
		return
	}
	sm := &r.sm
	sm.file, sm.start, sm.done = f, start, make(chan error, 1)
	cfg := servermetrics.Config{Targets: targets, Interval: o.ServerMetricsInterval, Out: w, Abort: r.abortReq,
		Notice: func(s string) {
			r.notice("replay: " + s)
			r.mu.Lock()
			m.ServerMetricsNotes = append(m.ServerMetricsNotes, s)
			r.mu.Unlock()
		}}
	if gpu {
		if err := r.openDCGMLog(start); err != nil {
			r.notice("replay: GPU telemetry from DCGM: " + err.Error())
		} else {
			sm.dcgm = true
			cfg.GPU = sm.gpuLog.WriteGPU
			cfg.GPUs = r.noteDCGMGPUs
		}
	}
	go func() { sm.done <- servermetrics.Run(cfg, start, stop) }()
}

// openDCGMLog opens telemetry.rawlog for the GPU samples of the DCGM pages.
func (r *Replay) openDCGMLog(start time.Time) error {
	f, err := os.OpenFile(filepath.Join(r.dir, TelemetryLogName), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	lw, err := rawlog.NewWriter(f, rawlog.Header{Worker: -1, PID: os.Getpid(), CPU: -1, PlanHash: r.plan.HashHex(), StartUnixNs: start.UnixNano()})
	if err != nil {
		f.Close()
		os.Remove(f.Name()) // NVML may take the name instead (startTelemetry)
		return err
	}
	r.sm.gpuLog, r.sm.gpuFile = lw, f
	r.mu.Lock()
	r.manifest.TelemetryLog = TelemetryLogName
	r.mu.Unlock()
	return nil
}

// noteDCGMGPUs records the GPUs a DCGM endpoint reports in run.json's options.gpus, as
// "index:name:uuid" like NVML's.
func (r *Replay) noteDCGMGPUs(_ string, gpus []servermetrics.DCGMGPU) {
	r.mu.Lock()
	defer r.mu.Unlock()
	names, _ := r.manifest.Options["gpus"].([]string)
	for _, g := range gpus {
		names = append(names, fmt.Sprintf("%d:%s:%s", g.Index, g.Name, g.UUID))
	}
	r.manifest.Options["gpus"] = names
}

// waitServerMetrics waits for the final scrapes and closes the files.
func (r *Replay) waitServerMetrics() {
	sm := &r.sm
	if sm.done == nil {
		return
	}
	err := <-sm.done
	if cerr := sm.file.Close(); err == nil {
		err = cerr
	}
	if sm.gpuLog != nil {
		if cerr := sm.gpuLog.Close(rawlog.Footer{TimeNs: int64(time.Since(sm.start)), Status: rawlog.StatusComplete}); err == nil {
			err = cerr
		}
		if cerr := sm.gpuFile.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		r.notice("replay: server metrics: " + err.Error())
	}
}
