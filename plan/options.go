package plan

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/internal/version"
	"github.com/llmbench/llmbench/plan/dataset"
	"github.com/llmbench/llmbench/plan/media"
	"github.com/llmbench/llmbench/tokenizer"
)

// ToolVersion identifies the compiler in every plan's Meta: llmbench's semantic version
// (version.Number, the one place it is set). A constant, not build information, so the same
// flags give the same bytes from any build of this version.
const ToolVersion = "llmbench-plan " + version.Number

// ErrUsage is wrapped by every error about options that are invalid, conflicting or
// impossible for the input (as opposed to I/O failures); the CLI exits 2 on them.
var ErrUsage = errors.New("usage")

// usageError is an ErrUsage whose text is just the message.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }
func (e *usageError) Unwrap() error { return ErrUsage }

// MaxRequests bounds the records of one plan: the compiler holds 64 bytes per record in
// memory, so this keeps a plan under about 1 GiB of compiler memory and a typo in a count a
// clear error instead of an out-of-memory kill.
const MaxRequests = 1 << 24

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// Options is everything the compiler needs. Fields are named after the AIPerf flags that set
// them (cmd/plan maps flags to fields one to one); durations are in the flags' units.
// Start from DefaultOptions, which holds AIPerf's defaults.
type Options struct {
	// Output is the plan file to write.
	Output string

	// Model is put in every body (--model); a comma-separated list ("a,b") gives each
	// dataset turn one of them, picked by ModelSelectionStrategy.
	Model string
	// ModelSelectionStrategy picks a turn's model from a Model list: "round_robin" (in
	// dataset order, turn by turn) or "random" (from the seed), as AIPerf picks one per
	// prompt (--model-selection-strategy); "" is round_robin.
	ModelSelectionStrategy string
	// EndpointType is an endpoint.Names() type (--endpoint-type).
	EndpointType string
	// CustomEndpoint overrides the endpoint's URL path (--custom-endpoint).
	CustomEndpoint string
	// Streaming asks for SSE responses (--streaming).
	Streaming bool
	// UseLegacyMaxTokens sends max_tokens instead of max_completion_tokens (chat).
	UseLegacyMaxTokens bool
	// UseServerTokenCount asks streaming responses for usage (stream_options.include_usage).
	UseServerTokenCount bool
	// ExtraInputs are merged at the top level of every body (--extra-inputs).
	ExtraInputs map[string]any
	// PayloadTemplate is the Go text/template source of every body for the template
	// endpoint (--payload-template); it sees endpoint.TemplateData. Required for template,
	// refused for other types.
	PayloadTemplate string
	// ResponseField is, for raw and template plans, the dotted path to the output text in
	// each response event or body (--response-field, e.g. "choices.0.delta.content"); ""
	// detects the shape per event. It is recorded in the plan's spec, where analyze reads it.
	ResponseField string

	// Tokenizer verifies every ISL and generates synthetic prompts. Required.
	Tokenizer *tokenizer.Tokenizer
	// Corpus is the synthetic prompt source; nil loads the embedded corpus under Tokenizer.
	Corpus *dataset.Corpus
	// Dataset is the input (--input-file, loaded by the caller); nil generates a synthetic one.
	Dataset *dataset.Dataset
	// SamplingStrategy picks dataset entries: "sequential", "random" (with replacement) or
	// "shuffle" (without, reshuffled when exhausted); "" means shuffle for synthetic data and
	// sequential for files (--dataset-sampling-strategy).
	SamplingStrategy string

	// ISLMean and ISLStddev: synthetic prompt length in tokens (--synthetic-input-tokens-*).
	ISLMean   int
	ISLStddev float64
	// OSLMean and OSLStddev: requested output length; 0 leaves it unset (--output-tokens-*).
	OSLMean   int
	OSLStddev float64
	// RandomRangeRatio > 0 draws ISL and OSL uniformly within ±ratio of the means instead of
	// normally, with the bounds of RandomRangeRatioMode ("vllm" or "sglang").
	RandomRangeRatio     float64
	RandomRangeRatioMode string
	// SeqDist is an ISL/OSL mixture (--seq-dist); it replaces the ISL/OSL distributions.
	SeqDist string
	// NumDatasetEntries is the number of distinct synthetic conversations the requests
	// sample from (--num-dataset-entries); 0, the default, gives every session a
	// conversation of its own, so no synthetic prompt repeats (AIPerf's default is 100).
	NumDatasetEntries int
	// SharedSystemPromptLength, UserContextPromptLength, PromptPrefixPoolSize and
	// PromptPrefixLength add synthetic prefixes (tokens; 0 = none).
	SharedSystemPromptLength int
	UserContextPromptLength  int
	PromptPrefixPoolSize     int
	PromptPrefixLength       int
	// RankingsPassagesMean/Stddev (passages per request), RankingsPassagesPromptTokenMean/
	// Stddev (tokens per passage) and RankingsQueryPromptTokenMean/Stddev (tokens per query)
	// shape synthetic requests of the *_rankings endpoint types (--rankings-*).
	RankingsPassagesMean              int
	RankingsPassagesStddev            float64
	RankingsPassagesPromptTokenMean   int
	RankingsPassagesPromptTokenStddev float64
	RankingsQueryPromptTokenMean      int
	RankingsQueryPromptTokenStddev    float64
	// PromptBatchSize texts go in each synthetic embeddings request (-b/--prompt-batch-size;
	// 0 or 1: one).
	PromptBatchSize int
	// ConversationTurnMean/Stddev: turns per synthetic session.
	ConversationTurnMean   int
	ConversationTurnStddev float64
	// ConversationTurnDelayMean/Stddev (ms) and Ratio: think time before later turns.
	ConversationTurnDelayMean   float64
	ConversationTurnDelayStddev float64
	ConversationTurnDelayRatio  float64
	// ConversationHistory is "compiled" (each turn's body holds the conversation so far, with
	// recorded or synthesized replies) or "live" (replay splices the real responses).
	ConversationHistory string

	// Concurrency is the number of sessions in flight: alone a closed loop, with a rate or a
	// schedule a ceiling (0 = unset).
	Concurrency int
	// RequestRate in requests per second (0 = unset) with ArrivalPattern and
	// ArrivalSmoothness (gamma shape).
	RequestRate       float64
	ArrivalPattern    string
	ArrivalSmoothness float64
	// RequestRateRampDuration and ConcurrencyRampDuration, in seconds.
	RequestRateRampDuration float64
	ConcurrencyRampDuration float64
	// PrefillConcurrency caps the requests in prefill: sent, and no byte of the response
	// body back yet (AIPerf's --prefill-concurrency, for disaggregated serving); 0 = none.
	// It needs Streaming. PrefillConcurrencyRampDuration ramps it from 1, in seconds.
	PrefillConcurrency             int
	PrefillConcurrencyRampDuration float64
	// RequestCount, NumSessions and BenchmarkDuration (seconds) size the profile phase;
	// 0 = unset (then AIPerf's default count applies).
	RequestCount      int
	NumSessions       int
	BenchmarkDuration float64
	// WarmupRequestCount requests, NumWarmupSessions sessions or WarmupDuration seconds of
	// planned instants (whichever bound comes first; any one starts a warmup) run first and
	// are not measured. The warmup is planned in the profile's timing mode; in request_rate
	// mode WarmupRequestRate and WarmupArrivalPattern ("" = the profile's) set its own
	// arrivals. The warmup's caps and ramps (0 = the profile's: WarmupConcurrency,
	// WarmupPrefillConcurrency, their ramps and WarmupRequestRateRampDuration, in seconds)
	// are its own; replay ramps each phase from its start.
	WarmupRequestCount                   int
	NumWarmupSessions                    int
	WarmupDuration                       float64
	WarmupConcurrency                    int
	WarmupRequestRate                    float64
	WarmupArrivalPattern                 string
	WarmupPrefillConcurrency             int
	WarmupConcurrencyRampDuration        float64
	WarmupPrefillConcurrencyRampDuration float64
	WarmupRequestRateRampDuration        float64
	// RequestCancellationRate percent of profile requests are cancelled
	// RequestCancellationDelay seconds after being sent.
	RequestCancellationRate  float64
	RequestCancellationDelay float64
	// FixedSchedule replays the input's timestamps (automatic for timed inputs unless a rate
	// is given; NoFixedSchedule turns that promotion off). FixedScheduleAutoOffset shifts the
	// first to 0; the start and end offsets (ms, nil = unset) keep a window of the input.
	FixedSchedule            bool
	NoFixedSchedule          bool
	FixedScheduleAutoOffset  bool
	FixedScheduleStartOffset *int64
	FixedScheduleEndOffset   *int64
	// InterTurnDelayCapSeconds > 0 caps every later turn's delay (recorded or synthetic)
	// at that many seconds, before SynthesisSpeedupRatio (--inter-turn-delay-cap-seconds).
	InterTurnDelayCapSeconds float64
	// SynthesisSpeedupRatio divides input timestamps and delays (2 replays twice as fast).
	SynthesisSpeedupRatio float64
	// TraceIdleGapCapSeconds > 0 shortens every longer gap between consecutive request
	// starts of a weka_trace session to it (--trace-idle-gap-cap-seconds; AgentX: 10). The
	// CLI passes it to the loader (dataset.FileOptions.IdleGapCapNs); it is here for its
	// bound and its checks.
	TraceIdleGapCapSeconds float64
	// TrajectoryStartMinRatio and TrajectoryStartMaxRatio, when either is > 0, start each
	// of the first --concurrency sessions of a closed loop at an instant drawn uniformly in
	// [min, max] × its recorded length, leaving out what the trace recorded before
	// (AgentX's lanes; --trajectory-start-min-ratio/--trajectory-start-max-ratio). Later
	// sessions start at the trace's beginning. Timed graph inputs (weka_trace) only; they
	// make the plan a closed loop.
	TrajectoryStartMinRatio, TrajectoryStartMaxRatio float64
	// CacheBust gives every session of a graph input its own marker (cacheBustTokens of
	// corpus text) before the first user text of each of its bodies ("first_turn_prefix")
	// or before each body's first message ("system_prefix"), so replaying a trace again
	// starts as cold as the trace did; "" or "none": no marker (--cache-bust).
	CacheBust string
	// UserCentricRate (requests per second over all users) with NumUsers gives each user a
	// fixed gap of NumUsers/UserCentricRate between its turns.
	UserCentricRate float64
	NumUsers        int

	// Seed is the root of every random stream (--random-seed).
	Seed uint64
	// Spec is recorded in the plan: every flag after defaults, by name.
	Spec map[string]any
	// Notice, when set, is told what a person should know before the plan is written: a
	// plan estimated over LargePlanBytes, with its size and what dominates it.
	Notice func(msg string)
	// Workers bounds the goroutines generating prompts and bodies (0 = GOMAXPROCS). The plan
	// does not depend on it.
	Workers int

	// MaxPlanBytes refuses a plan whose estimated file or compiler memory is larger
	// (estimate.go; --max-plan-bytes); 0 is DefaultMaxPlanBytes.
	MaxPlanBytes int64

	// Media shapes the synthetic images, audio clips and videos of every request (the
	// --image-*, --audio-*, --video-* flags; plan/media). Files name their own media.
	Media media.Options
}

