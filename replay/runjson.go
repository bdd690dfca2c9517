package replay

import (
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/llmbench/llmbench/rawlog"
)

// initManifest fills run.json's contents known before the run: the tool, plan, machine,
// workers, options and the preflight's findings.
func (r *Replay) initManifest() {
	o := &r.opts
	m := &r.manifest
	host, _ := os.Hostname()
	*m = rawlog.Manifest{Tool: "llmbench replay", ToolVersion: o.ToolVersion, GoVersion: runtime.Version(),
		PlanHash: r.plan.HashHex(), PlanPath: r.absPlan(), URLs: redactURLs(o.URLs), Host: host,
		Kernel: kernelRelease(), CPUModel: cpuModel(), CommandLine: RedactArgs(o.CommandLine),
		Status: rawlog.StatusRunning}
	m.Counts.Planned = r.info.records()
	r.shardManifest(m)
	for i := range r.cpus {
		m.Workers = append(m.Workers, rawlog.WorkerInfo{ID: i, CPU: r.cpus[i], Log: WorkerLogName(i),
			Planned: r.planned[i], Status: rawlog.StatusRunning})
	}
	grace := any(o.GracePeriod.Seconds())
	if o.GracePeriod == InfiniteGrace {
		grace = "inf"
	}
	hdrs := make([]string, len(o.Headers))
	for i, h := range o.Headers {
		hdrs[i] = redactHeader(h)
	}
	m.Options = map[string]any{
		"workers":                        len(r.cpus),
		"workers_requested":              o.Workers,
		"workers_per_cpu":                r.perCPU,
		"workers_note":                   r.workersNote,
		"cpus":                           r.cpus,
		"url_strategy":                   o.URLStrategy,
		"connection_reuse_strategy":      o.ConnectionReuse,
		"request_timeout_seconds":        o.RequestTimeout.Seconds(),
		"benchmark_grace_period_seconds": grace,
		"headers":                        hdrs,
		"api_key_set":                    o.APIKey != "",
		"session_header":                 o.SessionHeader,
		"gpu_sample_interval_ms":         float64(o.GPUSampleInterval) / 1e6,
		"spin_us":                        float64(o.Spin) / 1e3,
		"client":                         o.Client,
		"max_response_bytes":             o.MaxResponseBytes,
		"concurrency":                    r.plan.Meta().Concurrency,
		"local_addrs":                    FormatLocalAddrs(o.LocalAddrs),
		"local_addrs_note":               r.sourcesNote,
		"preflight":                      o.Preflight,
	}
	m.Preflight = r.preflight
}

// writeManifest writes run.json as it stands.
func (r *Replay) writeManifest() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := rawlog.WriteManifest(r.dir, &r.manifest); err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	return nil
}

// redactURLs is us with each URL's secrets redacted (redactURL).
func redactURLs(us []string) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = redactURL(u)
	}
	return out
}

// cpuModel returns the first "model name" of /proc/cpuinfo, or "".
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
