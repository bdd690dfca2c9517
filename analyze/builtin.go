package analyze

// The built-in metrics: one entry each, in MetricID order, with how it is computed. A record
// metric's entry holds its per-request formula over the request's facts (perrequest.go),
// a single value's its per-run formula over the run's totals (perrun.go); the console, the
// exports, the report, gates, goodput and comparisons read everything else from the entry.
// Adding a built-in metric is an id in catalog.go's list, an entry here and its line in
// docs/metrics.md.

// flags are the yes/no properties of an entry.
type flags uint16

const (
	fConsole flags = 1 << iota // shown in the console table
	fLarger                    // larger is better (throughputs, counts of good things)
	fInt                       // whole numbers
	fStream                    // values only from streamed responses
	fFailed                    // computed for failed requests too
	fPooled                    // several values per request (PerEvent)
	fSampled                   // values from CPU samples, not requests (PerSample)
)

// scale is how a record metric's stored values are shown and histogrammed.
type scale struct{ div, hdr float64 }

var (
	sNs    = scale{nsToMs, 1}  // nanoseconds shown in ms
	sSec   = scale{nsToSec, 1} // nanoseconds shown in seconds
	sWhole = scale{1, 1}       // counts, tokens, bytes
	sFrac  = scale{1, 1000}    // rates, ratios, percentages
)

// entry is one built-in metric: its definition and how it is computed.
type entry struct {
	def MetricDef
	// perRequest computes a record metric's value for one request, in stored units (ns,
	// tokens, rates); ok false when the request has none. Nil for aliases, pooled and
	// sampled metrics (their values are lists the processor builds) and single values.
	perRequest func(*facts) (float64, bool)
	// perRun computes a single value from a collector's totals.
	perRun func(*runFacts) scalar
}

func rec(id MetricID, tag, header, unit string, o Origin, sc scale, order int, fl flags, f func(*facts) (float64, bool)) entry {
	d := MetricDef{ID: id, Tag: tag, Header: header, Unit: unit, Kind: Record, Origin: o, Alias: -1,
		div: sc.div, hdrScale: sc.hdr, order: order}
	d.setFlags(fl)
	return entry{def: d, perRequest: f}
}

// alias is a record metric reporting another's values under a peer's name; it takes its
// unit, scale and sampling from that metric (NewRegistry).
func alias(id, of MetricID, tag, header string, o Origin, order int) entry {
	return entry{def: MetricDef{ID: id, Tag: tag, Header: header, Kind: Record, Origin: o, Alias: of, order: order}}
}

func one(id MetricID, kind Kind, tag, header, unit string, o Origin, order int, fl flags, f func(*runFacts) scalar) entry {
	d := MetricDef{ID: id, Tag: tag, Header: header, Unit: unit, Kind: kind, Origin: o, Alias: -1, div: 1, order: order}
	d.setFlags(fl)
	return entry{def: d, perRun: f}
}

// named gives a record metric its short name in expressions (MetricDef.Var).
func (e entry) named(v string) entry {
	e.def.Var = v
	return e
}

// latency marks a latency metric with the name people say it by (MetricDef.Latency).
func (e entry) latency(name string) entry {
	e.def.Latency = name
	return e
}

func (d *MetricDef) setFlags(fl flags) {
	d.Console, d.LargerIsBetter, d.Int = fl&fConsole != 0, fl&fLarger != 0, fl&fInt != 0
	d.stream, d.failed = fl&fStream != 0, fl&fFailed != 0
	switch {
	case fl&fPooled != 0:
		d.Sampling = PerEvent
	case fl&fSampled != 0:
		d.Sampling = PerSample
	}
}

