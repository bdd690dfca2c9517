package cli

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/internal/version"
	"github.com/llmbench/llmbench/plan"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/redact"
	"github.com/llmbench/llmbench/replay"
	"github.com/llmbench/llmbench/replay/probe"
)

// Replay is the flag set of `replay`: what to send where, and how.
type Replay struct {
	// FS holds the flags; compose it into a larger set with AddFlagSet.
	FS            *pflag.FlagSet
	plan          *string
	urls          *[]string
	urlStrategy   *string
	out           *string
	workers       *int
	cpus          *string
	noPin         *bool
	apiKey        *string
	apiKeyFile    *string
	headers       *[]string
	timeout       *float64
	grace         *string
	reuse         *string
	sessionHeader *string
	gpuInterval   *time.Duration
	noGPU         *bool
	caFile        *string
	insecure      *bool
	spin          *time.Duration
	maxResponse   *int64
	uiType        *string
	waitTimeout   *float64
	waitMode      *string
	waitInterval  *float64
	contentType   *string
	client        *string // --client (client.go)
	// preflight and noPreflight are --preflight (the default, kept accepted) and
	// --no-preflight.
	preflight, noPreflight *bool

	// Validation holds the generator validation flags, --validate (validate.go).
	Validation *Validate

	sm *serverMetricsFlags // --server-metrics-url, --gpu-telemetry ... (servermetrics.go)
	ot *otelFlags          // --otel-url ... (otel.go)
}

// NewReplay defines the replay flags on a new set.
func NewReplay() *Replay {
	r := &Replay{FS: NewFlagSet("replay")}
	fs := r.FS
	r.plan = fs.String("plan", "", "plan file to replay (written by `plan`)")
	r.urls = fs.StringArrayP("url", "u", nil, "base URL (http:// or https://); repeat to spread sessions over several servers")
	r.urlStrategy = fs.String("url-strategy", replay.URLRoundRobin, "how sessions are spread over several --url: round_robin")
	r.out = fs.String("output-dir", "", "run directory to create (must not hold a run already)")
	r.workers = fs.Int("workers", 0, "worker processes (default: one per CPU in --cpus; more, sharing CPUs, when one process cannot hold the open files the concurrency needs)")
	r.cpus = fs.String("cpus", "", "CPUs to pin workers to, one each, e.g. 0-3,6 (default: every CPU this process may use)")
	r.noPin = fs.Bool("no-pin", false, "do not pin workers to CPUs")
	r.apiKey = fs.String("api-key", "", "API key sent as 'Authorization: Bearer KEY', or 'x-api-key: KEY' to the Anthropic Messages API (default $OPENAI_API_KEY); never written anywhere, but other local users can read it in the process list (ps): prefer --api-key-file or $OPENAI_API_KEY")
	r.apiKeyFile = fs.String("api-key-file", "", "read the API key from this file (trailing newline trimmed); keeps it out of the process list")
	r.headers = fs.StringArrayP("header", "H", nil, "extra request header 'Name: value' (repeatable)")
	r.timeout = fs.Float64("request-timeout-seconds", replay.DefaultRequestTimeout.Seconds(), "per-request timeout, connect to last byte, in seconds (at most 365 days)")
	r.grace = fs.String("benchmark-grace-period", strconv.FormatFloat(replay.DefaultGracePeriod.Seconds(), 'f', -1, 64),
		"seconds in-flight requests may run after Ctrl-C or after a duration-sized plan's duration (at most 365 days); inf to wait for them")
	r.reuse = fs.String("connection-reuse-strategy", replay.ReusePooled, "pooled, never (new connection per request) or sticky-user-sessions (one per session)")
	r.sessionHeader = fs.String("session-header", replay.DefaultSessionHeader, "header carrying the session id; empty for none")
	r.gpuInterval = fs.Duration("gpu-sample-interval", replay.DefaultGPUSampleInterval, "NVML GPU sampling period")
	r.noGPU = fs.Bool("no-gpu-telemetry", false, "do not sample GPUs")
	r.sm = addServerMetricsFlags(fs)
	r.ot = addOtelFlags(fs)
	r.caFile = fs.String("tls-ca-cert", "", "PEM file of CAs to trust for https URLs")
	r.insecure = fs.Bool("tls-insecure-skip-verify", false, "accept any server certificate")
	r.spin = fs.Duration("spin", 0, "wake this long before each open-loop send and busy-wait the rest (trades worker CPU for lower schedule lag)")
	r.maxResponse = fs.Int64("max-response-bytes", replay.DefaultMaxResponseBytes,
		"most bytes of one response stored; a longer one ends its request as response_too_large, keeping the bytes up to the limit")
	r.waitTimeout = fs.Float64("wait-for-model-timeout", 0, "before the run, poll each URL until the model answers 2xx, for at most this many seconds (0: do not wait); exit 2 if it never does")
	r.waitMode = fs.String("wait-for-model-mode", probe.WaitModels, "the readiness probe: models (GET <url>/v1/models), inference (a one-token request to the plan's endpoint) or both")
	r.waitInterval = fs.Float64("wait-for-model-interval", probe.DefaultWaitForModelInterval.Seconds(), "seconds between readiness probes")
	r.contentType = fs.String("request-content-type", "application/json", "Content-Type of the requests (the plan's bodies are JSON); -H 'Content-Type: ...' overrides it")
	r.client = addClientFlag(fs)
	r.preflight = fs.Bool("preflight", false, "on by default: before the run, send one tiny request of the plan's own shape to each URL: check the server honours the output limit, record what it is and how it treats connections (run.json preflight); refuse a run that could measure nothing (server down, a request it refuses)")
	r.noPreflight = fs.Bool("no-preflight", false, "skip the preflight: send the plan even when its first request would fail")
	r.uiType = fs.String("ui-type", UISimple, "progress: simple (live line on a terminal, else a line every 10 s on stderr), dashboard (same as simple here) or none")
	r.Validation = NewValidate("validate")
	fs.AddFlagSet(r.Validation.FS)
	return r
}

