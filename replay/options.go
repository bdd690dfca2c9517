package replay

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"time"

	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/replay/driver"
	"github.com/llmbench/llmbench/replay/http1"
	"github.com/llmbench/llmbench/replay/probe"
	"github.com/llmbench/llmbench/replay/schedule"
)

// Defaults, in one place; cmd/replay shows them as flag defaults.
const (
	// DefaultRequestTimeout is AIPerf's --request-timeout-seconds default (6 hours).
	DefaultRequestTimeout = http1.DefaultRequestTimeout
	// DefaultGracePeriod is AIPerf's --benchmark-grace-period default.
	DefaultGracePeriod = 30 * time.Second
	// DefaultGPUSampleInterval is the NVML sampling period.
	DefaultGPUSampleInterval = 100 * time.Millisecond
	// DefaultProgressEvery is the period of the progress log off a terminal (ProgressEvery).
	DefaultProgressEvery = 10 * time.Second
	// DefaultSpareConns is Options.SpareConns' default (the flag's).
	DefaultSpareConns = driver.DefaultSpareConns
	// maxSpareConns bounds Options.SpareConns: spares are for the few requests a burst or a
	// ramp starts at once, not a pool sized to the load.
	maxSpareConns = 1024
	// DefaultStartDelay is how far ahead of "now" the coordinator puts the shared start
	// instant once every worker is ready: time for the start message to reach them all.
	DefaultStartDelay = 200 * time.Millisecond
	// DefaultSessionHeader carries the session id on every request (AIPerf's
	// --session-header), so routers with session affinity see the plan's sessions.
	DefaultSessionHeader = "X-Correlation-ID"
	// URLRoundRobin spreads sessions over the URLs in turn.
	URLRoundRobin = "round_robin"
	// InfiniteGrace as GracePeriod waits for in-flight requests without limit.
	InfiniteGrace time.Duration = -1
	// DefaultMaxResponseBytes bounds what one request stores of its response (64 MiB).
	DefaultMaxResponseBytes = http1.DefaultMaxResponseBytes
	// MaxResponseBytesLimit is the largest MaxResponseBytes accepted (1 GiB): a log record
	// addresses its body with 32-bit offsets, and analyze holds one body in memory at a time
	// per goroutine.
	MaxResponseBytesLimit = 1 << 30
)