// DefaultOptions returns AIPerf's defaults (aiperf.md Appendix A).
func DefaultOptions() Options {
	return Options{
		EndpointType:                    "chat",
		ModelSelectionStrategy:          "round_robin",
		ISLMean:                         550,
		RandomRangeRatioMode:            "vllm",
		NumDatasetEntries:               0,
		RankingsPassagesMean:            1,
		RankingsPassagesPromptTokenMean: 550,
		RankingsQueryPromptTokenMean:    550,
		ConversationTurnMean:            1,
		ConversationTurnDelayRatio:      1,
		ConversationHistory:             "compiled",
		ArrivalPattern:                  "poisson",
		ArrivalSmoothness:               1,
		SynthesisSpeedupRatio:           1,
		Media:                           media.DefaultOptions(),
	}
}

// Validate checks every option on its own and against the others. Its errors wrap ErrUsage
// and name the offending flag.
func (o *Options) Validate() error {
	if err := o.Media.Validate(); err != nil {
		return usagef("%v", err)
	}
	if err := o.checkBounds(); err != nil { // every numeric option against its documented cap (bounds.go)
		return err
	}
	if o.Output == "" {
		return usagef("--output is required")
	}
	if st, err := os.Stat(o.Output); err == nil && st.IsDir() {
		return usagef("--output %s is a directory; want a plan file path", o.Output)
	}
	if dir := filepath.Dir(o.Output); dir != "" {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return usagef("--output %s: folder %s does not exist", o.Output, dir)
		}
	}
	if n := o.RequestCount + o.WarmupRequestCount; n > MaxRequests || o.RequestCount > MaxRequests || o.WarmupRequestCount > MaxRequests {
		return usagef("--request-count plus --warmup-request-count must be <= %d (got %d and %d)", MaxRequests, o.RequestCount, o.WarmupRequestCount)
	}
	if o.NumWarmupSessions > MaxRequests {
		return usagef("--num-warmup-sessions must be <= %d (got %d)", MaxRequests, o.NumWarmupSessions)
	}
	wRate, wFlag := o.WarmupRequestRate, "--warmup-request-rate"
	if wRate == 0 {
		wRate, wFlag = o.RequestRate, "--request-rate" // the warmup's arrivals default to the profile's
	}
	if n := wRate * o.WarmupDuration; o.WarmupRequestCount == 0 && n > MaxRequests {
		return usagef("%s %v over --warmup-duration %v plans %.0f warmup requests, more than the maximum of %d", wFlag, wRate, o.WarmupDuration, n, MaxRequests)
	}
	if o.NumSessions > MaxRequests {
		return usagef("--num-sessions must be <= %d (got %d)", MaxRequests, o.NumSessions)
	}
	if n := o.RequestRate * o.BenchmarkDuration; o.RequestCount == 0 && n > MaxRequests {
		return usagef("--request-rate %v over --benchmark-duration %v plans %.0f requests, more than the maximum of %d", o.RequestRate, o.BenchmarkDuration, n, MaxRequests)
	}
	if n := o.UserCentricRate * o.BenchmarkDuration; o.RequestCount == 0 && n > MaxRequests {
		return usagef("--user-centric-rate %v over --benchmark-duration %v plans %.0f requests, more than the maximum of %d", o.UserCentricRate, o.BenchmarkDuration, n, MaxRequests)
	}
	ep, err := endpoint.Lookup(o.EndpointType)
	if err != nil {
		return usagef("--endpoint-type must be one of %s (got %q)", strings.Join(endpoint.Names(), ", "), o.EndpointType)
	}
	if o.Model == "" && ep.Name != "raw" && ep.Name != "template" {
		return usagef("--model is required")
	}
	if slices.Contains(o.Models(), "") {
		return usagef("--model %q: a model list is comma-separated names, none empty", o.Model)
	}
	switch o.ModelSelectionStrategy {
	case "", "round_robin", "random":
	case "weighted":
		return usagef("--model-selection-strategy weighted is not supported (no way to give weights on the command line here): use round_robin or random")
	default:
		return usagef("--model-selection-strategy must be round_robin or random (got %q)", o.ModelSelectionStrategy)
	}
	if o.CustomEndpoint == "" && ep.RequestPath(o.Streaming) == "" {
		return usagef("--custom-endpoint is required for --endpoint-type %s", ep.Name)
	}
	if o.CustomEndpoint != "" && !strings.HasPrefix(o.CustomEndpoint, "/") {
		return usagef("--custom-endpoint must be a path starting with / (got %q)", o.CustomEndpoint)
	}
	if o.Streaming && !ep.Streams {
		return usagef("--streaming: endpoint type %s does not stream", ep.Name)
	}
	if ep.Name == "template" && o.PayloadTemplate == "" {
		return usagef("--payload-template is required for --endpoint-type template")
	}
	if ep.Name != "template" && o.PayloadTemplate != "" {
		return usagef("--payload-template applies to --endpoint-type template only (got %s)", ep.Name)
	}
	if o.ResponseField != "" {
		if ep.Name != "raw" && ep.Name != "template" {
			return usagef("--response-field applies to --endpoint-type raw and template only (got %s)", ep.Name)
		}
		if slices.Contains(strings.Split(o.ResponseField, "."), "") {
			return usagef("--response-field %q: want a dotted path such as choices.0.text, without empty segments", o.ResponseField)
		}
	}

	synthetic := o.Dataset == nil
	if err := o.validateRankings(ep.Name, synthetic); err != nil {
		return err
	}
	if o.PromptBatchSize < 0 || o.PromptBatchSize > maxPassages {
		return usagef("--prompt-batch-size must be in [1,%d] (got %d)", maxPassages, o.PromptBatchSize)
	}
	if o.PromptBatchSize > 1 {
		if ep.Name != "embeddings" && ep.Name != "nim_embeddings" && ep.Name != "template" {
			return usagef("--prompt-batch-size %d applies to --endpoint-type embeddings, nim_embeddings and template (got %s)", o.PromptBatchSize, ep.Name)
		}
		if !synthetic {
			return usagef("--prompt-batch-size shapes synthetic requests; an --input-file gives its own texts")
		}
	}
	if synthetic && ep.Name == "anthropic_messages" && o.OSLMean <= 0 && o.SeqDist == "" {
		return usagef("--endpoint-type anthropic_messages needs --output-tokens-mean: the Messages API requires max_tokens")
	}
	if synthetic && o.SeqDist == "" && o.ISLMean <= 0 {
		return usagef("--synthetic-input-tokens-mean must be > 0 (got %d)", o.ISLMean)
	}
	if o.RandomRangeRatioMode != "vllm" && o.RandomRangeRatioMode != "sglang" {
		return usagef("--random-range-ratio-mode must be vllm or sglang (got %q)", o.RandomRangeRatioMode)
	}
	if o.RandomRangeRatio > 0 && (o.ISLStddev > 0 || o.OSLStddev > 0) {
		return usagef("--random-range-ratio and --synthetic-input-tokens-stddev/--output-tokens-stddev are mutually exclusive")
	}
	if o.SeqDist != "" {
		if _, err := ParseSeqDist(o.SeqDist); err != nil {
			return usagef("%v", err)
		}
		if o.RandomRangeRatio > 0 {
			return usagef("--seq-dist and --random-range-ratio are mutually exclusive")
		}
	}
	if synthetic && o.NumDatasetEntries < 0 {
		return usagef("--num-dataset-entries must be >= 0 (got %d; 0: a conversation per session)", o.NumDatasetEntries)
	}
	if (o.PromptPrefixPoolSize > 0) != (o.PromptPrefixLength > 0) {
		return usagef("--prompt-prefix-pool-size and --prompt-prefix-length must be given together (got %d and %d)", o.PromptPrefixPoolSize, o.PromptPrefixLength)
	}
	if o.PromptPrefixPoolSize > 0 && (o.SharedSystemPromptLength > 0 || o.UserContextPromptLength > 0) {
		return usagef("--prompt-prefix-pool-size and --shared-system-prompt-length/--user-context-prompt-length are mutually exclusive")
	}
	if o.ConversationTurnMean < 1 {
		return usagef("--conversation-turn-mean must be >= 1 (got %d)", o.ConversationTurnMean)
	}
	if o.ConversationHistory != "compiled" && o.ConversationHistory != "live" {
		return usagef("--conversation-history must be compiled or live (got %q)", o.ConversationHistory)
	}
	if err := o.validateAgentic(synthetic); err != nil {
		return err
	}
	if o.SamplingStrategy != "" && !slices.Contains([]string{"sequential", "random", "shuffle"}, o.SamplingStrategy) {
		return usagef("--dataset-sampling-strategy must be sequential, random or shuffle (got %q)", o.SamplingStrategy)
	}

	if _, err := NewArrival(o.ArrivalPattern, o.ArrivalSmoothness); err != nil {
		return usagef("%v", err)
	}
	if err := o.validateWarmup(); err != nil {
		return err
	}
	if o.RequestRateRampDuration > 0 && o.RequestRate == 0 {
		return usagef("--request-rate-ramp-duration needs --request-rate")
	}
	if o.ConcurrencyRampDuration > 0 && o.Concurrency == 0 {
		return usagef("--concurrency-ramp-duration needs --concurrency")
	}
	if o.PrefillConcurrency > 0 && !o.Streaming {
		return usagef("--prefill-concurrency needs --streaming: a request leaves prefill with its first streamed byte")
	}
	if o.PrefillConcurrencyRampDuration > 0 && o.PrefillConcurrency == 0 {
		return usagef("--prefill-concurrency-ramp-duration needs --prefill-concurrency")
	}
	if o.RequestCount > 0 && o.NumSessions > 0 {
		return usagef("--request-count and --num-sessions are mutually exclusive")
	}
	if o.FixedSchedule && o.NoFixedSchedule {
		return usagef("--fixed-schedule and --no-fixed-schedule are mutually exclusive")
	}
	if o.FixedSchedule && o.RequestRate > 0 {
		return usagef("--request-rate and --fixed-schedule are mutually exclusive")
	}
	if o.FixedSchedule && o.UserCentricRate > 0 {
		return usagef("--user-centric-rate and --fixed-schedule are mutually exclusive")
	}
	if o.UserCentricRate > 0 && o.RequestRate > 0 {
		return usagef("--user-centric-rate and --request-rate are mutually exclusive")
	}
	if o.UserCentricRate > 0 && o.NumUsers == 0 {
		return usagef("--user-centric-rate needs --num-users")
	}
	if o.NumUsers > 0 && o.UserCentricRate == 0 {
		return usagef("--num-users needs --user-centric-rate")
	}
	if o.UserCentricRate > 0 && synthetic && o.ConversationTurnMean < 2 {
		return usagef("--user-centric-rate needs sessions of at least 2 turns (--conversation-turn-mean %d)", o.ConversationTurnMean)
	}
	fixedFlags := o.FixedScheduleAutoOffset || o.FixedScheduleStartOffset != nil || o.FixedScheduleEndOffset != nil
	if (o.FixedSchedule || fixedFlags) && synthetic {
		return usagef("--fixed-schedule needs an --input-file with timestamps")
	}
	if o.FixedScheduleAutoOffset && o.FixedScheduleStartOffset != nil {
		return usagef("--fixed-schedule-start-offset and --fixed-schedule-auto-offset are mutually exclusive")
	}
	if e, s := o.FixedScheduleEndOffset, o.FixedScheduleStartOffset; e != nil && s != nil && *e < *s {
		return usagef("--fixed-schedule-end-offset %d is before --fixed-schedule-start-offset %d", *e, *s)
	}
	// Think times are drawn from N(mean, stddev) × ratio: ten standard deviations above the
	// mean are never reached, so the bound holds for every draw.
	if d := (o.ConversationTurnDelayMean + 10*o.ConversationTurnDelayStddev) * o.ConversationTurnDelayRatio; d > maxSpanMs {
		return usagef("(--conversation-turn-delay-mean %v + 10 × --conversation-turn-delay-stddev %v) × --conversation-turn-delay-ratio %v is %s ms of think time, more than %s (docs/plan-format.md \"Bounds\")",
			o.ConversationTurnDelayMean, o.ConversationTurnDelayStddev, o.ConversationTurnDelayRatio, num(d), spanWords)
	}
	if synthetic {
		// An input's requests are known once it is loaded: Compile checks them then.
		if err := o.checkSpan(o.turnsEstimate()); err != nil {
			return err
		}
		if err := o.checkSize(o.estimate(nil)); err != nil { // estimate.go
			return err
		}
	}
	return nil
}

