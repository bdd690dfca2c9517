package otelpush

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/internal/logfollow"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay"
)

// pollEvery is how often the tailer looks for new logs.
const pollEvery = logfollow.PollEvery

// instruments are the metrics pushed, with the attribute sets they are recorded under.
type instruments struct {
	common metric.MeasurementOption // gen_ai.operation.name, provider, model

	duration, ttfc, tpoc metric.Float64Histogram
	tokens               metric.Int64Histogram
	// phase[p] are the common attributes plus aiperf.benchmark_phase; tokens[p][0] input,
	// [1] output, with gen_ai.token.type too.
	phase     [2]metric.MeasurementOption
	tokenType [2][2]metric.MeasurementOption

	sent, completed, errors metric.Int64Counter
	inFlight                metric.Int64UpDownCounter
}

// The histogram buckets AIPerf uses (the GenAI semantic conventions' recommendations).
var (
	durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
	chunkBuckets    = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.12, 0.14, 0.16, 0.18, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.75, 1, 2, 5}
	tokenBuckets    = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216}
)

// phaseNames are aiperf.benchmark_phase by mmapds.Phase.
var phaseNames = [2]string{mmapds.PhaseWarmup: "warmup", mmapds.PhaseProfile: "profiling"}

func newInstruments(m metric.Meter, common []attribute.KeyValue) *instruments {
	in := &instruments{common: metric.WithAttributeSet(attribute.NewSet(common...))}
	for ph := range phaseNames {
		attrs := append(append([]attribute.KeyValue(nil), common...), attribute.String("aiperf.benchmark_phase", phaseNames[ph]))
		in.phase[ph] = metric.WithAttributeSet(attribute.NewSet(attrs...))
		for i, tt := range [2]string{"input", "output"} {
			in.tokenType[ph][i] = metric.WithAttributeSet(attribute.NewSet(append(attrs, attribute.String("gen_ai.token.type", tt))...))
		}
	}
	// The SDK refuses nothing here: names and units are valid, so errors cannot happen.
	in.duration, _ = m.Float64Histogram("gen_ai.client.operation.duration", metric.WithUnit("s"),
		metric.WithDescription("GenAI operation duration (request_latency)."), metric.WithExplicitBucketBoundaries(durationBuckets...))
	in.ttfc, _ = m.Float64Histogram("gen_ai.client.operation.time_to_first_chunk", metric.WithUnit("s"),
		metric.WithDescription("Time to receive the first chunk of a streaming GenAI response (time_to_first_token)."), metric.WithExplicitBucketBoundaries(chunkBuckets...))
	in.tpoc, _ = m.Float64Histogram("gen_ai.client.operation.time_per_output_chunk", metric.WithUnit("s"),
		metric.WithDescription("Time per output chunk of a streaming GenAI response after the first (inter_token_latency)."), metric.WithExplicitBucketBoundaries(chunkBuckets...))
	in.tokens, _ = m.Int64Histogram("gen_ai.client.token.usage", metric.WithUnit("{token}"),
		metric.WithDescription("Number of tokens used in a GenAI client request, by token type."), metric.WithExplicitBucketBoundaries(tokenBuckets...))
	in.sent, _ = m.Int64Counter("aiperf.timing.requests.sent", metric.WithUnit("1"), metric.WithDescription("Requests sent."))
	in.completed, _ = m.Int64Counter("aiperf.timing.requests.completed", metric.WithUnit("1"), metric.WithDescription("Requests done, whatever their outcome."))
	in.errors, _ = m.Int64Counter("aiperf.timing.requests.errors", metric.WithUnit("1"), metric.WithDescription("Requests that failed."))
	in.inFlight, _ = m.Int64UpDownCounter("aiperf.timing.requests.in_flight", metric.WithUnit("1"), metric.WithDescription("Requests sent and not yet done."))
	return in
}

// record adds one finished request's metrics: only the values analyze gives it (a failed
// request has none of them, as in AIPerf's export).
func (in *instruments) record(ctx context.Context, m analyze.RequestMetrics, ph mmapds.Phase) {
	if int(ph) >= len(phaseNames) {
		return
	}
	if !m.Valid() {
		return
	}
	if v, ok := m.Stored(analyze.MRequestLatency); ok {
		in.duration.Record(ctx, v/1e9, in.phase[ph])
	}
	if v, ok := m.Stored(analyze.MTimeToFirstToken); ok {
		in.ttfc.Record(ctx, v/1e9, in.phase[ph])
	}
	if v, ok := m.Stored(analyze.MInterTokenLatency); ok {
		in.tpoc.Record(ctx, v/1e9, in.phase[ph])
	}
	if v, ok := m.Stored(analyze.MInputSequenceLength); ok {
		in.tokens.Record(ctx, int64(v), in.tokenType[ph][0])
	}
	if v, ok := m.Stored(analyze.MOutputTokenCount); ok {
		in.tokens.Record(ctx, int64(v), in.tokenType[ph][1])
	}
}

