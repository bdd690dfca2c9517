package mockllm

import (
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// lagShards spreads emit-lag recording over several mutexes so that a
// thousand streams do not queue on one lock; /metrics merges them.
const lagShards = 8

const lagMax = int64(100 * time.Second)

type lagShard struct {
	mu  sync.Mutex
	h   *hdrhistogram.Histogram
	sum int64
	_   [40]byte // keep shards on separate cache lines
}

// record adds one emit lag in nanoseconds (negative lags, impossible by
// construction, are recorded as 0).
func (l *lagShard) record(ns int64) {
	ns = min(max(ns, 0), lagMax)
	l.mu.Lock()
	_ = l.h.RecordValue(ns)
	l.sum += ns
	l.mu.Unlock()
}

type lagHist struct{ shards [lagShards]lagShard }

func (l *lagHist) shardFor(seq uint64) *lagShard { return &l.shards[seq%lagShards] }

// merged returns a merged copy and the sum of all lags.
func (l *lagHist) merged() (*hdrhistogram.Histogram, int64) {
	out := hdrhistogram.New(1, lagMax, 3)
	var sum int64
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		out.Merge(sh.h)
		sum += sh.sum
		sh.mu.Unlock()
	}
	return out, sum
}

type metrics struct {
	running, waiting atomic.Int64
	requests         [numAPIs]atomic.Uint64
	faults           [numFaults]atomic.Uint64
	promptTokens     atomic.Uint64
	genTokens        atomic.Uint64
	reasoningTokens  atomic.Uint64
	badRequests      atomic.Uint64
	unauthorized     atomic.Uint64
	notFound         atomic.Uint64
	clientGone       atomic.Uint64
	lag              lagHist
	// kvHeld is the tokens the running requests hold in the simulated KV cache: each its
	// prompt from admission and its output as it is sent, until it ends.
	kvHeld atomic.Int64
	// ttft and e2e are vLLM's server-side latency histograms: arrival to the first token
	// written, and to the end of the request.
	ttft, e2e secondsHist
	// started is when the server was built (the _created samples of vLLM's page), scrapes
	// the /metrics pages served (its http_requests_total).
	started time.Time
	scrapes atomic.Uint64
}

// DefaultKVCacheTokens is the simulated KV cache's size when Options.KVCacheTokens is 0.
const DefaultKVCacheTokens = 65536

// kvHold is one running request's share of the simulated KV cache.
type kvHold struct {
	held    int64
	arrival int64 // monotonic ns
	first   bool  // its first token was sent
}

// hold admits a request's prompt into the simulated KV cache.
func (m *metrics) hold(promptTokens int, arrival int64) *kvHold {
	k := &kvHold{held: int64(promptTokens), arrival: arrival}
	m.kvHeld.Add(k.held)
	return k
}

// tokensOut adds n generated tokens to the request's share; the first records its TTFT.
func (m *metrics) tokensOut(k *kvHold, n int64) {
	if k == nil {
		return
	}
	if !k.first {
		k.first = true
		m.ttft.observe(monoNow() - k.arrival)
	}
	k.held += n
	m.kvHeld.Add(n)
}

// release gives a finished request's tokens back and records its end-to-end latency.
func (m *metrics) release(k *kvHold) {
	m.kvHeld.Add(-k.held)
	m.e2e.observe(monoNow() - k.arrival)
}

// secondsBounds are vLLM's time_to_first_token_seconds bucket bounds.
var secondsBounds = [...]float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560}

// secondsHist is a Prometheus histogram of durations over secondsBounds, lock-free.
type secondsHist struct {
	buckets [len(secondsBounds) + 1]atomic.Uint64 // not cumulative; the last is +Inf
	sumNs   atomic.Int64
}

func (h *secondsHist) observe(ns int64) {
	ns = max(ns, 0)
	s := float64(ns) / 1e9
	i := 0
	for i < len(secondsBounds) && s > secondsBounds[i] {
		i++
	}
	h.buckets[i].Add(1)
	h.sumNs.Add(ns)
}

func (m *metrics) init() {
	m.started = time.Now()
	for i := range m.lag.shards {
		m.lag.shards[i].h = hdrhistogram.New(1, lagMax, 3)
	}
}

// LagStats summarizes emit lag: how late events left the server
// (written and flushed) relative to their scheduled instants.
type LagStats struct {
	Count               int64
	Mean, P50, P90, P99 time.Duration
	P999, Max           time.Duration
}

