package servermetrics

import "strings"

// Kinds of stable metrics.
const (
	KindGauge     = "gauge"     // statistics over the scrapes
	KindCounter   = "counter"   // a rate over the window
	KindHistogram = "histogram" // quantile estimates from the bucket increases
)

// Agg says how the series of one family on one endpoint (several models, engines or label
// sets) combine into the stable metric's one value per scrape.
type Agg int

const (
	// AggSum adds them: requests, tokens, histogram buckets.
	AggSum Agg = iota
	// AggMean averages them: ratios such as the KV-cache usage.
	AggMean
)

// Mapping maps one server's metric family to a stable name.
type Mapping struct {
	// Stable is the stable name ("kv_cache_usage"): gates say server.<Stable>.<stat>.
	Stable string
	// Family is the family name as exposed, without a counter's _total suffix.
	Family string
	// Server names who exposes it: vllm, sglang, tgi, trtllm, dynamo, triton, llm-d, mockllm.
	Server string
	Kind   string
	// Scale converts the exposed value to Unit (seconds → ms is 1000, µs → ms 0.001).
	Scale float64
	Unit  string
	Agg   Agg
}

// Mappings is the family table of docs/metrics.md ("Server metrics"), in its order. A
// stable name can have several families; a page exposing more than one of them (vLLM and
// its llm-d gateway) reports the first one present.
var Mappings = []Mapping{
	{"requests_running", "vllm:num_requests_running", "vllm", KindGauge, 1, "requests", AggSum},
	{"requests_running", "sglang:num_running_reqs", "sglang", KindGauge, 1, "requests", AggSum},
	{"requests_running", "dynamo_frontend_inflight_requests", "dynamo", KindGauge, 1, "requests", AggSum},

	{"requests_waiting", "vllm:num_requests_waiting", "vllm", KindGauge, 1, "requests", AggSum},
	{"requests_waiting", "sglang:num_queue_reqs", "sglang", KindGauge, 1, "requests", AggSum},
	{"requests_waiting", "tgi_queue_size", "tgi", KindGauge, 1, "requests", AggSum},
	{"requests_waiting", "dynamo_frontend_queued_requests", "dynamo", KindGauge, 1, "requests", AggSum},
	{"requests_waiting", "nv_inference_pending_request_count", "triton", KindGauge, 1, "requests", AggSum},
	{"requests_waiting", "inference_pool_average_queue_size", "llm-d", KindGauge, 1, "requests", AggMean},

	{"kv_cache_usage", "vllm:kv_cache_usage_perc", "vllm", KindGauge, 1, "ratio", AggMean},
	{"kv_cache_usage", "vllm:gpu_cache_usage_perc", "vllm", KindGauge, 1, "ratio", AggMean},
	{"kv_cache_usage", "sglang:token_usage", "sglang", KindGauge, 1, "ratio", AggMean},
	{"kv_cache_usage", "dynamo_component_gpu_cache_usage_percent", "dynamo", KindGauge, 1, "ratio", AggMean},
	{"kv_cache_usage", "inference_pool_average_kv_cache_utilization", "llm-d", KindGauge, 1, "ratio", AggMean},

	{"preemptions", "vllm:num_preemptions", "vllm", KindCounter, 1, "preemptions/s", AggSum},
	{"preemptions", "sglang:num_retractions", "sglang", KindCounter, 1, "preemptions/s", AggSum},

	{"prefix_cache_hit_rate", "sglang:cache_hit_rate", "sglang", KindGauge, 1, "ratio", AggMean},
	{"prefix_cache_hits", "vllm:prefix_cache_hits", "vllm", KindCounter, 1, "tokens/s", AggSum},
	{"prefix_cache_queries", "vllm:prefix_cache_queries", "vllm", KindCounter, 1, "tokens/s", AggSum},

	{"batch_size", "tgi_batch_current_size", "tgi", KindGauge, 1, "requests", AggSum},
	{"batch_tokens", "vllm:iteration_tokens_total", "vllm", KindHistogram, 1, "tokens", AggSum},

	{"generation_tokens", "vllm:generation_tokens", "vllm", KindCounter, 1, "tokens/s", AggSum},
	{"generation_tokens", "sglang:generation_tokens", "sglang", KindCounter, 1, "tokens/s", AggSum},
	{"prompt_tokens", "vllm:prompt_tokens", "vllm", KindCounter, 1, "tokens/s", AggSum},
	{"prompt_tokens", "sglang:prompt_tokens", "sglang", KindCounter, 1, "tokens/s", AggSum},
	{"generation_throughput", "sglang:gen_throughput", "sglang", KindGauge, 1, "tokens/s", AggSum},

	{"requests_completed", "vllm:request_success", "vllm", KindCounter, 1, "requests/s", AggSum},
	{"requests_completed", "tgi_request_success", "tgi", KindCounter, 1, "requests/s", AggSum},
	{"requests_completed", "trtllm_request_success", "trtllm", KindCounter, 1, "requests/s", AggSum},
	{"requests_completed", "nv_inference_request_success", "triton", KindCounter, 1, "requests/s", AggSum},
	{"requests_completed", "dynamo_frontend_requests", "dynamo", KindCounter, 1, "requests/s", AggSum},

	{"server_ttft", "vllm:time_to_first_token_seconds", "vllm", KindHistogram, 1000, "ms", AggSum},
	{"server_ttft", "sglang:time_to_first_token_seconds", "sglang", KindHistogram, 1000, "ms", AggSum},
	{"server_ttft", "dynamo_frontend_time_to_first_token_seconds", "dynamo", KindHistogram, 1000, "ms", AggSum},
	{"server_ttft", "trtllm_time_to_first_token_seconds", "trtllm", KindHistogram, 1000, "ms", AggSum},

	{"server_itl", "vllm:inter_token_latency_seconds", "vllm", KindHistogram, 1000, "ms", AggSum},
	{"server_itl", "vllm:time_per_output_token_seconds", "vllm", KindHistogram, 1000, "ms", AggSum},
	{"server_itl", "sglang:inter_token_latency_seconds", "sglang", KindHistogram, 1000, "ms", AggSum},
	{"server_itl", "sglang:time_per_output_token_seconds", "sglang", KindHistogram, 1000, "ms", AggSum},
	{"server_itl", "dynamo_frontend_inter_token_latency_seconds", "dynamo", KindHistogram, 1000, "ms", AggSum},
	{"server_itl", "trtllm_time_per_output_token_seconds", "trtllm", KindHistogram, 1000, "ms", AggSum},
	{"server_itl", "tgi_request_mean_time_per_token_duration", "tgi", KindHistogram, 1000, "ms", AggSum},

	{"server_e2e_latency", "vllm:e2e_request_latency_seconds", "vllm", KindHistogram, 1000, "ms", AggSum},
	{"server_e2e_latency", "sglang:e2e_request_latency_seconds", "sglang", KindHistogram, 1000, "ms", AggSum},
	{"server_e2e_latency", "dynamo_frontend_request_duration_seconds", "dynamo", KindHistogram, 1000, "ms", AggSum},
	{"server_e2e_latency", "trtllm_e2e_request_latency_seconds", "trtllm", KindHistogram, 1000, "ms", AggSum},
	{"server_e2e_latency", "tgi_request_duration", "tgi", KindHistogram, 1000, "ms", AggSum},

	{"server_queue_time", "vllm:request_queue_time_seconds", "vllm", KindHistogram, 1000, "ms", AggSum},
	{"server_queue_time", "sglang:queue_time_seconds", "sglang", KindHistogram, 1000, "ms", AggSum},
	{"server_queue_time", "trtllm_request_queue_time_seconds", "trtllm", KindHistogram, 1000, "ms", AggSum},
	{"server_queue_time", "tgi_request_queue_duration", "tgi", KindHistogram, 1000, "ms", AggSum},
}

