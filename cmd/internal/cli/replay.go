package cli

import (
	"io"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/internal/version"
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
	spare         *int
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
	tf *traceFlags         // --traceparent, --trace-receiver ... (traces.go)
	// Adaptive is in-run adaptive scale, --adaptive-scale ... (adaptive.go).
	Adaptive *Adaptive
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
	r.tf = addTraceFlags(fs)
	r.Adaptive = addAdaptiveFlags(fs)
	r.caFile = fs.String("tls-ca-cert", "", "PEM file of CAs to trust for https URLs")
	r.insecure = fs.Bool("tls-insecure-skip-verify", false, "accept any server certificate")
	r.spare = fs.Int("spare-connections", replay.DefaultSpareConns, "connections per URL the event loop keeps opened ahead (pooled reuse), so a request that finds none idle does not wait on its own connect; 0 opens none")
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

// The --ui-type values (AIPerf's): how replay shows its progress.
const (
	UINone      = replay.UINone
	UISimple    = replay.UISimple
	UIDashboard = replay.UIDashboard
)

// CheckUI checks --ui-type, so that a command can refuse a bad value before any work.
func (r *Replay) CheckUI() error { return replay.CheckUI(*r.uiType) }

// Plan is --plan, the plan file to replay.
func (r *Replay) Plan() string { return *r.plan }

// URLs are the --url values.
func (r *Replay) URLs() []string { return *r.urls }

// OutputDir is --output-dir, the run directory to create.
func (r *Replay) OutputDir() string { return *r.out }

// Options converts the flags into replay.Options, checked by replay.Settings; argv is
// recorded in run.json (the API key never is).
func (r *Replay) Options(argv []string, stderr io.Writer, getenv func(string) string) (*replay.Options, error) {
	s := replay.Settings{Base: replay.Options{Plan: *r.plan, URLs: *r.urls, URLStrategy: *r.urlStrategy, OutputDir: *r.out,
		Workers: *r.workers, NoPin: *r.noPin, APIKey: *r.apiKey, Headers: *r.headers, ConnectionReuse: *r.reuse,
		SessionHeader: *r.sessionHeader, GPUSampleInterval: *r.gpuInterval, TLSCAFile: *r.caFile,
		TLSInsecureSkipVerify: *r.insecure, Spin: *r.spin, SpareConns: *r.spare, MaxResponseBytes: *r.maxResponse, CommandLine: argv,
		ToolVersion: version.String(), Client: *r.client},
		APIKeySet: Changed(r.FS, "api-key"), APIKeyFile: *r.apiKeyFile, CPUs: *r.cpus,
		RequestTimeout: *r.timeout, GracePeriod: *r.grace, NoGPU: *r.noGPU,
		Observe: r.ot.observer, WaitTimeout: *r.waitTimeout, WaitInterval: *r.waitInterval, WaitMode: *r.waitMode,
		Preflight: *r.preflight, NoPreflight: *r.noPreflight,
		ContentType: *r.contentType, ContentTypeSet: Changed(r.FS, "request-content-type"), UI: *r.uiType}
	r.sm.settings(&s)
	r.tf.settings(&s)
	o, err := s.Options(stderr, getenv)
	if err != nil {
		return nil, err
	}
	// The adaptive flags are checked here; the controller joins the run once its plan is
	// known (Adaptive.Apply).
	if _, err := r.Adaptive.Settings(); err != nil {
		return nil, err
	}
	return o, nil
}
