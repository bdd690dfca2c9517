// Package otelpush streams a run's metrics to an OpenTelemetry collector over OTLP/HTTP while
// the run lasts (AIPerf's --otel-url), named by the GenAI semantic conventions as AIPerf names
// them. It is a replay.Observer: it runs in the coordinator's process, off the workers' CPUs,
// and works only from what the workers already produce. The "timing" stream comes from the
// progress counts the workers report over their pipes (the live progress line's); the
// "metrics" stream from their raw logs, read as they grow: each finished request's record is
// analysed by analyze's own per-request code (analyze.RequestAnalyzer), so a pushed TTFT is
// the TTFT the exports will report. No worker does any metric work for it.
//
// A collector that cannot be reached, or refuses the metrics, is one warning; the run goes on
// and its result never depends on the export. docs/profile.md ("Live OpenTelemetry") lists
// every metric, unit and attribute.
package otelpush

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/redact"
	"github.com/llmbench/llmbench/replay"
)

// The stream domains of --stream (AIPerf's names).
const (
	StreamMetrics = "metrics" // per-request GenAI histograms, from the raw logs
	StreamTiming  = "timing"  // request counters and in-flight gauge, from the progress counts
	StreamDefault = "default" // both
)

// DefaultInterval is how often metrics are pushed.
const DefaultInterval = time.Second

// exportTimeout bounds one push; a collector slower than this loses that push, not the run.
const exportTimeout = 2 * time.Second

// finishTimeout bounds the final drain and push at the end of the run.
const finishTimeout = 10 * time.Second

// Options configure a Pusher.
type Options struct {
	// URL is the collector: host, host:port or a URL (http:// added when missing);
	// /v1/metrics is appended when the URL has no path.
	URL string
	// Interval is the push period (0: DefaultInterval).
	Interval time.Duration
	// Metrics and Timing select the stream domains (--stream); neither means both.
	Metrics, Timing bool
	// Provider is gen_ai.provider.name; "" infers it from the run's URLs as AIPerf does
	// (api.openai.com is openai, ...), else "_OTHER".
	Provider string
	// ResourceAttributes are merged into the resource of every metric (--otel-resource-attributes).
	ResourceAttributes map[string]string
	// UseServerTokenCount takes token counts from the responses' usage, as analyze does.
	UseServerTokenCount bool
	// LoadTokenizer loads the plan's tokenizer to count output tokens (nil: token usage is
	// pushed only from the server's usage).
	LoadTokenizer func(spec string) (analyze.TokenCounter, error)
	// ServiceName and ServiceVersion are the resource's service.name and service.version.
	ServiceName, ServiceVersion string
	// Warn receives the one warning of a collector that did not take the metrics, and of
	// anything else that stops the export; nil discards.
	Warn io.Writer
	// Name prefixes the warnings ("profile", "replay").
	Name string
}

// CollectorURL is the OTLP/HTTP metrics URL o.URL names, or an error saying what is wrong.
func CollectorURL(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", errors.New("empty URL")
	}
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("%q: %w", redact.URL(raw), errors.Unwrap(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("%q: scheme must be http or https", redact.URL(raw))
	}
	if u.Host == "" {
		return "", fmt.Errorf("%q: no host", redact.URL(raw))
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/metrics"
	}
	return u.String(), nil
}

// Pusher is the live export of one run; it implements replay.Observer. Make one per run.
type Pusher struct {
	o       Options
	url     string
	mu      sync.Mutex
	warned  bool
	started bool
	mp      *sdkmetric.MeterProvider
	ins     *instruments
	tail    *tailer

	// The timing stream: the counts last pushed, to add their increase.
	lastSent, lastDone, lastErrs int64
}

// New checks o and returns a Pusher; nothing is sent before the run starts.
func New(o Options) (*Pusher, error) {
	u, err := CollectorURL(o.URL)
	if err != nil {
		return nil, err
	}
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if !o.Metrics && !o.Timing {
		o.Metrics, o.Timing = true, true
	}
	if o.ServiceName == "" {
		o.ServiceName = "llmbench"
	}
	return &Pusher{o: o, url: u}, nil
}

var _ replay.Observer = (*Pusher)(nil)

// Start begins the export of the run info describes: its metrics are pushed every interval
// from now on, and its raw logs are read as they grow.
func (p *Pusher) Start(info replay.RunInfo) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started {
		return
	}
	p.started = true
	t, meta, note, err := openTailer(info, &p.o)
	if err != nil {
		p.warnLocked(fmt.Errorf("the live metrics are off: %w", err))
		return
	}
	if note != nil && p.o.Warn != nil {
		fmt.Fprintf(p.o.Warn, "%s: --otel-url: %v\n", p.name(), note)
	}
	runID := analyze.BenchmarkIDOf(info.PlanHash, info.StartUnixNs)
	model, _, _ := strings.Cut(meta.Model, ",") // a --model list is named by its first, as AIPerf does
	common := []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", operationName(meta.Endpoint)),
		attribute.String("gen_ai.provider.name", providerName(p.o.Provider, info.URLs)),
		attribute.String("gen_ai.request.model", strings.TrimSpace(model)),
	}
	res := []attribute.KeyValue{
		attribute.String("service.name", p.o.ServiceName),
		attribute.String("service.version", p.o.ServiceVersion),
		attribute.String("aiperf.benchmark.id", runID),
		attribute.String("aiperf.endpoint.type", meta.Endpoint),
		attribute.String("aiperf.model.name", strings.TrimSpace(model)),
	}
	keys := make([]string, 0, len(p.o.ResourceAttributes))
	for k := range p.o.ResourceAttributes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		res = append(res, attribute.String(k, p.o.ResourceAttributes[k]))
	}
	exp, err := otlpmetrichttp.New(context.Background(), otlpmetrichttp.WithEndpointURL(p.url),
		otlpmetrichttp.WithTimeout(exportTimeout), otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: false}))
	if err != nil {
		t.close()
		p.warnLocked(fmt.Errorf("the live metrics are off: %w", err))
		return
	}
	p.mp = sdkmetric.NewMeterProvider(
		sdkmetric.WithResource(resource.NewSchemaless(res...)),
		sdkmetric.WithReader(sdkmetric.NewPeriodicReader(&warnExporter{Exporter: exp, p: p},
			sdkmetric.WithInterval(p.o.Interval), sdkmetric.WithTimeout(exportTimeout))))
	p.ins = newInstruments(p.mp.Meter("github.com/llmbench/llmbench/otelpush"), common)
	if p.o.Metrics {
		t.ins = p.ins
		p.tail = t
		go t.run()
	} else {
		t.close()
	}
}