// PreflightAsked says --preflight was given: a shard of a distributed run preflights only
// then (cmd/replay).
func (r *Replay) PreflightAsked() bool { return *r.preflight }

// preflightOption is whether the preflight runs: unless --no-preflight says otherwise, in
// replay as in profile (a run against a server that is down, or that refuses the plan's
// requests, would send everything to measure nothing).
func (r *Replay) preflightOption() (bool, error) {
	if *r.preflight && *r.noPreflight {
		return false, errors.New("--preflight and --no-preflight are mutually exclusive")
	}
	return !*r.noPreflight, nil
}

// The --ui-type values (AIPerf's): how replay shows its progress.
const (
	UINone      = "none"      // no progress
	UISimple    = "simple"    // the live line on a terminal, else a line every 10 s
	UIDashboard = "dashboard" // AIPerf's full-screen display; simple here
)

// CheckUI checks --ui-type, so that a command can refuse a bad value before any work.
func (r *Replay) CheckUI() error {
	switch *r.uiType {
	case UINone, UISimple, UIDashboard:
		return nil
	}
	return fmt.Errorf("--ui-type %q: want none, simple or dashboard", *r.uiType)
}

// Plan is --plan, the plan file to replay.
func (r *Replay) Plan() string { return *r.plan }

// URLs are the --url values.
func (r *Replay) URLs() []string { return *r.urls }

// OutputDir is --output-dir, the run directory to create.
func (r *Replay) OutputDir() string { return *r.out }

