package analyze

// The metric catalog: every metric analyze can report, with its tag, display name, unit and
// origin. Exports and the console are driven by this table, so adding a metric is one entry
// here plus the line that computes it. docs/metrics.md documents each entry; a test checks
// that every tag appears there.

// Kind says how a metric is computed, following AIPerf's three types.
type Kind uint8

const (
	// Record metrics have one value per request (or several, for pooled gaps) and report a
	// distribution.
	Record Kind = iota + 1
	// Aggregate metrics are counts or totals over the run: a single value.
	Aggregate
	// Derived metrics are formulas over other results: a single value.
	Derived
)

// Origin says whose definition a metric follows.
type Origin uint8

const (
	// OriginAIPerf metrics reproduce AIPerf's tag, unit and formula.
	OriginAIPerf Origin = iota + 1
	// OriginOurs metrics are this tool's own (schedule fidelity, client health).
	OriginOurs
	// OriginVLLM, OriginGuidellm, OriginGenAIPerf and OriginLLMPerf are peer tools'
	// definitions, reported under their own tags so users can compare like with like.
	OriginVLLM
	OriginGuidellm
	OriginGenAIPerf
	OriginLLMPerf
)

var originNames = [...]string{"", "aiperf", "llmbench", "vllm", "guidellm", "genai-perf", "llmperf"}

// String returns the origin's name.
func (o Origin) String() string {
	if int(o) < len(originNames) {
		return originNames[o]
	}
	return "?"
}

// MetricID indexes the catalog.
type MetricID int

// Record metrics (per request). Times are kept in nanoseconds and shown in milliseconds.
const (
	MTimeToFirstToken MetricID = iota
	MTimeToSecondToken
	MTimeToFirstOutputToken
	MRequestLatency
	MInterTokenLatency
	MInterChunkLatency
	MOutputTokenThroughputPerUser
	ME2EOutputTokenThroughput
	MPrefillThroughputPerUser
	MOutputSequenceLength
	MInputSequenceLength
	MOutputTokenCount
	MReasoningTokenCount
	MUsagePromptTokens
	MUsageCompletionTokens
	MUsageTotalTokens
	MUsageReasoningTokens
	MUsagePromptCacheReadTokens
	MUsagePromptTokensDiffPct
	MUsageCompletionTokensDiffPct
	MUsageReasoningTokensDiffPct
	MOSLMismatchDiffPct
	MErrorISL
	MStreamSetupLatency
	MHTTPReqConnecting
	MHTTPReqSending
	MHTTPReqWaiting
	MHTTPReqReceiving
	MHTTPReqDuration
	MHTTPReqDataSent
	MHTTPReqDataReceived
	MHTTPReqChunksReceived
	MHTTPReqConnectionReused
	MScheduleLag
	MDispatchLag
	MSlotWait
	MCorrectedTimeToFirstToken
	MCorrectedRequestLatency
	MEventsPerRead
	MVLLMTimePerOutputToken
	MGuidellmInterTokenLatency
	MGuidellmTimePerOutputToken
	MLLMPerfInterTokenLatency
	MItemCount
	MWorkerCPUUtilization
	// Multimodal (AIPerf §5.6; analyze/multimodal.go).
	MNumImages
	MImageThroughput
	MImageLatency
	MAudioDuration
	MRTFX
	MUsagePromptAudioTokens
	MUsageCompletionAudioTokens

	// Aliases: the same values as another record metric under a peer's name.
	MVLLMInterTokenLatency
	MGenAIPerfTimeToFirstToken

	// Single-value metrics.
	MRequestCount
	MErrorRequestCount
	MGoodRequestCount
	MGoodput
	MGoodRequestFraction
	MBenchmarkDuration
	MRequestThroughput
	MOutputTokenThroughput
	MTotalTokenThroughput
	MItemThroughput
	MTotalISL
	MTotalOSL
	MTotalOutputTokens
	MTotalReasoningTokens
	MTotalErrorISL
	MMinRequestTimestamp
	MMaxResponseTimestamp
	MOSLMismatchCount
	MUsageDiscrepancyCount
	MTotalUsagePromptTokens
	MTotalUsageCompletionTokens
	MTotalUsageTotalTokens
	MTotalUsageReasoningTokens
	MWarmupRequestCount
	MLostRequestCount
	MOfferedRequestRate
	MDispatchedRequestRate
	MCompletedRequestRate
	MSameReadChunkGapCount
	MSameReadChunkGapPct
	MMaxWorkerCPUUtilization
	MTotalGPUPower
	MTotalGPUEnergy
	MOutputTokensPerJoule
	MEnergyPerUser

	numMetrics
)