// Options configure a replay run. Zero values take the defaults noted on each field.
type Options struct {
	// Plan is the plan file to replay.
	Plan string
	// URLs are base URLs (http:// or https://, optional path prefix); requests go to the
	// URL plus the plan's path. Several URLs share the sessions per URLStrategy.
	URLs []string
	// URLStrategy spreads sessions over URLs: "round_robin" (the default and only one).
	URLStrategy string
	// OutputDir is the run directory; it is created, and must not already hold a run.
	OutputDir string
	// Workers is the number of worker processes; 0 means one per CPU in CPUs. It is lowered
	// to the plan's session count and to its concurrency, so every worker has work and slots.
	Workers int
	// CPUs are the CPUs workers are pinned to, one each; nil means every CPU this process may
	// use. Empty with NoPin set means no pinning. New refuses a CPU this process may not use
	// (CheckCPUs) unless NoPin is set, when only the list's length counts.
	CPUs []int
	// NoPin leaves workers unpinned (for machines that forbid sched_setaffinity).
	NoPin bool
	// LocalPart, with Count > 1 and CPUs nil, takes part Index of Count of the CPUs this
	// process may use (contiguous blocks, so the parts never share a CPU): several replays
	// on one machine, such as Slurm tasks on one node that Slurm did not bind (cgroup.go).
	LocalPart CPUPart
	// APIKey is sent as "Authorization: Bearer KEY" ("x-api-key: KEY" when the headers carry
	// anthropic-version: the Messages API) unless Headers sets that header. It is
	// never written anywhere.
	APIKey string
	// Headers are extra "Name: value" request headers; they replace plan headers of the same
	// name. Values of credential headers are redacted wherever replay records them.
	Headers []string
	// RequestTimeout bounds one request from connecting to its last byte (0: 6 hours).
	RequestTimeout time.Duration
	// GracePeriod is how long in-flight requests may run after an interruption, and after
	// the planned duration of a duration-sized plan; then they are aborted. 0 aborts at once;
	// InfiniteGrace never does.
	GracePeriod time.Duration
	// ConnectionReuse is pooled (default), never or sticky-user-sessions.
	ConnectionReuse string
	// SessionHeader names the header carrying the session id; "" sends none.
	SessionHeader string
	// GPUSampleInterval is the NVML sampling period (0: 100 ms); negative turns telemetry off.
	GPUSampleInterval time.Duration
	// ServerMetricsURLs are Prometheus endpoints scraped during the run into
	// server_metrics.jsonl, after the default <scheme>://<host>/metrics of each URL (AIPerf's
	// discovery); NoServerMetrics turns scraping off; ServerMetricsInterval is the period
	// (0: 333 ms). GPUTelemetryURLs are DCGM exporter endpoints: when set, they are the GPU
	// telemetry source instead of NVML (GPUSampleInterval < 0 still turns it off).
	ServerMetricsURLs     []string
	NoServerMetrics       bool
	ServerMetricsInterval time.Duration
	GPUTelemetryURLs      []string
	// TLSCAFile is a PEM file of CAs trusted for https URLs (default: the system's).
	TLSCAFile string
	// TLSInsecureSkipVerify accepts any server certificate.
	TLSInsecureSkipVerify bool
	// Client is the worker's HTTP client: ClientLoop or ClientNet; "" means DefaultClient.
	Client string
	// Spin makes open-loop sends wake this long before their instant and busy-wait the rest.
	// It lowers schedule lag at the cost of CPU the worker's reads then wait for; 0 is off.
	Spin time.Duration
	// SpareConns is how many connections per URL the event loop keeps opened ahead under
	// pooled reuse, so that a request that finds none idle (an open loop's ramp, a burst)
	// does not wait on its own connect (driver.DefaultSpareConns, the flag's default);
	// 0 opens none.
	SpareConns int
	// StartDelay is the lead of the shared start instant over the moment all workers are
	// ready (0: DefaultStartDelay).
	StartDelay time.Duration
	// MaxResponseBytes bounds what one request stores of its response: its body, and its
	// reads at 12 bytes each (at least 1,024 reads). A response past either limit ends the
	// request as failed, err "response too large: ...", with the body kept up to the limit;
	// so a response that never ends costs a worker at most twice the limit plus 32 MiB
	// (docs/run-format.md, "Response size"). 0 means DefaultMaxResponseBytes; at most
	// MaxResponseBytesLimit.
	MaxResponseBytes int64

	// WaitForModel, when positive, makes Run poll every URL first (WaitForModelMode, every
	// WaitForModelInterval) until the model answers 2xx, for at most this long; nothing of
	// the plan is sent before. If it never answers, Run fails with nothing left behind.
	WaitForModel time.Duration
	// WaitForModelMode is the probe: probe.WaitModels (default), probe.WaitInference or probe.WaitBoth.
	WaitForModelMode string
	// WaitForModelInterval is the pause between probes; 0 means probe.DefaultWaitForModelInterval.
	WaitForModelInterval time.Duration

	// Preflight, when set, sends one tiny request of the plan's own shape to every URL before
	// the run (replay/probe): it checks that the server honours the plan's output-limit
	// field, records what the server says it is and how it treats connections (run.json
	// preflight, and the workers' connection policy), and refuses a run it shows could
	// measure nothing (unreachable, a client error, not the API's answer). Nothing of it is in
	// the results.
	Preflight bool

	// ShardIndex and ShardCount make this replay shard ShardIndex of ShardCount of a
	// distributed run (distshard.go): it replays only its sessions and its share of the
	// concurrency. ShardCount 0 replays the whole plan.
	ShardIndex, ShardCount int
	// StartAt, when not zero, is the wall-clock instant of the plan's t = 0, the same on
	// every shard; zero means StartDelay after the workers are ready.
	StartAt time.Time
	// Start, when set, decides the start instant instead of StartAt and StartDelay
	// (StartSource).
	Start StartSource
	// Rendezvous, when set, is shard 0's HOST:PORT: the shards meet there once their workers
	// are ready, and shard 0 picks the start instant once all ShardCount have arrived
	// (start_rendezvous.go, package rendezvous: a StartSource). Not with StartAt.
	Rendezvous string
	// RendezvousTimeout bounds the wait for every shard (0: rendezvous.DefaultTimeout).
	RendezvousTimeout time.Duration
	// RunID names the distributed run in run.json (shard.run_id); optional.
	RunID string
	// PlanHash, when set, is the identity (hex SHA-256) the plan must have: a shard refuses
	// to start from another plan than the one its run was generated for.
	PlanHash string
	// LocalAddrs are source addresses connections are spread over, round-robin
	// (localaddr.go); nil lets the kernel choose.
	LocalAddrs []netip.Addr
	// portRange stands in for the kernel's ephemeral-port settings in the connection budget
	// (connbudget.go) when set: tests shrink the budget with it.
	portRange portRange

	// Traceparent is TraceparentAuto (""), TraceparentOn or TraceparentOff: whether every
	// request carries a W3C traceparent (traces.go); auto sends one when TraceReceiver is set.
	Traceparent string
	// TraceReceiver is the HOST:PORT the run's OTLP trace receiver listens on for OTLP/gRPC,
	// TraceReceiverHTTP for OTLP/HTTP ("": TraceReceiver's port plus one); "" for none.
	// Port 0 lets the system choose.
	TraceReceiver, TraceReceiverHTTP string
	// TraceGrace is how long the receiver waits for spans after the last response (0:
	// DefaultTraceGrace); TraceMaxBytes caps server_traces.jsonl (0: receiver.DefaultMaxBytes).
	TraceGrace    time.Duration
	TraceMaxBytes int64

	// CommandLine is recorded in run.json after redaction (RedactArgs).
	CommandLine []string
	// ToolVersion is recorded in run.json and sent as the User-Agent version.
	ToolVersion string
	// Progress receives a one-line progress display, rewritten in place; nil for none.
	Progress io.Writer
	// ProgressEvery, when positive, makes Progress a log instead: one whole line per period
	// (for a file or pipe, where a line rewritten in place would pile up).
	ProgressEvery time.Duration
	// Notice receives one-line notices (no GPU telemetry, worker count lowered); nil discards.
	Notice io.Writer
	// DirLocked, when not nil, is called with the run directory once Run has locked it (its
	// run.json created), before any worker starts: what belongs with the run but is not
	// replay's (the generator validation file) is written there, never into a directory
	// another run holds. An error is a notice; the run goes on.
	DirLocked func(dir string) error
	// Observer, when not nil, watches the run from this process (observer.go): the live
	// OpenTelemetry export. It never touches the workers.
	Observer Observer
	// Control, when not nil, gates the profile's release while the run lasts (in-run
	// adaptive scale, control.go): the workers start under this setting, and the Observer's
	// RunInfo.Control changes it. nil: the plan runs as compiled.
	Control *Control
	// WorkerStderr receives the workers' stderr; nil means os.Stderr.
	WorkerStderr io.Writer
	// WorkerCommand starts a worker process: program and arguments. nil means this
	// executable with WorkerArg, which works for any binary whose main calls WorkerMain.
	WorkerCommand []string
}