// Progress adds the increase of the workers' counts to the timing stream.
func (p *Pusher) Progress(sent, done, errs int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ins == nil || !p.o.Timing {
		return
	}
	ctx := context.Background()
	add := func(c metric.Int64Counter, now int64, last *int64) {
		if now > *last {
			c.Add(ctx, now-*last, p.ins.common)
			*last = now
		}
	}
	prevInFlight := p.lastSent - p.lastDone
	add(p.ins.sent, sent, &p.lastSent)
	add(p.ins.completed, done, &p.lastDone)
	add(p.ins.errors, errs, &p.lastErrs)
	if d := (p.lastSent - p.lastDone) - prevInFlight; d != 0 {
		p.ins.inFlight.Add(ctx, d, p.ins.common)
	}
}

// Finish reads the raw logs to their end and pushes what is left, then stops the export.
// It returns within finishTimeout whatever the collector does.
func (p *Pusher) Finish() {
	p.mu.Lock()
	mp, t := p.mp, p.tail
	p.mp, p.tail = nil, nil
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), finishTimeout)
	defer cancel()
	if t != nil {
		t.finish(ctx)
	}
	if mp != nil {
		_ = mp.Shutdown(ctx) // collects and pushes once more; a failure was warned about
	}
}

// warn says once that the export does not work; the run goes on.
func (p *Pusher) warn(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.warnLocked(err)
}

func (p *Pusher) warnLocked(err error) {
	if p.warned || p.o.Warn == nil {
		p.warned = true
		return
	}
	p.warned = true
	fmt.Fprintf(p.o.Warn, "%s: --otel-url %s: %s; the run goes on, without live metrics where they fail\n",
		p.name(), redact.URL(p.url), redact.Text(strings.ReplaceAll(err.Error(), "\n", " ")))
}

// name prefixes the Pusher's messages.
func (p *Pusher) name() string {
	if p.o.Name == "" {
		return "otel"
	}
	return p.o.Name
}

// warnExporter turns a failed push into the Pusher's one warning, so that the SDK never
// reports it on its own (its global handler logs every failure).
type warnExporter struct {
	sdkmetric.Exporter
	p *Pusher
}

// Export pushes rm; a failure is warned about once and otherwise dropped.
func (e *warnExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	if err := e.Exporter.Export(ctx, rm); err != nil {
		e.p.warn(fmt.Errorf("the collector did not take the metrics (%w)", err))
	}
	return nil
}

// Shutdown stops the exporter; its error is the push's, already warned about.
func (e *warnExporter) Shutdown(ctx context.Context) error {
	_ = e.Exporter.Shutdown(ctx)
	return nil
}

// operationName is gen_ai.operation.name for an endpoint type, as AIPerf maps it.
func operationName(endpoint string) string {
	switch endpoint {
	case "completions":
		return "text_completion"
	case "embeddings":
		return "embeddings"
	}
	return "chat"
}

// providerHosts are the hosts AIPerf infers gen_ai.provider.name from.
var providerHosts = []struct {
	re   *regexp.Regexp
	name string
}{
	{regexp.MustCompile(`api\.openai\.com$`), "openai"},
	{regexp.MustCompile(`api\.anthropic\.com$`), "anthropic"},
	{regexp.MustCompile(`api\.deepseek\.com$`), "deepseek"},
	{regexp.MustCompile(`api\.mistral\.ai$`), "mistral_ai"},
	{regexp.MustCompile(`api\.cohere\.(ai|com)$`), "cohere"},
	{regexp.MustCompile(`api\.x\.ai$`), "x_ai"},
	{regexp.MustCompile(`api\.groq\.com$`), "groq"},
	{regexp.MustCompile(`api\.perplexity\.ai$`), "perplexity"},
	{regexp.MustCompile(`generativelanguage\.googleapis\.com$`), "gcp.gemini"},
	{regexp.MustCompile(`.*-aiplatform\.googleapis\.com$`), "gcp.vertex_ai"},
	{regexp.MustCompile(`bedrock-runtime\..*\.amazonaws\.com$`), "aws.bedrock"},
	{regexp.MustCompile(`.*\.openai\.azure\.com$`), "azure.ai.openai"},
	{regexp.MustCompile(`.*\.services\.ai\.azure\.com$`), "azure.ai.inference"},
	{regexp.MustCompile(`.*\.ibm\.com$`), "ibm.watsonx.ai"},
}

// providerName is gen_ai.provider.name: the override, else the first URL host AIPerf knows,
// else "_OTHER".
func providerName(override string, urls []string) string {
	if override != "" {
		return override
	}
	for _, raw := range urls {
		u, err := url.Parse(strings.ToLower(strings.TrimSpace(raw)))
		if err != nil {
			continue
		}
		for _, h := range providerHosts {
			if h.re.MatchString(u.Hostname()) {
				return h.name
			}
		}
	}
	return "_OTHER"
}
