package mockllm

import (
	"fmt"
	"io"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// Options configures a Server. The zero value of a timing or fault field
// means "none" (no delay, no faults); DefaultOptions holds the defaults
// of the mockllm command.
type Options struct {
	// Model is the id /v1/models lists. Requests may name any model; the
	// server echoes the requested name (or Model when the request has none).
	Model string
	// ServedModelNames, when set, are the only model names a request may use, as vLLM's
	// --served-model-name: another name is answered 404 in vLLM's words ("The model `X` does
	// not exist.", NotFoundError), /v1/models lists them, and a request without a model gets
	// the first. Empty means any name is served.
	ServedModelNames []string
	// Strict validates chat and completions requests as vLLM does (vllm.go): ill-typed or
	// out-of-range sampling fields are answered 400 with vLLM's message (BadRequestError).
	Strict bool
	// PromptTokensDetails reports the prompt tokens found in the simulated prefix cache as
	// usage.prompt_tokens_details.cached_tokens (input_tokens_details on the Responses API),
	// as vLLM does with --enable-prompt-tokens-details: only when some were found.
	PromptTokensDetails bool
	// VLLMChunks renders chat and completions streams in vLLM's exact chunk layout
	// (vllmlayout.go): ids of 32 hex digits, stop_reason beside the last finish_reason, and
	// the usage chunk's fields in vLLM's order without completion_tokens_details.
	VLLMChunks bool
	// VLLMMetrics serves vLLM's /metrics page (vllmmetrics.go: its families, labels and
	// buckets, about 100 kB) instead of the mock's own, its values from the mock's counters.
	VLLMMetrics bool
	// Seed makes output text, lengths, jitter and faults reproducible.
	Seed uint64
	// Tokenizer counts prompt tokens and supplies the output vocabulary.
	// nil means the builtin Qwen3 tokenizer.
	Tokenizer Tokenizer

	// TTFT is the time from admission to the first token event.
	TTFT time.Duration
	// TTFTPerInputToken adds prefill time per prompt token to TTFT.
	TTFTPerInputToken time.Duration
	// ITL is the time between consecutive token events of a stream.
	ITL time.Duration
	// TTFTJitterCV and ITLJitterCV scale TTFT and each ITL gap by a
	// lognormal factor with mean 1 and this coefficient of variation.
	TTFTJitterCV, ITLJitterCV float64
	// TokensPerChunk is the number of tokens carried by one event
	// (speculative decoding, server-side batching of deltas). 0 means 1.
	TokensPerChunk int
	// MaxBatch bounds the requests served at once; later requests wait
	// (FIFO) and their timing starts at admission. 0 means unbounded.
	// vLLM's name for it is --max-num-seqs.
	MaxBatch int
	// Tracer, when set, gets one llm_request span per request served, as vLLM emits
	// (tracing.go; NewTracerProvider exports them over OTLP).
	Tracer trace.TracerProvider
	// KVCacheTokens is the simulated KV cache's size in tokens: vllm:kv_cache_usage_perc is the
	// prompt and generated tokens of the running requests over it. 0 means 65536.
	KVCacheTokens int
	// ReasoningTokens is the number of reasoning tokens emitted before the
	// content on APIs that carry reasoning (chat, responses, messages).
	ReasoningTokens int
	// NaturalTokens is the mean content length when a request does not
	// force one (no ignore_eos): each request draws its natural length
	// uniformly from [NaturalTokens/2, 3*NaturalTokens/2]. 0 means 128.
	NaturalTokens int

	// ErrorRate is the fraction of requests answered with HTTP 500.
	ErrorRate float64
	// StreamErrorRate is the fraction of streaming requests whose 200
	// stream carries an error event mid-stream and then ends.
	StreamErrorRate float64
	// DisconnectRate is the fraction of requests whose connection is
	// closed mid-stream (non-streaming: instead of the response).
	DisconnectRate float64
	// StallRate is the fraction of requests that stop emitting mid-stream
	// for StallDuration (0: until the client or the server gives up).
	StallRate     float64
	StallDuration time.Duration
	// ToolCallRate is the fraction of chat, responses and messages
	// requests answered with a tool call instead of text.
	ToolCallRate float64

	// APIKey, when set, is required as "Authorization: Bearer KEY"
	// (x-api-key on /v1/messages) on every inference and models route.
	APIKey string
	// EmbeddingDim is the default embedding length. 0 means 768.
	EmbeddingDim int
	// MaxBodyBytes bounds a request body. 0 means 64 MiB.
	MaxBodyBytes int64
	// Media is the prompt-token cost of images, audio and video parts (mockllm/media.go);
	// the zero value counts them as free.
	Media MediaCost

	// Quirks reproduce how real servers depart from the APIs and from HTTP (quirks.go).
	Quirks Quirks

	// ScheduleLog, when set, receives one JSON line per inference request
	// (ScheduleRecord): the instants its events were due and when each was
	// sent. Writes are serialized, one per line; nil means no log.
	ScheduleLog io.Writer
}

// DefaultOptions returns the defaults of the mockllm command (the AIPerf
// mock server's TTFT and ITL). Tokenizer is left nil: the builtin one.
func DefaultOptions() Options {
	return Options{
		Model:          "mock-llm",
		TTFT:           20 * time.Millisecond,
		ITL:            5 * time.Millisecond,
		TokensPerChunk: 1,
		NaturalTokens:  128,
		EmbeddingDim:   768,
		MaxBodyBytes:   64 << 20,
		Media:          DefaultMediaCost(),
	}
}

// OptionError names the Options field that is invalid and why.
type OptionError struct {
	Field  string // Options field name, e.g. "ErrorRate"
	Value  any
	Reason string
}

// Error says which field is wrong, its value and why.
func (e *OptionError) Error() string {
	return fmt.Sprintf("mockllm: option %s=%v: %s", e.Field, e.Value, e.Reason)
}

// Validate reports the first invalid field as an *OptionError.
func (o *Options) Validate() error {
	durs := []struct {
		name string
		d    time.Duration
	}{{"TTFT", o.TTFT}, {"TTFTPerInputToken", o.TTFTPerInputToken}, {"ITL", o.ITL}, {"StallDuration", o.StallDuration}}
	for _, d := range durs {
		if d.d < 0 {
			return &OptionError{d.name, d.d, "must not be negative"}
		}
	}
	cvs := []struct {
		name string
		v    float64
	}{{"TTFTJitterCV", o.TTFTJitterCV}, {"ITLJitterCV", o.ITLJitterCV}}
	for _, c := range cvs {
		if !(c.v >= 0 && c.v <= 10) {
			return &OptionError{c.name, c.v, "must be between 0 and 10"}
		}
	}
	rates := []struct {
		name string
		v    float64
	}{{"ErrorRate", o.ErrorRate}, {"StreamErrorRate", o.StreamErrorRate}, {"DisconnectRate", o.DisconnectRate},
		{"StallRate", o.StallRate}, {"ToolCallRate", o.ToolCallRate}}
	for _, r := range rates {
		if !(r.v >= 0 && r.v <= 1) {
			return &OptionError{r.name, r.v, "must be a fraction between 0 and 1"}
		}
	}
	if sum := o.ErrorRate + o.StreamErrorRate + o.DisconnectRate + o.StallRate; sum > 1+1e-9 {
		return &OptionError{"ErrorRate", o.ErrorRate, fmt.Sprintf("the fault rates (error, stream error, disconnect, stall) add up to %g; a request gets at most one fault, so they must add up to at most 1", sum)}
	}
	ints := []struct {
		name string
		v    int
	}{{"TokensPerChunk", o.TokensPerChunk}, {"MaxBatch", o.MaxBatch}, {"KVCacheTokens", o.KVCacheTokens}, {"ReasoningTokens", o.ReasoningTokens},
		{"NaturalTokens", o.NaturalTokens}, {"EmbeddingDim", o.EmbeddingDim}, {"ContextTokens", o.Quirks.ContextTokens},
		{"ImageTokens", o.Media.ImageTokens}, {"VideoTokens", o.Media.VideoTokens}}
	for _, i := range ints {
		if i.v < 0 {
			return &OptionError{i.name, i.v, "must not be negative"}
		}
	}
	if o.EmbeddingDim > 65536 {
		return &OptionError{"EmbeddingDim", o.EmbeddingDim, "must be at most 65536"}
	}
	if o.MaxBodyBytes < 0 {
		return &OptionError{"MaxBodyBytes", o.MaxBodyBytes, "must not be negative"}
	}
	for _, n := range o.ServedModelNames {
		if strings.TrimSpace(n) == "" {
			return &OptionError{"ServedModelNames", o.ServedModelNames, "a served model name must not be empty"}
		}
	}
	if a := o.Media.AudioTokensPerSecond; !(a >= 0 && a <= 1e6) {
		return &OptionError{"AudioTokensPerSecond", a, "must be in [0, 1e6]"}
	}
	return nil
}

// withDefaults fills the fields whose zero value means "default".
func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if len(o.ServedModelNames) > 0 {
		o.Model = o.ServedModelNames[0]
	}
	if o.Model == "" {
		o.Model = d.Model
	}
	if o.TokensPerChunk == 0 {
		o.TokensPerChunk = 1
	}
	if o.NaturalTokens == 0 {
		o.NaturalTokens = d.NaturalTokens
	}
	if o.EmbeddingDim == 0 {
		o.EmbeddingDim = d.EmbeddingDim
	}
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = d.MaxBodyBytes
	}
	return o
}