// normalize fills defaults and checks what can be checked without the plan.
func (o *Options) normalize() error {
	if o.Plan == "" {
		return errors.New("plan: no plan file given")
	}
	if len(o.URLs) == 0 {
		return errors.New("url: no URL given")
	}
	for i, u := range o.URLs {
		if _, err := endpoint.ParseBase(u); err != nil {
			return fmt.Errorf("url %q: %w", redactURL(u), err)
		}
		if u = strings.TrimSpace(u); !strings.Contains(u, "://") {
			u = "http://" + u // AIPerf adds http:// when missing
		}
		o.URLs[i] = u
	}
	switch o.URLStrategy {
	case "":
		o.URLStrategy = URLRoundRobin
	case URLRoundRobin:
	default:
		return fmt.Errorf("url-strategy %q: want %s", o.URLStrategy, URLRoundRobin)
	}
	if o.OutputDir == "" {
		return errors.New("output-dir: no run directory given")
	}
	if err := schedule.ShardError(o.ShardIndex, o.ShardCount); err != nil {
		return err
	}
	if err := o.checkRendezvous(); err != nil {
		return err
	}
	if o.Workers < 0 {
		return fmt.Errorf("workers %d: must be positive", o.Workers)
	}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.RequestTimeout < 0 {
		return fmt.Errorf("request-timeout-seconds %v: must be positive", o.RequestTimeout.Seconds())
	}
	if o.GracePeriod < 0 {
		o.GracePeriod = InfiniteGrace
	}
	switch o.ConnectionReuse {
	case "":
		o.ConnectionReuse = ReusePooled
	case ReusePooled, ReuseNever, ReuseSticky:
	default:
		return fmt.Errorf("connection-reuse-strategy %q: want %s, %s or %s", o.ConnectionReuse, ReusePooled, ReuseNever, ReuseSticky)
	}
	if o.SessionHeader != "" {
		if err := http1.CheckHeader(o.SessionHeader, ""); err != nil {
			return fmt.Errorf("session-header: %w", err)
		}
	}
	if o.GPUSampleInterval == 0 {
		o.GPUSampleInterval = DefaultGPUSampleInterval
	}
	if err := o.normalizeServerMetrics(); err != nil {
		return err
	}
	if err := o.normalizeTraces(); err != nil {
		return err
	}
	if o.StartDelay <= 0 {
		o.StartDelay = DefaultStartDelay
	}
	if o.MaxResponseBytes == 0 {
		o.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if o.MaxResponseBytes < 0 || o.MaxResponseBytes > MaxResponseBytesLimit {
		return fmt.Errorf("max-response-bytes %d: must be between 1 and %d (1 GiB)", o.MaxResponseBytes, MaxResponseBytesLimit)
	}
	c, err := checkClient(o.Client)
	if err != nil {
		return err
	}
	o.Client = c
	if o.SpareConns < 0 || o.SpareConns > maxSpareConns {
		return fmt.Errorf("spare-connections %d: must be between 0 and %d", o.SpareConns, maxSpareConns)
	}
	if o.Spin < 0 || o.Spin > 10*time.Millisecond {
		return fmt.Errorf("spin %v: must be between 0 and 10ms", o.Spin)
	}
	if o.ToolVersion == "" {
		o.ToolVersion = "devel"
	}
	switch o.WaitForModelMode {
	case "":
		o.WaitForModelMode = probe.WaitModels
	case probe.WaitModels, probe.WaitInference, probe.WaitBoth:
	default:
		return fmt.Errorf("wait-for-model-mode %q: want %s, %s or %s", o.WaitForModelMode, probe.WaitModels, probe.WaitInference, probe.WaitBoth)
	}
	if o.WaitForModelInterval == 0 {
		o.WaitForModelInterval = probe.DefaultWaitForModelInterval
	}
	if o.WaitForModel < 0 || o.WaitForModelInterval < 0 {
		return fmt.Errorf("wait-for-model: timeout %v and interval %v must not be negative", o.WaitForModel, o.WaitForModelInterval)
	}
	return nil
}

// CheckCPUs returns an error naming the CPUs of cpus this process may not run on (its
// sched_getaffinity mask: CPUs that do not exist, are offline, or are outside its cpuset),
// so that a bad list is refused before a run starts instead of when each worker pins itself.
func CheckCPUs(cpus []int) error {
	allowed, err := allowedCPUs()
	if err != nil {
		return err
	}
	ok := make(map[int]bool, len(allowed))
	for _, c := range allowed {
		ok[c] = true
	}
	var bad []int
	for _, c := range cpus {
		if !ok[c] {
			bad = append(bad, c)
		}
	}
	switch len(bad) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("CPU %d is not available to this process, which may use CPUs %s", bad[0], formatCPUs(allowed))
	}
	return fmt.Errorf("CPUs %s are not available to this process, which may use CPUs %s", formatCPUs(bad), formatCPUs(allowed))
}