// trajectory reports whether trajectory starts are asked for.
func (o *Options) trajectory() bool {
	return o.TrajectoryStartMinRatio > 0 || o.TrajectoryStartMaxRatio > 0
}

// validateAgentic checks the agentic workloads' flags on their own and against the timing
// flags; what they need from the input is checked once it is loaded (graphChecks).
func (o *Options) validateAgentic(synthetic bool) error {
	switch o.CacheBust {
	case "", "none", "system_prefix", "first_turn_prefix":
	case "system_suffix", "first_turn_suffix":
		return usagef("--cache-bust %s is not supported (a body's prompt is synthesized whole): use first_turn_prefix or system_prefix", o.CacheBust)
	default:
		return usagef("--cache-bust must be none, first_turn_prefix or system_prefix (got %q)", o.CacheBust)
	}
	if o.TrajectoryStartMinRatio > o.TrajectoryStartMaxRatio {
		return usagef("--trajectory-start-min-ratio %s is more than --trajectory-start-max-ratio %s", num(o.TrajectoryStartMinRatio), num(o.TrajectoryStartMaxRatio))
	}
	agentic := o.trajectory() || (o.CacheBust != "" && o.CacheBust != "none") || o.TraceIdleGapCapSeconds > 0
	if agentic && synthetic {
		return usagef("--trajectory-start-*, --cache-bust and --trace-idle-gap-cap-seconds apply to agentic inputs (--input-file with --custom-dataset-type weka_trace or dag_jsonl)")
	}
	if o.trajectory() {
		switch {
		case o.FixedSchedule:
			return usagef("--trajectory-start-* start sessions in a closed loop; they exclude --fixed-schedule")
		case o.RequestRate > 0 || o.UserCentricRate > 0:
			return usagef("--trajectory-start-* start sessions in a closed loop; they exclude --request-rate and --user-centric-rate")
		}
	}
	return nil
}