// tailer reads the run's worker logs as the workers write them and records each finished
// request. It runs on the coordinator's CPUs; the workers do not know it is there.
type tailer struct {
	dir  string
	plan *mmapds.Plan
	ro   analyze.RequestOptions
	ins  *instruments
	stop chan struct{} // closed when every worker has exited: read each log to its end
	done chan struct{}
}

// openTailer opens the run's plan and the analysis its records need.
// A tokenizer that cannot be loaded is note: output tokens are then the server's counts.
func openTailer(info replay.RunInfo, o *Options) (t *tailer, meta *mmapds.Meta, note error, err error) {
	plan, err := mmapds.Open(info.PlanPath, mmapds.Options{SkipHash: true})
	if err != nil {
		return nil, nil, nil, err
	}
	meta = plan.Meta()
	ep, err := analyze.PlanEndpoint(meta)
	if err != nil {
		plan.Close()
		return nil, nil, nil, fmt.Errorf("plan %s: %w", info.PlanPath, err)
	}
	t = &tailer{dir: info.Dir, plan: plan, stop: make(chan struct{}), done: make(chan struct{}),
		ro: analyze.RequestOptions{Endpoint: ep, UseServerTokenCount: o.UseServerTokenCount}}
	if v, _ := meta.Spec["use-server-token-count"].(bool); v {
		t.ro.UseServerTokenCount = true // the plan asked for the server's counts
	}
	if ep.ProducesTokens && !t.ro.UseServerTokenCount {
		var err error
		switch {
		case o.LoadTokenizer == nil:
			err = errors.New("no tokenizer loader")
		case meta.Tokenizer == "":
			err = errors.New("the plan names no tokenizer")
		default:
			t.ro.Tokenizer, err = o.LoadTokenizer(meta.Tokenizer)
		}
		if err != nil {
			// Output tokens are then the server's counts, where it sends usage.
			t.ro.Tokenizer, t.ro.UseServerTokenCount = nil, true
			note = fmt.Errorf("tokenizer %q: %w: gen_ai.client.token.usage counts are the server's", meta.Tokenizer, err)
		}
	}
	return t, meta, note, nil
}

func (t *tailer) close() { t.plan.Close() }

// run follows every worker log that appears in the run directory until finish.
func (t *tailer) run() {
	defer close(t.done)
	defer t.close()
	var wg sync.WaitGroup
	seen := map[string]bool{}
	scan := func() {
		paths, _ := filepath.Glob(filepath.Join(t.dir, "worker-*.rawlog"))
		sort.Strings(paths)
		for _, p := range paths {
			if seen[p] {
				continue
			}
			seen[p] = true
			wg.Add(1)
			go func() {
				defer wg.Done()
				t.follow(p)
			}()
		}
	}
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for stopped := false; !stopped; {
		scan()
		select {
		case <-t.stop:
			stopped = true
			scan() // a log that appeared since: read it whole
		case <-tick.C:
		}
	}
	wg.Wait()
}

// finish makes the tailer read every log to its end and waits for it, or for ctx.
func (t *tailer) finish(ctx context.Context) {
	close(t.stop)
	select {
	case <-t.done:
	case <-ctx.Done():
	}
}

// follow records the requests of one log as they are written, until finish and its end.
func (t *tailer) follow(path string) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	r, err := rawlog.NewReader(&logfollow.Reader{F: f, Stop: t.stop}, path)
	if err != nil {
		return // no header before the end: a worker that never started
	}
	a, err := analyze.NewRequestAnalyzer(t.ro)
	if err != nil {
		return
	}
	ctx := context.Background()
	for {
		k, err := r.Next()
		if err != nil {
			return // the end, or a torn last record: analyze will say so
		}
		if k != rawlog.KindRequest {
			continue
		}
		q := r.Request()
		rec, _, err := t.plan.Record(int(q.Index))
		if err != nil {
			continue
		}
		t.ins.record(ctx, a.Analyze(q, &rec), rec.Phase)
	}
}