// numRecord is the number of record metrics with their own values (aliases excluded).
const numRecord = int(MUsageCompletionAudioTokens) + 1

// MetricDef describes one metric.
type MetricDef struct {
	ID     MetricID
	Tag    string // AIPerf-style tag, e.g. "time_to_first_token"
	Header string // display name, e.g. "Time to First Token"
	Unit   string // display unit, e.g. "ms"
	Kind   Kind
	Origin Origin
	// Console metrics appear in the console table (when they have a value).
	Console bool
	// LargerIsBetter gives the direction of goodput SLOs.
	LargerIsBetter bool
	// Int marks metrics whose values are whole numbers: per-request token counts, and the
	// single-value counts, token totals and timestamps (written as integers in the CSV, as
	// AIPerf writes its integer metrics).
	Int bool
	// Alias, for MVLLMInterTokenLatency and MGenAIPerfTimeToFirstToken, is the metric whose
	// values this one reports.
	Alias MetricID
	// div converts a stored value into the display unit by division (ns → ms is 1e6), which
	// keeps whole-microsecond times exact in milliseconds (20600000 ns is 20.6 ms).
	div float64
	// hdrScale converts a stored value into the integer HdrHistogram records once a
	// distribution is too large to keep exactly (1 for ns and tokens, 1000 for rates).
	hdrScale float64
	// order sorts the console table.
	order int
}

// Divisors from stored nanoseconds to display units.
const (
	nsToMs  = 1e6
	nsToSec = 1e9
)

const (
	unitMs        = "ms"
	unitTokens    = "tokens"
	unitTPSUser   = "tokens/sec/user"
	unitTPS       = "tokens/sec"
	unitRPS       = "requests/sec"
	unitRequests  = "requests"
	unitPct       = "%"
	unitBytes     = "bytes"
	unitNs        = "ns"
	unitSec       = "sec"
	unitCount     = "count"
	unitEvents    = "events"
	unitWatts     = "W"
	unitJoules    = "J"
	unitTokPerJ   = "tokens/J"
	unitJPerUser  = "J/user"
	unitRatio     = "ratio"
	unitChunkGaps = "gaps"
	unitItems     = "items"
	unitIPS       = "items/sec"
)

