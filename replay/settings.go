package replay

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/internal/timespan"
	"github.com/llmbench/llmbench/redact"
	"github.com/llmbench/llmbench/replay/probe"
	"github.com/llmbench/llmbench/servermetrics"
)

// The --ui-type values (AIPerf's): how replay shows its progress.
const (
	UINone      = "none"      // no progress
	UISimple    = "simple"    // the live line on a terminal, else a line every 10 s
	UIDashboard = "dashboard" // AIPerf's full-screen display; simple here
)

// Settings are replay's options as a command line gives them, before they are checked: the
// values that need parsing (seconds, a CPU list, the grace period, a key file) and the flags
// that exclude each other. Options checks them in the command line's order, each error
// naming its flag, and fills Base.
type Settings struct {
	// Base holds the options taken as given (Plan, URLs, Headers, Workers, ...).
	Base Options
	// APIKeySet says --api-key was given; APIKeyFile is --api-key-file.
	APIKeySet  bool
	APIKeyFile string
	// CPUs is --cpus, a CPU list ("" for every CPU this process may use).
	CPUs string
	// RequestTimeout is --request-timeout-seconds, GracePeriod --benchmark-grace-period
	// (seconds or inf).
	RequestTimeout float64
	GracePeriod    string
	// NoGPU is --no-gpu-telemetry.
	NoGPU bool
	// ServerMetricsURLs are --server-metrics-url and the URLs of AIPerf's --server-metrics;
	// NoServerMetrics is --no-server-metrics, ServerMetricsInterval its scrape period;
	// GPUTelemetry the --gpu-telemetry values.
	ServerMetricsURLs     []string
	NoServerMetrics       bool
	ServerMetricsInterval time.Duration
	GPUTelemetry          []string
	// Observe, when set, gives the run's live observer (--otel-url), or its error; notice is
	// where its warnings go.
	Observe func(notice io.Writer) (Observer, error)
	// WaitTimeout and WaitInterval are the --wait-for-model seconds, WaitMode its probe.
	WaitTimeout, WaitInterval float64
	WaitMode                  string
	// Preflight and NoPreflight are --preflight (the default, kept accepted) and
	// --no-preflight.
	Preflight, NoPreflight bool
	// ContentType is --request-content-type when it was given ("" otherwise, ContentTypeSet false).
	ContentType    string
	ContentTypeSet bool
	// UI is --ui-type.
	UI string
}

// GPUTelemetryDefault is the --gpu-telemetry value of the flag given alone: the default DCGM
// exporters of each URL's host.
const GPUTelemetryDefault = "dcgm"

// CheckUI checks --ui-type, so that a command can refuse a bad value before any work.
func CheckUI(ui string) error {
	switch ui {
	case UINone, UISimple, UIDashboard:
		return nil
	}
	return fmt.Errorf("--ui-type %q: want none, simple or dashboard", ui)
}