// Stats is a snapshot of the server's counters.
type Stats struct {
	Running, Waiting int64  // requests admitted / queued for admission
	Requests         uint64 // valid inference requests received
	PromptTokens     uint64
	GeneratedTokens  uint64 // reasoning + content tokens sent
	ReasoningTokens  uint64
	Faults           map[string]uint64 // by kind: error, stream_error, disconnect, stall
	BadRequests      uint64
	ClientGone       uint64 // requests that ended because the client left
	EmitLag          LagStats
}

// Stats returns a snapshot of the server's counters and emit lag.
func (s *Server) Stats() Stats {
	m := &s.m
	st := Stats{
		Running:         m.running.Load(),
		Waiting:         m.waiting.Load(),
		PromptTokens:    m.promptTokens.Load(),
		GeneratedTokens: m.genTokens.Load(),
		ReasoningTokens: m.reasoningTokens.Load(),
		BadRequests:     m.badRequests.Load(),
		ClientGone:      m.clientGone.Load(),
		Faults:          map[string]uint64{},
	}
	for i := range m.requests {
		st.Requests += m.requests[i].Load()
	}
	for k := faultError; k < numFaults; k++ {
		st.Faults[faultNames[k]] = m.faults[k].Load()
	}
	h, sum := m.lag.merged()
	st.EmitLag.Count = h.TotalCount()
	if st.EmitLag.Count > 0 {
		st.EmitLag.Mean = time.Duration(sum / st.EmitLag.Count)
		st.EmitLag.P50 = time.Duration(h.ValueAtQuantile(50))
		st.EmitLag.P90 = time.Duration(h.ValueAtQuantile(90))
		st.EmitLag.P99 = time.Duration(h.ValueAtQuantile(99))
		st.EmitLag.P999 = time.Duration(h.ValueAtQuantile(99.9))
		st.EmitLag.Max = time.Duration(h.Max())
	}
	return st
}