// graphChecks checks the options against a loaded input: the agentic flags need a graph
// input, trajectory starts a timed one, and a graph input takes no user-centric timing.
func (o *Options) graphChecks(ds *dataset.Dataset) error {
	switch {
	case !ds.Graph && (o.trajectory() || (o.CacheBust != "" && o.CacheBust != "none")):
		return usagef("--trajectory-start-* and --cache-bust apply to agentic inputs (weka_trace, dag_jsonl); the input is %s", ds.Name)
	case o.trajectory() && !ds.Timed:
		return usagef("--trajectory-start-* need a timed agentic input (weka_trace); %s records no timestamps", ds.Name)
	case ds.Graph && o.UserCentricRate > 0:
		return usagef("--user-centric-rate puts each turn on a per-user grid; an agentic input (%s) releases its requests by their dependencies", ds.Name)
	case ds.LiveReplies && o.ConversationHistory != "live":
		return usagef("%s bodies carry the server's actual replies (a turn continues its conversation, a FORK child inherits it): use --conversation-history live", ds.Name)
	}
	return nil
}

// warmup returns the bounds of the warmup phase; the zero limits when there is none.
func (o *Options) warmup() limits {
	return limits{requests: o.WarmupRequestCount, sessions: o.NumWarmupSessions, durationNs: int64(math.Round(o.WarmupDuration * 1e9))}
}