// Options checks s and returns the options of the run. The key comes from --api-key,
// --api-key-file or OPENAI_API_KEY, in that order, and is registered with package redact.
// Progress goes to stderr (--ui-type): the live line on a terminal, else one line every
// DefaultProgressEvery; none with --ui-type none.
func (s Settings) Options(stderr io.Writer, getenv func(string) string) (*Options, error) {
	// The run's notices, the live export's warnings and the progress come from different
	// goroutines: one lock keeps each line whole (and a buffer given as stderr safe).
	lines := &syncWriter{w: stderr}
	o := s.Base
	o.Notice = lines
	for _, u := range o.URLs {
		if err := CheckURL("url", u); err != nil {
			return nil, err
		}
	}
	if s.APIKeyFile != "" {
		if s.APIKeySet {
			return nil, errors.New("--api-key and --api-key-file are mutually exclusive")
		}
		k, err := ReadAPIKey(s.APIKeyFile)
		if err != nil {
			return nil, err
		}
		o.APIKey = k
	}
	if o.APIKey == "" {
		o.APIKey = getenv("OPENAI_API_KEY")
	}
	redact.AddCredentials(o.APIKey, o.Headers)
	if o.Workers < 0 {
		return nil, fmt.Errorf("--workers %d: must be positive", o.Workers)
	}
	if s.CPUs != "" {
		c, err := ParseCPUList(s.CPUs)
		if err != nil {
			return nil, fmt.Errorf("--%w", err)
		}
		if !o.NoPin {
			if err := CheckCPUs(c); err != nil {
				return nil, fmt.Errorf("--cpus %q: %w", s.CPUs, err)
			}
		}
		o.CPUs = c
	}
	t, err := timespan.Seconds("request-timeout-seconds", s.RequestTimeout, false)
	if err != nil {
		return nil, err
	}
	o.RequestTimeout = t
	if o.MaxResponseBytes <= 0 || o.MaxResponseBytes > MaxResponseBytesLimit {
		return nil, fmt.Errorf("--max-response-bytes %d: must be between 1 and %d (1 GiB)", o.MaxResponseBytes, MaxResponseBytesLimit)
	}
	g, err := ParseGrace(s.GracePeriod)
	if err != nil {
		return nil, err
	}
	o.GracePeriod = g
	if s.NoGPU {
		o.GPUSampleInterval = -1
	} else if o.GPUSampleInterval <= 0 {
		return nil, fmt.Errorf("--gpu-sample-interval %v: must be positive (use --no-gpu-telemetry to turn sampling off)", o.GPUSampleInterval)
	}
	if err := CheckUI(s.UI); err != nil {
		return nil, err
	}
	if err := s.serverMetrics(&o); err != nil {
		return nil, err
	}
	if s.Observe != nil {
		if o.Observer, err = s.Observe(lines); err != nil {
			return nil, err
		}
	}
	if err := s.waitForModel(&o); err != nil {
		return nil, err
	}
	if s.Preflight && s.NoPreflight {
		return nil, errors.New("--preflight and --no-preflight are mutually exclusive")
	}
	// Unless --no-preflight says otherwise, in replay as in profile: a run against a server
	// that is down, or that refuses the plan's requests, would send everything to measure
	// nothing.
	o.Preflight = !s.NoPreflight
	if s.ContentTypeSet {
		ct := strings.TrimSpace(s.ContentType)
		if mt, _, _ := strings.Cut(strings.ToLower(ct), ";"); strings.HasPrefix(strings.TrimSpace(mt), "multipart/") || ct == "" {
			return nil, fmt.Errorf("--request-content-type %q: the plan's bodies are JSON; multipart bodies are not supported", s.ContentType)
		}
		// First, so that a Content-Type given with -H still wins.
		o.Headers = append([]string{"Content-Type: " + ct}, o.Headers...)
	}
	switch s.UI {
	case UINone:
	case UIDashboard:
		fmt.Fprintln(stderr, "replay: --ui-type dashboard: there is no dashboard here; showing the simple progress")
		fallthrough
	default:
		// The line rewritten in place only makes sense on a terminal; logs and pipes get
		// whole lines, seldom.
		o.Progress, o.ProgressEvery = lines, DefaultProgressEvery
		if st, err := os.Stderr.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 && isStderr(stderr) {
			o.ProgressEvery = 0
		}
	}
	return &o, nil
}