// ParseCPUList parses a Linux CPU list such as "0-3,6,8-9".
func ParseCPUList(s string) ([]int, error) {
	var cpus []int
	seen := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, fmt.Errorf("cpus %q: empty item", s)
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := parseCPU(lo)
		if err != nil {
			return nil, fmt.Errorf("cpus %q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = parseCPU(hi); err != nil {
				return nil, fmt.Errorf("cpus %q: %w", s, err)
			}
			if b < a {
				return nil, fmt.Errorf("cpus %q: range %s runs backwards", s, part)
			}
		}
		for c := a; c <= b; c++ {
			if seen[c] {
				return nil, fmt.Errorf("cpus %q: CPU %d listed twice", s, c)
			}
			seen[c] = true
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

func parseCPU(s string) (int, error) {
	if s == "" || len(s) > 5 {
		return 0, fmt.Errorf("bad CPU number %q", s)
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("bad CPU number %q", s)
		}
		n = n*10 + int(c-'0')
	}
	return n, nil
}

// Connection reuse strategies (AIPerf's --connection-reuse-strategy), as package http1
// defines them.
const (
	ReusePooled = http1.ReusePooled // keep-alive connections shared by all requests of a worker
	ReuseNever  = http1.ReuseNever  // a new connection per request, "Connection: close"
	ReuseSticky = http1.ReuseSticky // one connection per session, kept across its turns
)

// ClientErrorPrefix starts the Err of a request that failed for want of the client's own
// resources (http1.ClientErrorPrefix).
const ClientErrorPrefix = http1.ClientErrorPrefix
