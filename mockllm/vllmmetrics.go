package mockllm

import (
	"net/http"
	"strconv"
	"sync"
	"time"
)

// vLLM's /metrics page as its OpenAI server exposes it (Options.VLLMMetrics): what a scraper
// pointed at a real vLLM parses every interval. vLLM's V1 engine registers its families with
// prometheus_client (vllm/v1/metrics/loggers.py), labelled model_name and engine; the
// server adds prometheus_fastapi_instrumentator's http_* families and prometheus_client's
// process_* and python_* collectors. prometheus_client writes a _created sample beside every
// counter and histogram. The page holds the same families, labels, bucket bounds and _created
// lines, about 1,000 sample lines and 100 kB for one model, so that the scraper's cost is
// measured on the page it meets in production. The values follow the mock's own counters:
// the latency histograms are the mock's TTFT and end-to-end histograms (the phase histograms
// vLLM splits them into are derived from them), the token histograms count every request in
// the bucket of the mean prompt or output length, the HTTP families count the requests served.

// vLLM's bucket bounds (vllm/v1/metrics/loggers.py, max_model_len 40,960 for the 1-2-5 ones).
var (
	vllmTokenBounds     = []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000}
	vllmIterationBounds = []float64{1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}
	vllmNBounds         = []float64{1, 2, 5, 10, 20}
	vllmITLBounds       = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80}
	vllmRequestBounds   = []float64{0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680}
	vllmKVBlockBounds   = []float64{0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800}
	httpHighrBounds     = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 7.5, 10, 30, 60}
	httpBounds          = []float64{0.1, 0.5, 1}
)

// vllmHandlers are the routes prometheus_fastapi_instrumentator labels (handler).
var vllmHandlers = []string{"/v1/chat/completions", "/v1/completions", "/v1/models", "/health", "/metrics", "/v1/embeddings", "/tokenize", "/version"}

// vllmPage builds the page; pool keeps its buffer between scrapes.
type vllmPage struct {
	b       []byte
	labels  string // `engine="0",model_name="..."`
	created string // the _created value of every family: the server's start, in seconds
}

var vllmPages = sync.Pool{New: func() any { return &vllmPage{b: make([]byte, 0, 160<<10)} }}

func (p *vllmPage) head(name, help, typ string) {
	p.b = append(p.b, "# HELP "...)
	p.b = append(p.b, name...)
	p.b = append(p.b, ' ')
	p.b = append(p.b, help...)
	p.b = append(p.b, "\n# TYPE "...)
	p.b = append(p.b, name...)
	p.b = append(p.b, ' ')
	p.b = append(p.b, typ...)
	p.b = append(p.b, '\n')
}

// sample appends name{labels[,extra]} v.
func (p *vllmPage) sample(name, labels, extra string, v float64) {
	p.b = append(p.b, name...)
	if labels != "" || extra != "" {
		p.b = append(p.b, '{')
		p.b = append(p.b, labels...)
		if labels != "" && extra != "" {
			p.b = append(p.b, ',')
		}
		p.b = append(p.b, extra...)
		p.b = append(p.b, '}')
	}
	p.b = append(p.b, ' ')
	p.b = appendPyFloat(p.b, v)
	p.b = append(p.b, '\n')
}

// appendPyFloat writes v as prometheus_client does (Python's repr of a float: 1.0, 0.25, 1e-05).
func appendPyFloat(b []byte, v float64) []byte {
	n := len(b)
	b = strconv.AppendFloat(b, v, 'g', -1, 64)
	for _, c := range b[n:] {
		if c == '.' || c == 'e' || c == 'I' || c == 'N' {
			return b
		}
	}
	return append(b, ".0"...)
}

// counter appends a counter as prometheus_client does: the family named name_total, then
// its _created samples as a gauge family of their own.
func (p *vllmPage) counter(name, help, labels string, v float64) {
	p.head(name+"_total", help, "counter")
	p.sample(name+"_total", labels, "", v)
	p.createdFamily(name, help, labels)
}

// createdFamily appends name_created, one sample per label set in extras ("" for none).
func (p *vllmPage) createdFamily(name, help, labels string, extras ...string) {
	p.head(name+"_created", help, "gauge")
	if len(extras) == 0 {
		extras = []string{""}
	}
	for _, x := range extras {
		p.b = append(p.b, name...)
		p.b = append(p.b, "_created"...)
		if labels != "" || x != "" {
			p.b = append(p.b, '{')
			p.b = append(p.b, labels...)
			if labels != "" && x != "" {
				p.b = append(p.b, ',')
			}
			p.b = append(p.b, x...)
			p.b = append(p.b, '}')
		}
		p.b = append(p.b, ' ')
		p.b = append(p.b, p.created...)
		p.b = append(p.b, '\n')
	}
}