// FamilyKey is a family name as Mappings spells it: a counter's _total suffix removed, and
// TensorRT-LLM's older "trtllm:" prefix (Dynamo before 0.8) spelt "trtllm_".
func FamilyKey(family string) string {
	family = strings.TrimSuffix(family, "_total")
	if rest, ok := strings.CutPrefix(family, "trtllm:"); ok {
		family = "trtllm_" + rest
	}
	return family
}

var byFamily = func() map[string]int {
	m := make(map[string]int, len(Mappings))
	for i, x := range Mappings {
		m[x.Family] = i
	}
	return m
}()

// Lookup returns the mapping of a family name as exposed (FamilyKey applied) and its rank in
// Mappings (a lower rank wins when a page has several families of one stable name).
func Lookup(family string) (Mapping, int, bool) {
	i, ok := byFamily[FamilyKey(family)]
	if !ok {
		// vllm:iteration_tokens_total is a histogram whose family keeps its _total.
		i, ok = byFamily[family]
	}
	if !ok {
		return Mapping{}, 0, false
	}
	return Mappings[i], i, true
}

// StableNames lists the stable names in table order, once each.
func StableNames() []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range Mappings {
		if !seen[m.Stable] {
			seen[m.Stable] = true
			out = append(out, m.Stable)
		}
	}
	return out
}
