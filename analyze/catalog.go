package analyze

import "slices"

// The metric catalog's vocabulary: what a metric is (MetricDef), its kind and origin, the
// built-in metrics' ids and the display units. The built-in metrics themselves, each with
// how it is computed, are the table in builtin.go; Registry (registry.go) holds them and the
// metrics a user defines at run time, and every output reads them from it. docs/metrics.md
// documents each built-in; a test checks that every tag appears there.

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
	// OriginUser metrics are defined at run time (Registry.Register).
	OriginUser
)

var originNames = [...]string{"", "aiperf", "llmbench", "vllm", "guidellm", "genai-perf", "llmperf", "user", "server"}

// String returns the origin's name.
func (o Origin) String() string {
	if int(o) < len(originNames) {
		return originNames[o]
	}
	return "?"
}

// MetricID indexes a Registry: the built-in metrics have the fixed ids below, in the order
// the exports list them; metrics registered at run time follow them.
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
	MHTTPReqReconnects
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
	MNominalRequestRate
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

// Sampling says what one value of a record metric stands for.
type Sampling uint8

const (
	// PerRequest metrics have one value per request (the default).
	PerRequest Sampling = iota
	// PerEvent metrics have several values per request, pooled: inter_chunk_latency one per
	// gap between content events, events_per_read one per socket read.
	PerEvent
	// PerSample metrics are not taken from requests: worker_cpu_utilization has one value per
	// CPU sample interval of each worker.
	PerSample
)

// MetricDef describes one metric: what the console, the exports, the report, gates,
// goodput and comparisons show and check. Registry holds them (registry.go).
type MetricDef struct {
	ID     MetricID
	Tag    string // AIPerf-style tag, e.g. "time_to_first_token"
	Header string // display name, e.g. "Time to First Token"
	Unit   string // display unit, e.g. "ms"
	Kind   Kind
	Origin Origin
	// Sampling says what one value of a record metric stands for; only PerRequest metrics
	// can be goodput objectives.
	Sampling Sampling
	// Console metrics appear in the console table (when they have a value).
	Console bool
	// LargerIsBetter gives the direction of goodput SLOs and of a comparison's "worse".
	LargerIsBetter bool
	// Int marks metrics whose values are whole numbers: per-request token counts, and the
	// single-value counts, token totals and timestamps (written as integers in the CSV, as
	// AIPerf writes its integer metrics).
	Int bool
	// Var is the metric's short name in expressions (--metric, --where, --group-by; e.g.
	// ttft_ms for time_to_first_token) and the Parquet column of that name; "" for none.
	// The tag is a name there too: Var is the alias users write.
	Var string
	// Latency, for the latencies a release gate holds (TTFT, ITL, request latency, ...), is
	// the name people say it by ("TTFT"); "" for other metrics. The benchmark claim wants a
	// gate on one paired with a capacity gate (analyze/judge).
	Latency string
	// Alias, for MVLLMInterTokenLatency and MGenAIPerfTimeToFirstToken, is the metric whose
	// values this one reports; -1 for every other metric.
	Alias MetricID
	// User marks a metric defined at run time (Registry.Register); Description says what it
	// is, for the report.
	User        bool
	Description string
	// Expression is a user metric's definition as written (UserMetric.Expression).
	Expression string
	// stream marks record metrics taken from the token events of a streamed response: a run
	// without --streaming has no values for them (NeedsStream).
	stream bool
	// failed marks record metrics that describe the client or the transfer, kept for failed
	// requests too; AIPerf's metrics cover valid requests only (error_isl excepted).
	failed bool
	// div converts a stored value into the display unit by division (ns → ms is 1e6), which
	// keeps whole-microsecond times exact in milliseconds (20600000 ns is 20.6 ms).
	div float64
	// hdrScale converts a stored value into the integer HdrHistogram records once a
	// distribution is too large to keep exactly (1 for ns and tokens, 1000 for rates).
	hdrScale float64
	// order sorts the console table.
	order int
}

// DisplayOrder is the metric's place in the console table: lower comes first.
func (d MetricDef) DisplayOrder() int { return d.order }

// Unitless reports whether the metric is a bare count (requests, count, or no unit), which
// the console names without a unit.
func (d MetricDef) Unitless() bool {
	return d.Unit == unitRequests || d.Unit == unitCount || d.Unit == ""
}

// ForFailedRequests reports whether the metric is also kept for failed requests that were
// sent (the client's and the transfer's metrics; a user metric's Failed).
func (d MetricDef) ForFailedRequests() bool { return d.failed }

// source is the metric whose values this one reports: its alias target, or itself.
func (d MetricDef) source() MetricID {
	if d.Alias >= 0 {
		return d.Alias
	}
	return d.ID
}

// oneValue reports whether the metric has one value per request: a goodput objective, a
// comparison and a per-request evaluator's input can use it.
func (d MetricDef) oneValue() bool {
	return d.Kind == Record && d.Sampling == PerRequest
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

// NeedsStream reports whether the metric has values only in a streaming run (the plan's
// --streaming), so that a gate, SLO or SLA on it can be refused before a run that cannot
// give it.
func (d MetricDef) NeedsStream() bool { return d.Kind == Record && d.stream }

// aiperfDeclared is the order of the metric fields AIPerf's JsonExportData declares; its
// exporter writes them first, then its fixed blocks, then every other metric.
var aiperfDeclared = [...]MetricID{
	MRequestThroughput, MRequestLatency, MRequestCount, MTimeToFirstToken, MTimeToSecondToken,
	MInterTokenLatency, MOutputTokenThroughput, MOutputTokenThroughputPerUser,
	MOutputSequenceLength, MInputSequenceLength, MGoodput, MGoodRequestCount, MOutputTokenCount,
	MReasoningTokenCount, MMinRequestTimestamp, MMaxResponseTimestamp, MInterChunkLatency,
	MTotalOutputTokens, MTotalReasoningTokens, MBenchmarkDuration, MTotalISL, MTotalOSL,
	MErrorRequestCount, MErrorISL, MTotalErrorISL,
}

// AIPerfDeclared returns the metrics of aiperfDeclared, in its order: the metric fields
// AIPerf's JSON model knows by name, which the JSON export writes first.
func AIPerfDeclared() []MetricID { return slices.Clone(aiperfDeclared[:]) }