// validateWarmup checks the --warmup-* flags that shape the warmup's load: the plan has
// one timing mode for both phases, and each phase its own caps and ramps.
func (o *Options) validateWarmup() error {
	shaping := []struct {
		flag string
		set  bool
	}{
		{"--warmup-concurrency", o.WarmupConcurrency > 0},
		{"--warmup-request-rate", o.WarmupRequestRate > 0},
		{"--warmup-arrival-pattern", o.WarmupArrivalPattern != ""},
		{"--warmup-prefill-concurrency", o.WarmupPrefillConcurrency > 0},
		{"--warmup-concurrency-ramp-duration", o.WarmupConcurrencyRampDuration > 0},
		{"--warmup-prefill-concurrency-ramp-duration", o.WarmupPrefillConcurrencyRampDuration > 0},
		{"--warmup-request-rate-ramp-duration", o.WarmupRequestRateRampDuration > 0},
	}
	for _, f := range shaping {
		if f.set && o.warmup() == (limits{}) {
			return usagef("%s needs a warmup (--warmup-request-count, --num-warmup-sessions or --warmup-duration)", f.flag)
		}
	}
	switch {
	case (o.WarmupRequestRate > 0 || o.WarmupArrivalPattern != "") && o.RequestRate == 0:
		return usagef("--warmup-request-rate and --warmup-arrival-pattern need --request-rate: a plan has one timing mode for both phases")
	case o.WarmupRequestRateRampDuration > 0 && o.RequestRate == 0:
		return usagef("--warmup-request-rate-ramp-duration needs --request-rate: a plan has one timing mode for both phases")
	case o.WarmupConcurrencyRampDuration > 0 && o.WarmupConcurrency == 0 && o.Concurrency == 0:
		return usagef("--warmup-concurrency-ramp-duration needs --warmup-concurrency or --concurrency")
	case o.WarmupPrefillConcurrencyRampDuration > 0 && o.WarmupPrefillConcurrency == 0 && o.PrefillConcurrency == 0:
		return usagef("--warmup-prefill-concurrency-ramp-duration needs --warmup-prefill-concurrency or --prefill-concurrency")
	case o.WarmupPrefillConcurrency > 0 && !o.Streaming:
		return usagef("--warmup-prefill-concurrency needs --streaming: a request leaves prefill with its first streamed byte")
	}
	if o.WarmupArrivalPattern != "" {
		if !slices.Contains([]string{"constant", "poisson", "gamma"}, o.WarmupArrivalPattern) {
			return usagef("--warmup-arrival-pattern must be constant, poisson or gamma (got %q)", o.WarmupArrivalPattern)
		}
		if _, err := NewArrival(o.WarmupArrivalPattern, o.ArrivalSmoothness); err != nil {
			return usagef("--warmup-arrival-pattern %s: %v", o.WarmupArrivalPattern, err)
		}
	}
	return nil
}