// catalog holds every metric, indexed by MetricID.
var catalog = func() [numMetrics]MetricDef {
	var c [numMetrics]MetricDef
	rec := func(id MetricID, tag, header, unit string, origin Origin, div, hdrScale float64, order int, console, larger, isInt bool) {
		c[id] = MetricDef{ID: id, Tag: tag, Header: header, Unit: unit, Kind: Record, Origin: origin,
			Console: console, LargerIsBetter: larger, Int: isInt, div: div, hdrScale: hdrScale, order: order, Alias: -1}
	}
	one := func(id MetricID, kind Kind, tag, header, unit string, origin Origin, order int, console, larger bool) {
		c[id] = MetricDef{ID: id, Tag: tag, Header: header, Unit: unit, Kind: kind, Origin: origin,
			Console: console, LargerIsBetter: larger, div: 1, order: order, Alias: -1}
	}
	// count is a single value that is a whole number.
	count := func(id MetricID, kind Kind, tag, header, unit string, origin Origin, order int, console, larger bool) {
		one(id, kind, tag, header, unit, origin, order, console, larger)
		c[id].Int = true
	}
	const y, n = true, false
	a, o := OriginAIPerf, OriginOurs
	// Latencies (AIPerf §5.1, §5.2).
	rec(MTimeToFirstToken, "time_to_first_token", "Time to First Token", unitMs, a, nsToMs, 1, 100, y, n, n)
	rec(MTimeToSecondToken, "time_to_second_token", "Time to Second Token", unitMs, a, nsToMs, 1, 200, y, n, n)
	rec(MTimeToFirstOutputToken, "time_to_first_output_token", "Time to First Output Token", unitMs, a, nsToMs, 1, 250, y, n, n)
	rec(MRequestLatency, "request_latency", "Request Latency", unitMs, a, nsToMs, 1, 300, y, n, n)
	rec(MInterTokenLatency, "inter_token_latency", "Inter Token Latency", unitMs, a, nsToMs, 1, 400, y, n, n)
	rec(MInterChunkLatency, "inter_chunk_latency", "Inter Chunk Latency", unitMs, a, nsToMs, 1, 450, n, n, n)
	rec(MOutputTokenThroughputPerUser, "output_token_throughput_per_user", "Output Token Throughput Per User", unitTPSUser, a, 1, 1000, 500, y, y, n)
	rec(ME2EOutputTokenThroughput, "e2e_output_token_throughput", "E2E Output Token Throughput", unitTPSUser, a, 1, 1000, 510, n, y, n)
	rec(MPrefillThroughputPerUser, "prefill_throughput_per_user", "Prefill Throughput Per User", unitTPSUser, a, 1, 1000, 520, n, y, n)
	// Token counts (AIPerf §5.3, §5.4).
	rec(MOutputSequenceLength, "output_sequence_length", "Output Sequence Length", unitTokens, a, 1, 1, 600, y, y, y)
	rec(MInputSequenceLength, "input_sequence_length", "Input Sequence Length", unitTokens, a, 1, 1, 700, y, y, y)
	rec(MOutputTokenCount, "output_token_count", "Output Token Count", unitTokens, a, 1, 1, 610, n, y, y)
	rec(MReasoningTokenCount, "reasoning_token_count", "Reasoning Token Count", unitTokens, a, 1, 1, 620, n, y, y)
	rec(MUsagePromptTokens, "usage_prompt_tokens", "Usage Prompt Tokens", unitTokens, a, 1, 1, 1400, n, y, y)
	rec(MUsageCompletionTokens, "usage_completion_tokens", "Usage Completion Tokens", unitTokens, a, 1, 1, 1410, n, y, y)
	rec(MUsageTotalTokens, "usage_total_tokens", "Usage Total Tokens", unitTokens, a, 1, 1, 1420, n, y, y)
	rec(MUsageReasoningTokens, "usage_reasoning_tokens", "Usage Reasoning Tokens", unitTokens, a, 1, 1, 1430, n, y, y)
	rec(MUsagePromptCacheReadTokens, "usage_prompt_cache_read_tokens", "Usage Prompt Cache Read Tokens", unitTokens, a, 1, 1, 1440, n, y, y)
	rec(MUsagePromptTokensDiffPct, "usage_prompt_tokens_diff_pct", "Usage Prompt Tokens Difference", unitPct, a, 1, 1000, 1450, n, n, n)
	rec(MUsageCompletionTokensDiffPct, "usage_completion_tokens_diff_pct", "Usage Completion Tokens Difference", unitPct, a, 1, 1000, 1460, n, n, n)
	rec(MUsageReasoningTokensDiffPct, "usage_reasoning_tokens_diff_pct", "Usage Reasoning Tokens Difference", unitPct, a, 1, 1000, 1470, n, n, n)
	rec(MOSLMismatchDiffPct, "osl_mismatch_diff_pct", "OSL Mismatch Difference", unitPct, a, 1, 1000, 1480, n, n, n)
	rec(MErrorISL, "error_isl", "Error Input Sequence Length", unitTokens, a, 1, 1, 1490, n, y, y)
	// HTTP phases (AIPerf §5.9, k6 names).
	rec(MStreamSetupLatency, "stream_setup_latency", "Stream Setup Latency", unitMs, a, nsToMs, 1, 1500, n, n, n)
	rec(MHTTPReqConnecting, "http_req_connecting", "HTTP Request Connecting", unitMs, a, nsToMs, 1, 1505, n, n, n)
	rec(MHTTPReqSending, "http_req_sending", "HTTP Request Sending", unitMs, a, nsToMs, 1, 1510, n, n, n)
	rec(MHTTPReqWaiting, "http_req_waiting", "HTTP Request Waiting", unitMs, a, nsToMs, 1, 1520, n, n, n)
	rec(MHTTPReqReceiving, "http_req_receiving", "HTTP Request Receiving", unitMs, a, nsToMs, 1, 1530, n, n, n)
	rec(MHTTPReqDuration, "http_req_duration", "HTTP Request Duration", unitMs, a, nsToMs, 1, 1540, n, n, n)
	rec(MHTTPReqDataSent, "http_req_data_sent", "HTTP Request Data Sent", unitBytes, a, 1, 1, 1550, n, n, y)
	rec(MHTTPReqDataReceived, "http_req_data_received", "HTTP Request Data Received", unitBytes, a, 1, 1, 1560, n, n, y)
	rec(MHTTPReqChunksReceived, "http_req_chunks_received", "HTTP Request Chunks Received", unitCount, a, 1, 1, 1570, n, n, y)
	rec(MHTTPReqConnectionReused, "http_req_connection_reused", "HTTP Request Connection Reused", unitCount, a, 1, 1, 1580, n, n, y)
	// Schedule fidelity and client health (ours).
	rec(MScheduleLag, "schedule_lag", "Schedule Lag", unitMs, o, nsToMs, 1, 1000, y, n, n)
	rec(MDispatchLag, "dispatch_lag", "Dispatch Lag", unitMs, o, nsToMs, 1, 1010, y, n, n)
	rec(MSlotWait, "slot_wait", "Slot Wait", unitMs, o, nsToMs, 1, 1020, y, n, n)
	rec(MCorrectedTimeToFirstToken, "corrected_time_to_first_token", "Corrected Time to First Token", unitMs, o, nsToMs, 1, 1030, y, n, n)
	rec(MCorrectedRequestLatency, "corrected_request_latency", "Corrected Request Latency", unitMs, o, nsToMs, 1, 1040, y, n, n)
	rec(MEventsPerRead, "events_per_read", "Events Per Read", unitEvents, o, 1, 1, 1050, n, n, y)
	// Non-token endpoints (embeddings, rankings, images): what each response returned.
	rec(MItemCount, "item_count", "Item Count", unitItems, o, 1, 1, 1070, n, y, y)
	rec(MWorkerCPUUtilization, "worker_cpu_utilization", "Worker CPU Utilization", unitPct, o, 1, 1000, 1060, n, n, n)
	// Multimodal (AIPerf §5.6): from the plan's media entries and the request latency.
	rec(MNumImages, "num_images", "Number of Images", unitImages, a, 1, 1, 1600, y, y, y)
	rec(MImageThroughput, "image_throughput", "Image Throughput", unitImagesPS, a, 1, 1000, 1610, y, y, n)
	rec(MImageLatency, "image_latency", "Image Latency", unitMsPerImage, a, nsToMs, 1, 1620, y, n, n)
	rec(MAudioDuration, "audio_duration", "Audio Duration", unitSec, a, nsToSec, 1, 1630, y, y, n)
	rec(MRTFX, "rtfx", "RTFx", unitRatio, a, 1, 1000, 1640, y, y, n)
	rec(MUsagePromptAudioTokens, "usage_prompt_audio_tokens", "Usage Prompt Audio Tokens", unitTokens, a, 1, 1, 1442, n, y, y)
	rec(MUsageCompletionAudioTokens, "usage_completion_audio_tokens", "Usage Completion Audio Tokens", unitTokens, a, 1, 1, 1444, n, y, y)
	// Peers' definitions (named variants).
	rec(MVLLMTimePerOutputToken, "vllm_time_per_output_token", "vLLM Time per Output Token", unitMs, OriginVLLM, nsToMs, 1, 1200, n, n, n)
	rec(MGuidellmInterTokenLatency, "guidellm_inter_token_latency", "guidellm Inter Token Latency", unitMs, OriginGuidellm, nsToMs, 1, 1210, n, n, n)
	rec(MGuidellmTimePerOutputToken, "guidellm_time_per_output_token", "guidellm Time per Output Token", unitMs, OriginGuidellm, nsToMs, 1, 1220, n, n, n)
	rec(MLLMPerfInterTokenLatency, "llmperf_inter_token_latency", "llmperf Inter Token Latency", unitMs, OriginLLMPerf, nsToMs, 1, 1230, n, n, n)
	rec(MVLLMInterTokenLatency, "vllm_inter_token_latency", "vLLM Inter Token Latency", unitMs, OriginVLLM, nsToMs, 1, 1190, n, n, n)
	c[MVLLMInterTokenLatency].Alias = MInterChunkLatency
	rec(MGenAIPerfTimeToFirstToken, "genai_perf_time_to_first_token", "GenAI-Perf Time to First Token", unitMs, OriginGenAIPerf, nsToMs, 1, 1240, n, n, n)
	c[MGenAIPerfTimeToFirstToken].Alias = MTimeToFirstOutputToken

	// Single values (AIPerf §5.2, §5.3, §5.5, §5.7 and ours).
	one(MRequestThroughput, Derived, "request_throughput", "Request Throughput", unitRPS, a, 900, y, y)
	one(MOutputTokenThroughput, Derived, "output_token_throughput", "Output Token Throughput", unitTPS, a, 800, y, y)
	one(MTotalTokenThroughput, Derived, "total_token_throughput", "Total Token Throughput", unitTPS, a, 810, n, y)
	one(MItemThroughput, Derived, "item_throughput", "Item Throughput", unitIPS, o, 890, y, y)
	count(MRequestCount, Aggregate, "request_count", "Request Count", unitRequests, a, 910, y, y)
	count(MErrorRequestCount, Aggregate, "error_request_count", "Error Request Count", unitRequests, a, 920, y, n)
	count(MGoodRequestCount, Aggregate, "good_request_count", "Good Request Count", unitRequests, a, 930, y, y)
	one(MGoodput, Derived, "goodput", "Goodput", unitRPS, a, 940, y, y)
	one(MGoodRequestFraction, Derived, "good_request_fraction", "Good Request Fraction", unitRatio, a, 945, n, y)
	one(MBenchmarkDuration, Derived, "benchmark_duration", "Benchmark Duration", unitSec, a, 950, y, n)
	count(MTotalISL, Derived, "total_isl", "Total Input Sequence Length", unitTokens, a, 960, n, y)
	count(MTotalOSL, Derived, "total_osl", "Total Output Sequence Length", unitTokens, a, 961, n, y)
	count(MTotalOutputTokens, Derived, "total_output_tokens", "Total Output Tokens", unitTokens, a, 962, n, y)
	count(MTotalReasoningTokens, Derived, "total_reasoning_tokens", "Total Reasoning Tokens", unitTokens, a, 963, n, y)
	count(MTotalErrorISL, Derived, "total_error_isl", "Total Error Input Sequence Length", unitTokens, a, 964, n, y)
	count(MMinRequestTimestamp, Aggregate, "min_request_timestamp", "Minimum Request Timestamp", unitNs, a, 965, n, n)
	count(MMaxResponseTimestamp, Aggregate, "max_response_timestamp", "Maximum Response Timestamp", unitNs, a, 966, n, n)
	count(MOSLMismatchCount, Aggregate, "osl_mismatch_count", "OSL Mismatch Count", unitRequests, a, 970, n, n)
	count(MUsageDiscrepancyCount, Aggregate, "usage_discrepancy_count", "Usage Discrepancy Count", unitRequests, a, 971, n, n)
	count(MTotalUsagePromptTokens, Derived, "total_usage_prompt_tokens", "Total Usage Prompt Tokens", unitTokens, a, 972, n, y)
	count(MTotalUsageCompletionTokens, Derived, "total_usage_completion_tokens", "Total Usage Completion Tokens", unitTokens, a, 973, n, y)
	count(MTotalUsageTotalTokens, Derived, "total_usage_total_tokens", "Total Usage Total Tokens", unitTokens, a, 974, n, y)
	count(MTotalUsageReasoningTokens, Derived, "total_usage_reasoning_tokens", "Total Usage Reasoning Tokens", unitTokens, a, 975, n, y)
	count(MWarmupRequestCount, Aggregate, "warmup_request_count", "Warmup Request Count", unitRequests, o, 1100, n, n)
	count(MLostRequestCount, Aggregate, "lost_request_count", "Lost Request Count", unitRequests, o, 1101, n, n)
	one(MOfferedRequestRate, Derived, "offered_request_rate", "Offered Request Rate", unitRPS, o, 1110, y, y)
	one(MDispatchedRequestRate, Derived, "dispatched_request_rate", "Dispatched Request Rate", unitRPS, o, 1111, y, y)
	one(MCompletedRequestRate, Derived, "completed_request_rate", "Completed Request Rate", unitRPS, o, 1112, y, y)
	count(MSameReadChunkGapCount, Aggregate, "same_read_chunk_gap_count", "Same Read Chunk Gap Count", unitChunkGaps, o, 1120, n, n)
	one(MSameReadChunkGapPct, Derived, "same_read_chunk_gap_pct", "Same Read Chunk Gap Share", unitPct, o, 1121, n, n)
	one(MMaxWorkerCPUUtilization, Derived, "max_worker_cpu_utilization", "Max Worker CPU Utilization", unitPct, o, 1130, y, n)
	one(MTotalGPUPower, Derived, "total_gpu_power", "Total GPU Power", unitWatts, a, 1300, y, n)
	one(MTotalGPUEnergy, Derived, "total_gpu_energy", "Total GPU Energy", unitJoules, a, 1310, y, n)
	one(MOutputTokensPerJoule, Derived, "output_tokens_per_joule", "Output Tokens Per Joule", unitTokPerJ, a, 1320, y, y)
	one(MEnergyPerUser, Derived, "energy_per_user", "Energy Per User", unitJPerUser, a, 1330, n, n)
	for i := range c {
		if c[i].Tag == "" {
			panic("analyze: metric catalog entry missing") // a programming error caught by any test
		}
	}
	return c
}()