// builtinEntries are the built-in metrics in MetricID order.
func builtinEntries() []entry {
	const (
		c, l, i, st, fa = fConsole, fLarger, fInt, fStream, fFailed
	)
	a, o := OriginAIPerf, OriginOurs
	return []entry{
		// Latencies (AIPerf §5.1, §5.2).
		rec(MTimeToFirstToken, "time_to_first_token", "Time to First Token", unitMs, a, sNs, 100, c|st, ttft).named("ttft_ms").latency("TTFT"),
		rec(MTimeToSecondToken, "time_to_second_token", "Time to Second Token", unitMs, a, sNs, 200, c|st, ttst).latency("TTST"),
		rec(MTimeToFirstOutputToken, "time_to_first_output_token", "Time to First Output Token", unitMs, a, sNs, 250, c|st, ttfo).latency("TTFO"),
		rec(MRequestLatency, "request_latency", "Request Latency", unitMs, a, sNs, 300, c, requestLatency).named("latency_ms").latency("request latency"),
		rec(MInterTokenLatency, "inter_token_latency", "Inter Token Latency", unitMs, a, sNs, 400, c|st, itl).latency("ITL"),
		rec(MInterChunkLatency, "inter_chunk_latency", "Inter Chunk Latency", unitMs, a, sNs, 450, st|fPooled, nil).latency("inter-chunk"), // the processor's gaps
		rec(MOutputTokenThroughputPerUser, "output_token_throughput_per_user", "Output Token Throughput Per User", unitTPSUser, a, sFrac, 500, c|l|st, tpsUser),
		rec(ME2EOutputTokenThroughput, "e2e_output_token_throughput", "E2E Output Token Throughput", unitTPSUser, a, sFrac, 510, l, e2eThroughput),
		rec(MPrefillThroughputPerUser, "prefill_throughput_per_user", "Prefill Throughput Per User", unitTPSUser, a, sFrac, 520, l|st, prefill),
		// Token counts (AIPerf §5.3, §5.4).
		rec(MOutputSequenceLength, "output_sequence_length", "Output Sequence Length", unitTokens, a, sWhole, 600, c|l|i, osl).named("osl"),
		rec(MInputSequenceLength, "input_sequence_length", "Input Sequence Length", unitTokens, a, sWhole, 700, c|l|i, isl),
		rec(MOutputTokenCount, "output_token_count", "Output Token Count", unitTokens, a, sWhole, 610, l|i, outputTokens),
		rec(MReasoningTokenCount, "reasoning_token_count", "Reasoning Token Count", unitTokens, a, sWhole, 620, l|i, reasoningTokens).named("reasoning_tokens"),
		rec(MUsagePromptTokens, "usage_prompt_tokens", "Usage Prompt Tokens", unitTokens, a, sWhole, 1400, l|i, usagePrompt),
		rec(MUsageCompletionTokens, "usage_completion_tokens", "Usage Completion Tokens", unitTokens, a, sWhole, 1410, l|i, usageCompletion),
		rec(MUsageTotalTokens, "usage_total_tokens", "Usage Total Tokens", unitTokens, a, sWhole, 1420, l|i, usageTotal),
		rec(MUsageReasoningTokens, "usage_reasoning_tokens", "Usage Reasoning Tokens", unitTokens, a, sWhole, 1430, l|i, usageReasoning),
		rec(MUsagePromptCacheReadTokens, "usage_prompt_cache_read_tokens", "Usage Prompt Cache Read Tokens", unitTokens, a, sWhole, 1440, l|i, usageCachedPrompt),
		rec(MUsagePromptTokensDiffPct, "usage_prompt_tokens_diff_pct", "Usage Prompt Tokens Difference", unitPct, a, sFrac, 1450, 0, usagePromptDiff),
		rec(MUsageCompletionTokensDiffPct, "usage_completion_tokens_diff_pct", "Usage Completion Tokens Difference", unitPct, a, sFrac, 1460, 0, usageCompletionDiff),
		rec(MUsageReasoningTokensDiffPct, "usage_reasoning_tokens_diff_pct", "Usage Reasoning Tokens Difference", unitPct, a, sFrac, 1470, 0, usageReasoningDiff),
		rec(MOSLMismatchDiffPct, "osl_mismatch_diff_pct", "OSL Mismatch Difference", unitPct, a, sFrac, 1480, 0, oslMismatch),
		rec(MErrorISL, "error_isl", "Error Input Sequence Length", unitTokens, a, sWhole, 1490, l|i|fa, errorISL),
		// HTTP phases (AIPerf §5.9, k6 names).
		rec(MStreamSetupLatency, "stream_setup_latency", "Stream Setup Latency", unitMs, a, sNs, 1500, 0, streamSetup),
		rec(MHTTPReqConnecting, "http_req_connecting", "HTTP Request Connecting", unitMs, a, sNs, 1505, 0, httpConnecting),
		rec(MHTTPReqSending, "http_req_sending", "HTTP Request Sending", unitMs, a, sNs, 1510, 0, httpSending),
		rec(MHTTPReqWaiting, "http_req_waiting", "HTTP Request Waiting", unitMs, a, sNs, 1520, 0, httpWaiting),
		rec(MHTTPReqReceiving, "http_req_receiving", "HTTP Request Receiving", unitMs, a, sNs, 1530, 0, httpReceiving),
		rec(MHTTPReqDuration, "http_req_duration", "HTTP Request Duration", unitMs, a, sNs, 1540, 0, httpDuration),
		rec(MHTTPReqDataSent, "http_req_data_sent", "HTTP Request Data Sent", unitBytes, a, sWhole, 1550, i, httpDataSent),
		rec(MHTTPReqDataReceived, "http_req_data_received", "HTTP Request Data Received", unitBytes, a, sWhole, 1560, i, httpDataReceived),
		rec(MHTTPReqChunksReceived, "http_req_chunks_received", "HTTP Request Chunks Received", unitCount, a, sWhole, 1570, i, httpChunks),
		rec(MHTTPReqConnectionReused, "http_req_connection_reused", "HTTP Request Connection Reused", unitCount, a, sWhole, 1580, i, httpReused),
		rec(MHTTPReqReconnects, "http_req_reconnects", "HTTP Request Reconnects", unitCount, o, sWhole, 1585, i|fa, httpReconnects),
		// Schedule fidelity and client health (ours): kept for failed requests too.
		rec(MScheduleLag, "schedule_lag", "Schedule Lag", unitMs, o, sNs, 1000, c|fa, scheduleLag).named("lag_ms"),
		rec(MDispatchLag, "dispatch_lag", "Dispatch Lag", unitMs, o, sNs, 1010, c|fa, dispatchLag),
		rec(MSlotWait, "slot_wait", "Slot Wait", unitMs, o, sNs, 1020, c|fa, slotWait),
		rec(MCorrectedTimeToFirstToken, "corrected_time_to_first_token", "Corrected Time to First Token", unitMs, o, sNs, 1030, c|st|fa, correctedTTFT),
		rec(MCorrectedRequestLatency, "corrected_request_latency", "Corrected Request Latency", unitMs, o, sNs, 1040, c|fa, correctedLatency),
		rec(MEventsPerRead, "events_per_read", "Events Per Read", unitEvents, o, sWhole, 1050, i|fa|fPooled, nil), // the processor's reads
		// Peers' definitions (named variants).
		rec(MVLLMTimePerOutputToken, "vllm_time_per_output_token", "vLLM Time per Output Token", unitMs, OriginVLLM, sNs, 1200, st, vllmTPOT),
		rec(MGuidellmInterTokenLatency, "guidellm_inter_token_latency", "guidellm Inter Token Latency", unitMs, OriginGuidellm, sNs, 1210, st, guidellmITL),
		rec(MGuidellmTimePerOutputToken, "guidellm_time_per_output_token", "guidellm Time per Output Token", unitMs, OriginGuidellm, sNs, 1220, st, guidellmTPOT),
		rec(MLLMPerfInterTokenLatency, "llmperf_inter_token_latency", "llmperf Inter Token Latency", unitMs, OriginLLMPerf, sNs, 1230, st, llmperfITL),
		// Non-token endpoints (embeddings, rankings, images): what each response returned.
		rec(MItemCount, "item_count", "Item Count", unitItems, o, sWhole, 1070, l|i|fa, itemCount),
		rec(MWorkerCPUUtilization, "worker_cpu_utilization", "Worker CPU Utilization", unitPct, o, sFrac, 1060, fa|fSampled, nil), // the CPU samples
		// Multimodal (AIPerf §5.6): from the plan's media entries and the request latency.
		rec(MNumImages, "num_images", "Number of Images", unitImages, a, sWhole, 1600, c|l|i, numImages),
		rec(MImageThroughput, "image_throughput", "Image Throughput", unitImagesPS, a, sFrac, 1610, c|l, imageThroughput),
		rec(MImageLatency, "image_latency", "Image Latency", unitMsPerImage, a, sNs, 1620, c, imageLatency),
		rec(MAudioDuration, "audio_duration", "Audio Duration", unitSec, a, sSec, 1630, c|l, audioDuration),
		rec(MRTFX, "rtfx", "RTFx", unitRatio, a, sFrac, 1640, c|l, rtfx),
		rec(MUsagePromptAudioTokens, "usage_prompt_audio_tokens", "Usage Prompt Audio Tokens", unitTokens, a, sWhole, 1442, l|i, usagePromptAudio),
		rec(MUsageCompletionAudioTokens, "usage_completion_audio_tokens", "Usage Completion Audio Tokens", unitTokens, a, sWhole, 1444, l|i, usageCompletionAudio),

		// Aliases: another record metric's values under a peer's name.
		alias(MVLLMInterTokenLatency, MInterChunkLatency, "vllm_inter_token_latency", "vLLM Inter Token Latency", OriginVLLM, 1190).latency("ITL"),
		alias(MGenAIPerfTimeToFirstToken, MTimeToFirstOutputToken, "genai_perf_time_to_first_token", "GenAI-Perf Time to First Token", OriginGenAIPerf, 1240),

		// Single values (AIPerf §5.2, §5.3, §5.5, §5.7 and ours).
		one(MRequestCount, Aggregate, "request_count", "Request Count", unitRequests, a, 910, c|l|i, requestCount),
		one(MErrorRequestCount, Aggregate, "error_request_count", "Error Request Count", unitRequests, a, 920, c|i, errorRequestCount),
		one(MGoodRequestCount, Aggregate, "good_request_count", "Good Request Count", unitRequests, a, 930, c|l|i, goodRequestCount),
		one(MGoodput, Derived, "goodput", "Goodput", unitRPS, a, 940, c|l, goodput),
		one(MGoodRequestFraction, Derived, "good_request_fraction", "Good Request Fraction", unitRatio, a, 945, l, goodFraction),
		one(MBenchmarkDuration, Derived, "benchmark_duration", "Benchmark Duration", unitSec, a, 950, c, benchmarkDuration),
		one(MRequestThroughput, Derived, "request_throughput", "Request Throughput", unitRPS, a, 900, c|l, requestThroughput),
		one(MOutputTokenThroughput, Derived, "output_token_throughput", "Output Token Throughput", unitTPS, a, 800, c|l, outputThroughput),
		one(MTotalTokenThroughput, Derived, "total_token_throughput", "Total Token Throughput", unitTPS, a, 810, l, totalThroughput),
		one(MItemThroughput, Derived, "item_throughput", "Item Throughput", unitIPS, o, 890, c|l, itemThroughput),
		one(MTotalISL, Derived, "total_isl", "Total Input Sequence Length", unitTokens, a, 960, l|i, totalISL),
		one(MTotalOSL, Derived, "total_osl", "Total Output Sequence Length", unitTokens, a, 961, l|i, totalOSL),
		one(MTotalOutputTokens, Derived, "total_output_tokens", "Total Output Tokens", unitTokens, a, 962, l|i, totalOutputTokens),
		one(MTotalReasoningTokens, Derived, "total_reasoning_tokens", "Total Reasoning Tokens", unitTokens, a, 963, l|i, totalReasoningTokens),
		one(MTotalErrorISL, Derived, "total_error_isl", "Total Error Input Sequence Length", unitTokens, a, 964, l|i, totalErrorISL),
		one(MMinRequestTimestamp, Aggregate, "min_request_timestamp", "Minimum Request Timestamp", unitNs, a, 965, i, minRequestTimestamp),
		one(MMaxResponseTimestamp, Aggregate, "max_response_timestamp", "Maximum Response Timestamp", unitNs, a, 966, i, maxResponseTimestamp),
		one(MOSLMismatchCount, Aggregate, "osl_mismatch_count", "OSL Mismatch Count", unitRequests, a, 970, i, oslMismatchCount),
		one(MUsageDiscrepancyCount, Aggregate, "usage_discrepancy_count", "Usage Discrepancy Count", unitRequests, a, 971, i, usageDiscrepancyCount),
		one(MTotalUsagePromptTokens, Derived, "total_usage_prompt_tokens", "Total Usage Prompt Tokens", unitTokens, a, 972, l|i, usageSum(0)),
		one(MTotalUsageCompletionTokens, Derived, "total_usage_completion_tokens", "Total Usage Completion Tokens", unitTokens, a, 973, l|i, usageSum(1)),
		one(MTotalUsageTotalTokens, Derived, "total_usage_total_tokens", "Total Usage Total Tokens", unitTokens, a, 974, l|i, usageSum(2)),
		one(MTotalUsageReasoningTokens, Derived, "total_usage_reasoning_tokens", "Total Usage Reasoning Tokens", unitTokens, a, 975, l|i, usageSum(3)),
		one(MWarmupRequestCount, Aggregate, "warmup_request_count", "Warmup Request Count", unitRequests, o, 1100, i, warmupCount),
		one(MLostRequestCount, Aggregate, "lost_request_count", "Lost Request Count", unitRequests, o, 1101, i, lostCount),
		one(MOfferedRequestRate, Derived, "offered_request_rate", "Offered Request Rate", unitRPS, o, 1110, c|l, offeredRate),
		one(MNominalRequestRate, Derived, "nominal_request_rate", "Nominal Request Rate", unitRPS, o, 1110, c|l, nominalRate),
		one(MDispatchedRequestRate, Derived, "dispatched_request_rate", "Dispatched Request Rate", unitRPS, o, 1111, c|l, dispatchedRate),
		one(MCompletedRequestRate, Derived, "completed_request_rate", "Completed Request Rate", unitRPS, o, 1112, c|l, completedRate),
		one(MSameReadChunkGapCount, Aggregate, "same_read_chunk_gap_count", "Same Read Chunk Gap Count", unitChunkGaps, o, 1120, i, sameReadCount),
		one(MSameReadChunkGapPct, Derived, "same_read_chunk_gap_pct", "Same Read Chunk Gap Share", unitPct, o, 1121, 0, sameReadPct),
		one(MMaxWorkerCPUUtilization, Derived, "max_worker_cpu_utilization", "Max Worker CPU Utilization", unitPct, o, 1130, c, maxWorkerCPU),
		one(MTotalGPUPower, Derived, "total_gpu_power", "Total GPU Power", unitWatts, a, 1300, c, totalGPUPower),
		one(MTotalGPUEnergy, Derived, "total_gpu_energy", "Total GPU Energy", unitJoules, a, 1310, c, totalGPUEnergy),
		one(MOutputTokensPerJoule, Derived, "output_tokens_per_joule", "Output Tokens Per Joule", unitTokPerJ, a, 1320, c|l, tokensPerJoule),
		one(MEnergyPerUser, Derived, "energy_per_user", "Energy Per User", unitJPerUser, a, 1330, 0, energyPerUser),
	}
}

// compareOrder are the built-in per-request metrics `analyze compare` compares, in the
// order it lists them; user metrics follow.
var compareOrder = [...]MetricID{MTimeToFirstToken, MTimeToFirstOutputToken, MInterTokenLatency, MRequestLatency, MOutputTokenThroughputPerUser}