// Options converts the flags into replay.Options, checking each; argv is recorded in
// run.json (the API key never is). The key comes from --api-key, --api-key-file or
// OPENAI_API_KEY, in that order. Progress goes to stderr (--ui-type): the live line on a
// terminal, else one line every replay.DefaultProgressEvery; none with --ui-type none.
func (r *Replay) Options(argv []string, stderr io.Writer, getenv func(string) string) (*replay.Options, error) {
	// The run's notices, the live export's warnings and the progress come from different
	// goroutines: one lock keeps each line whole (and a buffer given as stderr safe).
	lines := &lineWriter{w: stderr}
	planFile, urls, urlStrategy, out, workers, cpus, noPin, apiKey, apiKeyFile, headers, timeout, grace, reuse, sessionHeader, gpuInterval, noGPU, caFile, insecure, spin, maxResponse := r.plan, r.urls, r.urlStrategy, r.out, r.workers, r.cpus, r.noPin, r.apiKey, r.apiKeyFile, r.headers, r.timeout, r.grace, r.reuse, r.sessionHeader, r.gpuInterval, r.noGPU, r.caFile, r.insecure, r.spin, r.maxResponse
	o := &replay.Options{Plan: *planFile, URLs: *urls, URLStrategy: *urlStrategy, OutputDir: *out,
		Workers: *workers, NoPin: *noPin, APIKey: *apiKey, Headers: *headers, ConnectionReuse: *reuse,
		SessionHeader: *sessionHeader, GPUSampleInterval: *gpuInterval, TLSCAFile: *caFile,
		TLSInsecureSkipVerify: *insecure, Spin: *spin, MaxResponseBytes: *maxResponse, CommandLine: argv, ToolVersion: version.String(),
		Notice: lines, Client: *r.client}
	for _, u := range *urls {
		if err := CheckURL("url", u); err != nil {
			return nil, err
		}
	}
	if *apiKeyFile != "" {
		if Changed(r.FS, "api-key") {
			return nil, errors.New("--api-key and --api-key-file are mutually exclusive")
		}
		k, err := readAPIKey(*apiKeyFile)
		if err != nil {
			return nil, err
		}
		o.APIKey = k
	}
	if o.APIKey == "" {
		o.APIKey = getenv("OPENAI_API_KEY")
	}
	RegisterSecrets(o.APIKey, o.Headers)
	if *workers < 0 {
		return nil, fmt.Errorf("--workers %d: must be positive", *workers)
	}
	if *cpus != "" {
		c, err := replay.ParseCPUList(*cpus)
		if err != nil {
			return nil, fmt.Errorf("--%w", err)
		}
		if !*noPin {
			if err := replay.CheckCPUs(c); err != nil {
				return nil, fmt.Errorf("--cpus %q: %w", *cpus, err)
			}
		}
		o.CPUs = c
	}
	t, err := plan.Seconds("request-timeout-seconds", *timeout, false)
	if err != nil {
		return nil, err
	}
	o.RequestTimeout = t
	if *maxResponse <= 0 || *maxResponse > replay.MaxResponseBytesLimit {
		return nil, fmt.Errorf("--max-response-bytes %d: must be between 1 and %d (1 GiB)", *maxResponse, replay.MaxResponseBytesLimit)
	}
	g, err := parseGrace(*grace)
	if err != nil {
		return nil, err
	}
	o.GracePeriod = g
	if *noGPU {
		o.GPUSampleInterval = -1
	} else if *gpuInterval <= 0 {
		return nil, fmt.Errorf("--gpu-sample-interval %v: must be positive (use --no-gpu-telemetry to turn sampling off)", *gpuInterval)
	}
	if err := r.CheckUI(); err != nil {
		return nil, err
	}
	if err := r.sm.apply(o); err != nil {
		return nil, err
	}
	if err := r.ot.apply(o, lines); err != nil {
		return nil, err
	}
	if err := r.waitOptions(o); err != nil {
		return nil, err
	}
	pf, err := r.preflightOption()
	if err != nil {
		return nil, err
	}
	o.Preflight = pf
	if Changed(r.FS, "request-content-type") {
		ct := strings.TrimSpace(*r.contentType)
		if mt, _, _ := strings.Cut(strings.ToLower(ct), ";"); strings.HasPrefix(strings.TrimSpace(mt), "multipart/") || ct == "" {
			return nil, fmt.Errorf("--request-content-type %q: the plan's bodies are JSON; multipart bodies are not supported", *r.contentType)
		}
		// First, so that a Content-Type given with -H still wins.
		o.Headers = append([]string{"Content-Type: " + ct}, o.Headers...)
	}
	switch *r.uiType {
	case UINone:
	case UIDashboard:
		fmt.Fprintln(stderr, "replay: --ui-type dashboard: there is no dashboard here; showing the simple progress")
		fallthrough
	default:
		// The line rewritten in place only makes sense on a terminal; logs and pipes get
		// whole lines, seldom.
		o.Progress, o.ProgressEvery = lines, replay.DefaultProgressEvery
		if st, err := os.Stderr.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 && isStderr(stderr) {
			o.ProgressEvery = 0
		}
	}
	return o, nil
}

// waitOptions sets the readiness probe of o from the --wait-for-model flags.
func (r *Replay) waitOptions(o *replay.Options) error {
	wait, err := plan.Seconds("wait-for-model-timeout", *r.waitTimeout, true)
	if err != nil {
		return err
	}
	interval, err := plan.Seconds("wait-for-model-interval", *r.waitInterval, true)
	if err != nil {
		return err
	}
	switch *r.waitMode {
	case probe.WaitModels, probe.WaitInference, probe.WaitBoth:
	default:
		return fmt.Errorf("--wait-for-model-mode %q: want %s, %s or %s", *r.waitMode, probe.WaitModels, probe.WaitInference, probe.WaitBoth)
	}
	o.WaitForModel, o.WaitForModelMode = wait, *r.waitMode
	o.WaitForModelInterval = interval
	if *r.waitInterval == 0 {
		o.WaitForModelInterval = time.Millisecond // 0 would mean the default: as fast as sensible
	}
	return nil
}

// RunReplay replays o until done, Ctrl-C (SIGINT, SIGTERM: stop sending, grace period) or a
// second Ctrl-C (abort in-flight requests), and says the outcome on stderr. Exit status: 0
// complete, 1 failed (or requests failed on the client's own side), 2 bad input, 130
// interrupted.
func RunReplay(o *replay.Options, stderr io.Writer) int {
	code, _ := RunReplayReport(o, stderr)
	return code
}