func (p *vllmPage) gauge(name, help, labels string, v float64) {
	p.head(name, help, "gauge")
	p.sample(name, labels, "", v)
}

// histogram appends a histogram whose non-cumulative bucket counts are counts (the last
// +Inf), with sum.
func (p *vllmPage) histogram(name, help, labels string, bounds []float64, counts []uint64, sum float64) {
	p.head(name, help, "histogram")
	p.histogramSamples(name, labels, bounds, counts, sum)
	p.createdFamily(name, help, labels)
}

func (p *vllmPage) histogramSamples(name, labels string, bounds []float64, counts []uint64, sum float64) {
	var cum uint64
	le := make([]byte, 0, 32)
	for i := 0; i <= len(bounds); i++ {
		if i < len(counts) {
			cum += counts[i]
		}
		le = append(le[:0], `le="`...)
		if i < len(bounds) {
			le = appendPyFloat(le, bounds[i])
		} else {
			le = append(le, "+Inf"...)
		}
		le = append(le, '"')
		p.sample(name+"_bucket", labels, string(le), float64(cum))
	}
	p.sample(name+"_count", labels, "", float64(cum))
	p.sample(name+"_sum", labels, "", sum)
}

// rebucket spreads a histogram over secondsBounds (counts, not cumulative) onto bounds,
// each bucket's count at its upper bound scaled by f (a phase's share of the latency).
func rebucket(h *secondsHist, bounds []float64, f float64) ([]uint64, float64, uint64) {
	out := make([]uint64, len(bounds)+1)
	var n uint64
	for i := range h.buckets {
		c := h.buckets[i].Load()
		if c == 0 {
			continue
		}
		n += c
		v := 1e9 // +Inf
		if i < len(secondsBounds) {
			v = secondsBounds[i] * f
		}
		j := 0
		for j < len(bounds) && v > bounds[j] {
			j++
		}
		out[j] += c
	}
	return out, float64(h.sumNs.Load()) / 1e9 * f, n
}

// oneBucket counts n requests in the bucket of their mean value.
func oneBucket(bounds []float64, n uint64, mean float64) []uint64 {
	out := make([]uint64, len(bounds)+1)
	j := 0
	for j < len(bounds) && mean > bounds[j] {
		j++
	}
	out[j] = n
	return out
}