// serverMetrics sets the scrapes of o: the server's Prometheus endpoints and the DCGM
// exporters.
func (s Settings) serverMetrics(o *Options) error {
	urls := s.ServerMetricsURLs
	if s.NoServerMetrics && len(urls) > 0 {
		return fmt.Errorf("--no-server-metrics and --server-metrics-url contradict each other")
	}
	o.NoServerMetrics = s.NoServerMetrics
	for _, u := range urls {
		if _, err := servermetrics.NormalizeURL(u); err != nil {
			return fmt.Errorf("--server-metrics-url: %w", err)
		}
	}
	o.ServerMetricsURLs = urls
	if s.ServerMetricsInterval < 10*time.Millisecond {
		return fmt.Errorf("--server-metrics-interval %v: must be at least 10ms", s.ServerMetricsInterval)
	}
	o.ServerMetricsInterval = s.ServerMetricsInterval
	for _, g := range s.GPUTelemetry {
		switch strings.ToLower(strings.TrimSpace(g)) {
		case "nvml", "pynvml":
			continue
		case GPUTelemetryDefault, "default", "":
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
	if len(o.GPUTelemetryURLs) > 0 && s.NoGPU {
		return fmt.Errorf("--gpu-telemetry and --no-gpu-telemetry contradict each other")
	}
	return nil
}

// waitForModel sets the readiness probe of o from the --wait-for-model settings.
func (s Settings) waitForModel(o *Options) error {
	wait, err := timespan.Seconds("wait-for-model-timeout", s.WaitTimeout, true)
	if err != nil {
		return err
	}
	interval, err := timespan.Seconds("wait-for-model-interval", s.WaitInterval, true)
	if err != nil {
		return err
	}
	switch s.WaitMode {
	case probe.WaitModels, probe.WaitInference, probe.WaitBoth:
	default:
		return fmt.Errorf("--wait-for-model-mode %q: want %s, %s or %s", s.WaitMode, probe.WaitModels, probe.WaitInference, probe.WaitBoth)
	}
	o.WaitForModel, o.WaitForModelMode = wait, s.WaitMode
	o.WaitForModelInterval = interval
	if s.WaitInterval == 0 {
		o.WaitForModelInterval = time.Millisecond // 0 would mean the default: as fast as sensible
	}
	return nil
}

// CheckURL refuses a base URL no request could be sent to (endpoint.ParseBase), naming the
// flag and the URL, redacted.
func CheckURL(flag, u string) error {
	if _, err := endpoint.ParseBase(u); err != nil {
		return fmt.Errorf("--%s %q: %w", flag, redact.URL(u), err)
	}
	return nil
}

// ReadAPIKey reads --api-key-file: the key is the file's content without its trailing
// newline ("\n" or "\r\n"). The error never holds the file's content.
func ReadAPIKey(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--api-key-file: %w", err)
	}
	k := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if k == "" {
		return "", fmt.Errorf("--api-key-file %s: the file is empty", path)
	}
	if strings.ContainsAny(k, "\r\n") {
		return "", fmt.Errorf("--api-key-file %s: the key spans several lines; want one line", path)
	}
	return k, nil
}

// ParseGrace parses --benchmark-grace-period: seconds (>= 0) or inf (InfiniteGrace).
func ParseGrace(s string) (time.Duration, error) {
	if strings.EqualFold(s, "inf") || strings.EqualFold(s, "infinite") {
		return InfiniteGrace, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, fmt.Errorf("--benchmark-grace-period %q: want seconds (>= 0) or inf", s)
	}
	return timespan.Seconds("benchmark-grace-period", v, true)
}

// ParseStartAt parses --start-at: an RFC 3339 time (sub-second digits allowed) or
// +DURATION after now.
func ParseStartAt(s string, now time.Time) (time.Time, error) {
	if rest, ok := strings.CutPrefix(s, "+"); ok {
		d, err := time.ParseDuration(rest)
		if err != nil || d < 0 {
			return time.Time{}, fmt.Errorf("--start-at %q: want +DURATION such as +30s", s)
		}
		return now.Add(d), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("--start-at %q: want RFC 3339 with a zone (2026-12-01T14:00:00.000Z) or +DURATION (+30s)", s)
	}
	return t, nil
}

// isStderr reports whether w is os.Stderr, itself or under writers that say what they wrap
// (redact.Writer).
func isStderr(w io.Writer) bool {
	for {
		if w == io.Writer(os.Stderr) {
			return true
		}
		u, ok := w.(interface{ Unwrap() io.Writer })
		if !ok {
			return false
		}
		w = u.Unwrap()
	}
}

// syncWriter serializes writes to w: each Write (a line) whole, whichever goroutine makes it.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// Write writes p to w under the lock.
func (l *syncWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