// RunReplayReport is RunReplay, saying too whether its exit status 1 is for a run in which
// every request sent failed (a whole run, whose analysis names the failures: profile
// judges it as any other run).
func RunReplayReport(o *replay.Options, stderr io.Writer) (code int, everyFailed bool) {
	r, err := replay.New(*o)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2, false
	}
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	go func() {
		n := 0
		for s := range sig {
			n++
			if n == 1 {
				fmt.Fprintf(stderr, "\nreplay: %v: stopping; in-flight requests get the grace period (again to abort)\n", s)
				r.Stop()
			} else {
				fmt.Fprintf(stderr, "\nreplay: %v: aborting in-flight requests\n", s)
				r.Abort()
			}
		}
	}()
	m, err := r.Run()
	if m == nil {
		// Nothing was run and no run directory left: the output directory was unusable.
		fmt.Fprintln(stderr, err)
		return 2, false
	}
	// The counts of run.json: a response with a status other than 2xx is failed.
	c := m.Counts
	fmt.Fprintf(stderr, "replay: %s: %d planned, %d completed, %d failed, %d cancelled, %d aborted, %d not sent, %d lost; run in %s\n",
		m.Status, c.Planned, c.Completed, c.Failed, c.Cancelled, c.Aborted, c.NotSent, c.Lost, o.OutputDir)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1, false
	}
	if m.Status == rawlog.StatusInterrupted {
		return 130, false
	}
	if line := allFailed(c, o.OutputDir); line != "" {
		fmt.Fprintln(stderr, line)
		if cl := clientFailedLine(c); cl != "" {
			fmt.Fprintln(stderr, cl)
		}
		return 1, true
	}
	if line := clientFailedLine(c); line != "" {
		// Last, so that it is the line a reader sees: these failures are this machine's.
		fmt.Fprintln(stderr, line)
		return 1, false
	}
	return 0, false
}

// allFailed is the last line of a run in which no request completed and some failed: it
// measured nothing of the server, so it is a failed run (exit 1), whatever its status says.
// "" for any other run.
func allFailed(c rawlog.Counts, dir string) string {
	if c.Completed > 0 || c.Failed == 0 {
		return ""
	}
	return fmt.Sprintf("replay: FAILED: every request sent failed (%d failed, none completed, of %d planned): nothing of the server was measured; the requests' errors are in %s (analyze %s)",
		c.Failed, c.Planned, dir, dir)
}

// CheckURL refuses a base URL no request could be sent to (endpoint.ParseBase), naming the
// flag and the URL, redacted.
func CheckURL(flag, u string) error {
	if _, err := endpoint.ParseBase(u); err != nil {
		return fmt.Errorf("--%s %q: %w", flag, redact.URL(u), err)
	}
	return nil
}

// clientFailedLine is replay's last line when requests failed on the client's own side ("":
// none did).
func clientFailedLine(c rawlog.Counts) string {
	if c.ClientFailed == 0 {
		return ""
	}
	return fmt.Sprintf("replay: %d of the %d failed requests failed on the client's side, not the server's (client error: the client ran out of its own resources or got back to its connections too late; analyze names which): this run measures this machine, exit 1",
		c.ClientFailed, c.Failed)
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

// RegisterSecrets tells package redact the credentials this process sends, the API key and
// the values of secret-named headers (with and without their scheme, "Bearer X" and "X";
// redact.HeaderSecrets), so that no line or export ever holds one a server echoes back
// (redact.AddSecrets).
func RegisterSecrets(apiKey string, headers []string) {
	redact.AddSecrets(apiKey)
	var hs [][2]string
	for _, h := range headers {
		if k, v, ok := strings.Cut(h, ":"); ok {
			hs = append(hs, [2]string{k, v})
		}
	}
	redact.AddSecrets(redact.HeaderSecrets(hs)...)
}

// readAPIKey reads --api-key-file: the key is the file's content without its trailing
// newline ("\n" or "\r\n"). The error never holds the file's content.
func readAPIKey(path string) (string, error) {
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

func parseGrace(s string) (time.Duration, error) {
	if strings.EqualFold(s, "inf") || strings.EqualFold(s, "infinite") {
		return replay.InfiniteGrace, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, fmt.Errorf("--benchmark-grace-period %q: want seconds (>= 0) or inf", s)
	}
	return plan.Seconds("benchmark-grace-period", v, true)
}

// lineWriter serializes writes to w: each Write (a line) whole, whichever goroutine makes it.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// Write writes p to w under the lock.
func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