// serveVLLMMetrics writes vLLM's page (format 0.0.4, as prometheus_client serves it).
func (s *Server) serveVLLMMetrics(w http.ResponseWriter, r *http.Request) {
	p := vllmPages.Get().(*vllmPage)
	defer vllmPages.Put(p)
	p.b = p.b[:0]
	m := &s.m
	p.labels = `engine="0",model_name=` + strconv.Quote(s.opts.Model)
	p.created = strconv.FormatFloat(float64(m.started.UnixNano())/1e9, 'f', 6, 64)
	L := p.labels

	// prometheus_client's own collectors.
	p.head("python_gc_objects_collected_total", "Objects collected during gc", "counter")
	// Python's collector's figures grow with the work done (no ReadMemStats: it stops the
	// world, and the mock's streams with it).
	nGC := m.scrapes.Load() + m.genTokens.Load()/64
	for g, f := range []uint64{nGC * 131, nGC * 17, nGC} {
		p.sample("python_gc_objects_collected_total", "", `generation="`+strconv.Itoa(g)+`"`, float64(f))
	}
	p.head("python_gc_objects_uncollectable_total", "Uncollectable objects found during GC", "counter")
	for g := range 3 {
		p.sample("python_gc_objects_uncollectable_total", "", `generation="`+strconv.Itoa(g)+`"`, 0)
	}
	p.head("python_gc_collections_total", "Number of times this generation was collected", "counter")
	for g, f := range []uint64{nGC * 9, nGC, nGC / 9} {
		p.sample("python_gc_collections_total", "", `generation="`+strconv.Itoa(g)+`"`, float64(f))
	}
	p.head("python_info", "Python platform information", "gauge")
	p.sample("python_info", "", `implementation="CPython",major="3",minor="12",patchlevel="11",version="3.12.11"`, 1)
	p.gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.", "", float64(9<<30+m.kvHeld.Load()*4096))
	p.gauge("process_resident_memory_bytes", "Resident memory size in bytes.", "", float64(3<<30+m.kvHeld.Load()*1024))
	p.gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", "", float64(m.started.Unix()))
	p.head("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", "counter")
	p.sample("process_cpu_seconds_total", "", "", time.Since(m.started).Seconds()/10)
	p.gauge("process_open_fds", "Number of open file descriptors.", "", float64(m.running.Load()+32))
	p.gauge("process_max_fds", "Maximum number of open file descriptors.", "", 1048576)

	// The engine's state.
	running, waiting := m.running.Load(), m.waiting.Load()
	kvCap := int64(s.opts.KVCacheTokens)
	if kvCap <= 0 {
		kvCap = DefaultKVCacheTokens
	}
	p.gauge("vllm:num_requests_running", "Number of requests in model execution batches.", L, float64(running))
	p.gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", L, float64(waiting))
	p.gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", L, min(float64(max(m.kvHeld.Load(), 0))/float64(kvCap), 1))
	p.gauge("vllm:gpu_cache_usage_perc", "GPU KV-cache usage. 1 means 100 percent usage.", L, min(float64(max(m.kvHeld.Load(), 0))/float64(kvCap), 1))
	p.counter("vllm:gpu_prefix_cache_queries", "GPU prefix cache queries, in terms of number of queried tokens.", L, float64(s.prefix.queries.Load()))
	p.counter("vllm:gpu_prefix_cache_hits", "GPU prefix cache hits, in terms of number of cached tokens.", L, float64(s.prefix.hits.Load()))
	p.counter("vllm:prefix_cache_queries", "Prefix cache queries, in terms of number of queried tokens.", L, float64(s.prefix.queries.Load()))
	p.counter("vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.", L, float64(s.prefix.hits.Load()))
	p.counter("vllm:num_preemptions", "Cumulative number of preemption from the engine.", L, 0)
	gen, prompt := m.genTokens.Load(), m.promptTokens.Load()
	p.counter("vllm:prompt_tokens", "Number of prefill tokens processed.", L, float64(prompt))
	p.counter("vllm:generation_tokens", "Number of generation tokens processed.", L, float64(gen))

	_, _, done := rebucket(&m.e2e, vllmRequestBounds, 1)
	reasons := []string{`finished_reason="stop"`, `finished_reason="length"`, `finished_reason="abort"`}
	p.head("vllm:request_success_total", "Count of successfully processed requests.", "counter")
	for _, reason := range reasons {
		v := 0.0
		if reason == `finished_reason="length"` {
			v = float64(done)
		}
		p.sample("vllm:request_success_total", L, reason, v)
	}
	p.createdFamily("vllm:request_success", "Count of successfully processed requests.", L, reasons...)
	p.head("vllm:num_requests_waiting_by_reason", "Number of requests waiting, by reason.", "gauge")
	for _, reason := range []string{`reason="capacity"`, `reason="deferred"`} {
		p.sample("vllm:num_requests_waiting_by_reason", L, reason, 0)
	}
	p.head("vllm:engine_sleep_state", "Engine sleep state; awake = 0 means engine is sleeping.", "gauge")
	for i, st := range []string{`sleep_state="awake"`, `sleep_state="weights_offloaded"`, `sleep_state="discard_all"`} {
		p.sample("vllm:engine_sleep_state", L, st, float64(1-min(i, 1)))
	}
	p.counter("vllm:mm_cache_queries", "Multi-modal cache queries, in terms of number of queried items.", L, 0)
	p.counter("vllm:mm_cache_hits", "Multi-modal cache hits, in terms of number of cached items.", L, 0)
	p.counter("vllm:external_prefix_cache_queries", "External prefix cache queries from KV connector cross-instance cache sharing, in terms of number of queried tokens.", L, 0)
	p.counter("vllm:external_prefix_cache_hits", "External prefix cache hits from KV connector cross-instance cache sharing, in terms of number of cached tokens.", L, 0)
	p.counter("vllm:corrupted_requests", "Corrupted requests, in terms of total number of requests with NaNs in logits.", L, 0)

	var reqs uint64
	for i := range m.requests {
		reqs += m.requests[i].Load()
	}
	meanPrompt, meanGen := 0.0, 0.0
	if reqs > 0 {
		meanPrompt, meanGen = float64(prompt)/float64(reqs), float64(gen)/float64(reqs)
	}
	p.histogram("vllm:request_prompt_tokens", "Number of prefill tokens processed.", L, vllmTokenBounds, oneBucket(vllmTokenBounds, done, meanPrompt), meanPrompt*float64(done))
	p.histogram("vllm:request_generation_tokens", "Number of generation tokens processed.", L, vllmTokenBounds, oneBucket(vllmTokenBounds, done, meanGen), meanGen*float64(done))
	p.histogram("vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.", L, vllmIterationBounds, oneBucket(vllmIterationBounds, gen, float64(max(running, 1))), float64(gen+prompt))
	p.histogram("vllm:request_max_num_generation_tokens", "Histogram of maximum number of requested generation tokens.", L, vllmTokenBounds, oneBucket(vllmTokenBounds, done, meanGen), meanGen*float64(done))
	p.histogram("vllm:request_params_n", "Histogram of the n request parameter.", L, vllmNBounds, oneBucket(vllmNBounds, done, 1), float64(done))
	p.histogram("vllm:request_params_max_tokens", "Histogram of the max_tokens request parameter.", L, vllmTokenBounds, oneBucket(vllmTokenBounds, done, meanGen), meanGen*float64(done))

	c, sum, _ := rebucket(&m.ttft, secondsBounds[:], 1)
	p.histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", L, secondsBounds[:], c, sum)
	itl := 0.0
	if meanGen > 1 {
		_, e2eSum, _ := rebucket(&m.e2e, vllmRequestBounds, 1)
		_, ttftSum, _ := rebucket(&m.ttft, secondsBounds[:], 1)
		if done > 0 {
			itl = max(e2eSum-ttftSum, 0) / float64(done) / (meanGen - 1)
		}
	}
	tokens := uint64(0)
	if meanGen > 1 {
		tokens = uint64(float64(done) * (meanGen - 1))
	}
	p.histogram("vllm:time_per_output_token_seconds", "Histogram of time per output token in seconds.", L, vllmITLBounds, oneBucket(vllmITLBounds, tokens, itl), itl*float64(tokens))
	p.histogram("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", L, vllmITLBounds, oneBucket(vllmITLBounds, tokens, itl), itl*float64(tokens))
	for _, ph := range []struct {
		name, help string
		share      float64
	}{
		{"vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", 1},
		{"vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", 0.01},
		{"vllm:request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.", 0.99},
		{"vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.", 0.1},
		{"vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.", 0.89},
	} {
		c, sum, _ := rebucket(&m.e2e, vllmRequestBounds, ph.share)
		p.histogram(ph.name, ph.help, L, vllmRequestBounds, c, sum)
	}
	c, sum, _ = rebucket(&m.e2e, vllmITLBounds, 1/max(meanGen, 1))
	p.histogram("vllm:request_time_per_output_token_seconds", "Histogram of time_per_output_token_seconds per request.", L, vllmITLBounds, c, sum)
	p.histogram("vllm:request_prefill_kv_computed_tokens", "Histogram of new KV tokens computed during prefill (excluding cached tokens).", L, vllmTokenBounds, oneBucket(vllmTokenBounds, done, meanPrompt), meanPrompt*float64(done))
	for _, kv := range []struct{ name, help string }{
		{"vllm:kv_block_lifetime_seconds", "Histogram of KV cache block lifetime from allocation to eviction. Sampled metrics (controlled by --kv-cache-metrics-sample)."},
		{"vllm:kv_block_idle_before_evict_seconds", "Histogram of idle time before KV cache block eviction. Sampled metrics (controlled by --kv-cache-metrics-sample)."},
		{"vllm:kv_block_reuse_gap_seconds", "Histogram of time gaps between consecutive KV cache block accesses. Only the first 4 accesses are tracked, plus the last access before eviction. Sampled metrics (controlled by --kv-cache-metrics-sample)."},
	} {
		c, sum, _ := rebucket(&m.e2e, vllmKVBlockBounds, 1)
		p.histogram(kv.name, kv.help, L, vllmKVBlockBounds, c, sum)
	}
	p.head("vllm:cache_config_info", "Information of the LLMEngine CacheConfig", "gauge")
	p.sample("vllm:cache_config_info", "", `block_size="16",cache_dtype="auto",calculate_kv_scales="False",cpu_offload_gb="0",enable_prefix_caching="True",engine="0",gpu_memory_utilization="0.9",is_attention_free="False",num_cpu_blocks="None",num_gpu_blocks="`+strconv.FormatInt(kvCap/16, 10)+`",num_gpu_blocks_override="None",prefix_caching_hash_algo="builtin",sliding_window="None",swap_space="4",swap_space_bytes="4294967296"`, 1)
	p.head("vllm:lora_requests_info", "Running stats on lora requests.", "gauge")
	p.sample("vllm:lora_requests_info", "", `max_lora="0",running_lora_adapters="",waiting_lora_adapters=""`, float64(m.started.Unix()))

	// prometheus_fastapi_instrumentator's families, per route.
	served := func(h string) uint64 {
		switch h {
		case "/v1/chat/completions":
			return m.requests[apiChat].Load()
		case "/v1/completions":
			return m.requests[apiCompletions].Load()
		case "/metrics":
			return m.scrapes.Load()
		}
		return 0
	}
	var httpLabels []string
	for _, h := range vllmHandlers {
		for _, st := range []string{"2xx", "4xx"} {
			httpLabels = append(httpLabels, `handler="`+h+`",method="`+vllmMethod(h)+`",status="`+st+`"`)
		}
	}
	p.head("http_requests_total", "Total number of requests by method, status and handler.", "counter")
	for i, hl := range httpLabels {
		v := 0.0
		if i%2 == 0 {
			v = float64(served(vllmHandlers[i/2]))
		}
		p.sample("http_requests_total", "", hl, v)
	}
	p.createdFamily("http_requests", "Total number of requests by method, status and handler.", "", httpLabels...)
	for _, fam := range []struct{ name, help string }{
		{"http_request_size_bytes", "Content length of incoming requests by handler. Only value of header is respected. Otherwise ignored. No percentile calculated. "},
		{"http_response_size_bytes", "Content length of outgoing responses by handler. Only value of header is respected. Otherwise ignored. No percentile calculated. "},
	} {
		p.head(fam.name, fam.help, "summary")
		for _, h := range vllmHandlers {
			n := float64(served(h))
			hl := `handler="` + h + `"`
			p.sample(fam.name+"_count", hl, "", n)
			p.sample(fam.name+"_sum", hl, "", n*700)
		}
		var hls []string
		for _, h := range vllmHandlers {
			hls = append(hls, `handler="`+h+`"`)
		}
		p.createdFamily(fam.name, fam.help, "", hls...)
	}
	p.head("http_request_duration_highr_seconds", "Latency with many buckets but no API specific labels. Made for more accurate percentile calculations. ", "histogram")
	var all uint64
	for _, h := range vllmHandlers {
		all += served(h)
	}
	hc, hs, _ := rebucket(&m.e2e, httpHighrBounds, 1)
	hc[0] += all - min(all, done)
	p.histogramSamples("http_request_duration_highr_seconds", "", httpHighrBounds, hc, hs)
	p.createdFamily("http_request_duration_highr_seconds", "Latency with many buckets but no API specific labels. Made for more accurate percentile calculations. ", "")
	p.head("http_request_duration_seconds", "Latency with only few buckets by handler. Made to be only used if aggregation by handler is important. ", "histogram")
	for _, h := range vllmHandlers {
		hl := `handler="` + h + `",method="` + vllmMethod(h) + `"`
		n := served(h)
		var c []uint64
		var sum float64
		if h == "/v1/chat/completions" || h == "/v1/completions" {
			c, sum, _ = rebucket(&m.e2e, httpBounds, float64(n)/float64(max(reqs, 1)))
		} else {
			c, sum = oneBucket(httpBounds, n, 0.001), float64(n)*0.001
		}
		p.histogramSamples("http_request_duration_seconds", hl, httpBounds, c, sum)
	}
	var hls []string
	for _, h := range vllmHandlers {
		hls = append(hls, `handler="`+h+`",method="`+vllmMethod(h)+`"`)
	}
	p.createdFamily("http_request_duration_seconds", "Latency with only few buckets by handler. Made to be only used if aggregation by handler is important. ", "", hls...)
	m.scrapes.Add(1)

	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(p.b)))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(p.b)
}

func vllmMethod(handler string) string {
	if handler == "/v1/chat/completions" || handler == "/v1/completions" || handler == "/v1/embeddings" || handler == "/tokenize" {
		return "POST"
	}
	return "GET"
}