// Models returns the --model list: the names of a comma-separated Model, trimmed; nil when
// Model is empty.
func (o *Options) Models() []string {
	if o.Model == "" {
		return nil
	}
	names := strings.Split(o.Model, ",")
	for i := range names {
		names[i] = strings.TrimSpace(names[i])
	}
	return names
}

// maxPassages bounds the passages of one synthetic ranking request.
const maxPassages = 1 << 16

// rankings reports whether the options plan synthetic ranking requests.
func (o *Options) rankings() bool {
	return o.Dataset == nil && strings.HasSuffix(o.EndpointType, "_rankings")
}

// validateRankings checks the --rankings-* flags: they shape synthetic ranking requests
// and are refused elsewhere rather than ignored.
func (o *Options) validateRankings(endpointType string, synthetic bool) error {
	d := DefaultOptions()
	given := o.RankingsPassagesMean != d.RankingsPassagesMean || o.RankingsPassagesStddev != 0 ||
		o.RankingsPassagesPromptTokenMean != d.RankingsPassagesPromptTokenMean || o.RankingsPassagesPromptTokenStddev != 0 ||
		o.RankingsQueryPromptTokenMean != d.RankingsQueryPromptTokenMean || o.RankingsQueryPromptTokenStddev != 0
	ranking := strings.HasSuffix(endpointType, "_rankings")
	switch {
	case given && !ranking:
		return usagef("--rankings-* apply to the *_rankings endpoint types only (got --endpoint-type %s)", endpointType)
	case given && !synthetic:
		return usagef("--rankings-* shape synthetic ranking requests; the --input-file gives the queries and passages")
	case !ranking || !synthetic:
		return nil
	}
	means := []struct {
		flag  string
		v, hi int
	}{
		{"--rankings-passages-mean", o.RankingsPassagesMean, maxPassages},
		{"--rankings-passages-prompt-token-mean", o.RankingsPassagesPromptTokenMean, dataset.MaxPromptTokens},
		{"--rankings-query-prompt-token-mean", o.RankingsQueryPromptTokenMean, dataset.MaxPromptTokens},
	}
	for _, m := range means {
		if m.v < 1 || m.v > m.hi {
			return usagef("%s must be in [1,%d] (got %d)", m.flag, m.hi, m.v)
		}
	}
	if n := int64(o.RankingsPassagesMean) * int64(o.RankingsPassagesPromptTokenMean); n > dataset.MaxPromptTokens {
		return usagef("--rankings-passages-mean %d × --rankings-passages-prompt-token-mean %d is %d tokens per request, more than %d", o.RankingsPassagesMean, o.RankingsPassagesPromptTokenMean, n, dataset.MaxPromptTokens)
	}
	if o.SharedSystemPromptLength > 0 || o.UserContextPromptLength > 0 || o.PromptPrefixPoolSize > 0 {
		return usagef("--shared-system-prompt-length, --user-context-prompt-length and --prompt-prefix-pool-size do not apply to ranking requests (--endpoint-type %s)", endpointType)
	}
	return nil
}