// Metrics returns the catalog: every metric analyze knows, in MetricID order.
func Metrics() []MetricDef {
	out := make([]MetricDef, len(catalog))
	copy(out, catalog[:])
	return out
}

// LookupMetric returns the definition of the metric with the given tag.
func LookupMetric(tag string) (MetricDef, bool) {
	for i := range catalog {
		if catalog[i].Tag == tag {
			return catalog[i], true
		}
	}
	return MetricDef{}, false
}

// streamOnly are the record metrics taken from the token events of a streamed response
// (request.go): a run without --streaming has no values for them.
var streamOnly = map[MetricID]bool{
	MTimeToFirstToken: true, MCorrectedTimeToFirstToken: true, MTimeToFirstOutputToken: true,
	MTimeToSecondToken: true, MInterChunkLatency: true, MPrefillThroughputPerUser: true,
	MLLMPerfInterTokenLatency: true, MInterTokenLatency: true, MOutputTokenThroughputPerUser: true,
	MGuidellmTimePerOutputToken: true, MGuidellmInterTokenLatency: true, MVLLMTimePerOutputToken: true,
}

// NeedsStream reports whether the metric has values only in a streaming run (the plan's
// --streaming), so that a gate, SLO or SLA on it can be refused before a run that cannot
// give it.
func (d MetricDef) NeedsStream() bool {
	if d.Kind != Record {
		return false
	}
	if d.Alias >= 0 && d.Alias != d.ID {
		return streamOnly[d.Alias]
	}
	return streamOnly[d.ID]
}