// serveMetrics writes the Prometheus text exposition (format 0.0.4).
// The vllm: aliases let scrapers written for vLLM read the mock too.
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request, _ apiKind, _ int64) {
	if s.opts.Quirks.NoMetrics {
		writeError(w, styleOpenAI, http.StatusNotImplemented, "not_supported_error", noMetricsMessage)
		return
	}
	if s.opts.VLLMMetrics {
		s.serveVLLMMetrics(w, r)
		return
	}
	m := &s.m
	b := make([]byte, 0, 4096)
	head := func(name, help, typ string) {
		b = append(b, "# HELP "...)
		b = append(b, name...)
		b = append(b, ' ')
		b = append(b, help...)
		b = append(b, "\n# TYPE "...)
		b = append(b, name...)
		b = append(b, ' ')
		b = append(b, typ...)
		b = append(b, '\n')
	}
	gauge := func(name, help string, v int64) {
		head(name, help, "gauge")
		b = append(b, name...)
		b = append(b, ' ')
		b = strconv.AppendInt(b, v, 10)
		b = append(b, '\n')
	}
	counter := func(name, help string, v uint64) {
		head(name, help, "counter")
		b = append(b, name...)
		b = append(b, ' ')
		b = strconv.AppendUint(b, v, 10)
		b = append(b, '\n')
	}
	// labeled appends one sample of a counter with a single label.
	labeled := func(name, label, value string, v uint64) {
		b = append(b, name...)
		b = append(b, '{')
		b = append(b, label...)
		b = append(b, `="`...)
		b = append(b, value...)
		b = append(b, `"} `...)
		b = strconv.AppendUint(b, v, 10)
		b = append(b, '\n')
	}
	running, waiting := m.running.Load(), m.waiting.Load()
	gauge("mockllm_requests_running", "Requests admitted and being served.", running)
	gauge("mockllm_requests_waiting", "Requests queued for admission (--max-batch).", waiting)
	gauge("vllm:num_requests_running", "Alias of mockllm_requests_running.", running)
	gauge("vllm:num_requests_waiting", "Alias of mockllm_requests_waiting.", waiting)
	head("mockllm_requests_total", "Valid inference requests received, by endpoint type.", "counter")
	for i := range m.requests {
		labeled("mockllm_requests_total", "endpoint", apiNames[i], m.requests[i].Load())
	}
	head("mockllm_faults_total", "Injected faults, by kind.", "counter")
	for k := faultError; k < numFaults; k++ {
		labeled("mockllm_faults_total", "kind", faultNames[k], m.faults[k].Load())
	}
	gen, prompt := m.genTokens.Load(), m.promptTokens.Load()
	counter("mockllm_prompt_tokens_total", "Prompt tokens of valid requests (builtin tokenizer).", prompt)
	counter("mockllm_generation_tokens_total", "Output tokens sent (reasoning included).", gen)
	counter("mockllm_reasoning_tokens_total", "Reasoning tokens sent.", m.reasoningTokens.Load())
	counter("vllm:prompt_tokens_total", "Alias of mockllm_prompt_tokens_total.", prompt)
	counter("vllm:generation_tokens_total", "Alias of mockllm_generation_tokens_total.", gen)
	kvCap := int64(s.opts.KVCacheTokens)
	if kvCap <= 0 {
		kvCap = DefaultKVCacheTokens
	}
	head("vllm:kv_cache_usage_perc", "Simulated KV-cache usage: tokens held by running requests over --kv-cache-tokens (1 = 100%).", "gauge")
	b = append(b, "vllm:kv_cache_usage_perc "...)
	b = strconv.AppendFloat(b, min(float64(max(m.kvHeld.Load(), 0))/float64(kvCap), 1), 'g', -1, 64)
	b = append(b, '\n')
	counter("vllm:num_preemptions_total", "Preemptions (mockllm never preempts).", 0)
	counter("vllm:prefix_cache_queries_total", "Prompt tokens looked up in the simulated prefix cache (text prompts; docs/mockllm.md).", s.prefix.queries.Load())
	counter("vllm:prefix_cache_hits_total", "Prompt tokens found in the simulated prefix cache: leading blocks of 16 tokens whose whole prefix was cached.", s.prefix.hits.Load())
	histogram := func(name, help string, h *secondsHist) {
		head(name, help, "histogram")
		var cum uint64
		for i := range h.buckets {
			cum += h.buckets[i].Load()
			b = append(b, name+`_bucket{le="`...)
			if i < len(secondsBounds) {
				b = strconv.AppendFloat(b, secondsBounds[i], 'g', -1, 64)
			} else {
				b = append(b, "+Inf"...)
			}
			b = append(b, `"} `...)
			b = strconv.AppendUint(b, cum, 10)
			b = append(b, '\n')
		}
		b = append(b, name+"_sum "...)
		b = appendSeconds(b, h.sumNs.Load())
		b = append(b, '\n')
		b = append(b, name+"_count "...)
		b = strconv.AppendUint(b, cum, 10)
		b = append(b, '\n')
	}
	histogram("vllm:time_to_first_token_seconds", "Arrival to first token sent (queueing included).", &m.ttft)
	histogram("vllm:e2e_request_latency_seconds", "Arrival to the end of the request.", &m.e2e)
	counter("mockllm_bad_requests_total", "Requests rejected with 4xx for their body or headers.", m.badRequests.Load())
	counter("mockllm_unauthorized_total", "Requests rejected with 401.", m.unauthorized.Load())
	counter("mockllm_not_found_total", "Requests for unknown paths.", m.notFound.Load())
	counter("mockllm_client_gone_total", "Requests ended early because the client left.", m.clientGone.Load())

	h, sum := m.lag.merged()
	const lagName = "mockllm_emit_lag_seconds"
	b = append(b, "# HELP "+lagName+" Actual minus scheduled emit time of timed events (written and flushed).\n# TYPE "+lagName+" summary\n"...)
	for _, q := range [...]struct {
		label string
		pct   float64
	}{{"0.5", 50}, {"0.9", 90}, {"0.99", 99}, {"0.999", 99.9}, {"1", 100}} {
		b = append(b, lagName+`{quantile="`...)
		b = append(b, q.label...)
		b = append(b, `"} `...)
		b = appendSeconds(b, h.ValueAtQuantile(q.pct))
		b = append(b, '\n')
	}
	b = append(b, lagName+"_sum "...)
	b = appendSeconds(b, sum)
	b = append(b, '\n')
	b = append(b, lagName+"_count "...)
	b = strconv.AppendInt(b, h.TotalCount(), 10)
	b = append(b, '\n')
	gauge("mockllm_emit_lag_max_nanoseconds", "Largest emit lag seen.", h.Max())

	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(b)
}

func appendSeconds(b []byte, ns int64) []byte {
	return strconv.AppendFloat(b, float64(ns)/1e9, 'g', -1, 64)
}