// rankingsShape returns the synthetic ranking request shape, or nil when the options do not
// plan synthetic ranking requests.
func (o *Options) rankingsShape() *dataset.RankingsShape {
	if !o.rankings() {
		return nil
	}
	return &dataset.RankingsShape{
		PassagesMean: o.RankingsPassagesMean, PassagesStddev: o.RankingsPassagesStddev,
		PassageTokensMean: o.RankingsPassagesPromptTokenMean, PassageTokensStddev: o.RankingsPassagesPromptTokenStddev,
		QueryTokensMean: o.RankingsQueryPromptTokenMean, QueryTokensStddev: o.RankingsQueryPromptTokenStddev,
	}
}

// lengths returns the synthetic ISL/OSL sampler the options describe.
func (o *Options) lengths() (dataset.LengthSampler, error) {
	switch {
	case o.SeqDist != "":
		return ParseSeqDist(o.SeqDist)
	case o.RandomRangeRatio > 0:
		return RangeLengths{ISLMean: o.ISLMean, OSLMean: o.OSLMean, Ratio: o.RandomRangeRatio, Mode: o.RandomRangeRatioMode}, nil
	}
	return NormalLengths{ISLMean: o.ISLMean, ISLStddev: o.ISLStddev, OSLMean: o.OSLMean, OSLStddev: o.OSLStddev}, nil
}
