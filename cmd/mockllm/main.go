// Command mockllm is the reference LLM server with known timing: an
// OpenAI-compatible (and Anthropic, TGI, TEI, Cohere, NIM) server whose
// time to first token, inter-token latency, output lengths and faults
// are set by flags and deterministic under --seed. Benchmark clients are
// calibrated against it. See docs/mockllm.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/llmbench/llmbench/cmd/internal/cli"
	"github.com/llmbench/llmbench/mockllm"
	"github.com/llmbench/llmbench/tokenizer"
	"github.com/spf13/pflag"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stderr, nil))
}

// flagOf names the flag behind each Options field, for error messages.
var flagOf = map[string]string{
	"TTFT": "--ttft", "TTFTPerInputToken": "--ttft-per-input-token", "ITL": "--itl",
	"TTFTJitterCV": "--ttft-jitter-cv", "ITLJitterCV": "--itl-jitter-cv", "TokensPerChunk": "--tokens-per-chunk",
	"MaxBatch": "--max-num-seqs (--max-batch)", "KVCacheTokens": "--kv-cache-tokens", "ReasoningTokens": "--reasoning-tokens", "NaturalTokens": "--natural-tokens",
	"ErrorRate": "--error-rate", "StreamErrorRate": "--stream-error-rate", "DisconnectRate": "--disconnect-rate",
	"StallRate": "--stall-rate", "StallDuration": "--stall-duration", "ToolCallRate": "--tool-call-rate",
	"EmbeddingDim": "--embedding-dim", "ServedModelNames": "--served-model-name", "Tokenizer": "--tokenizer", "ContextTokens": "--context-tokens",
	"ImageTokens": "--image-tokens", "AudioTokensPerSecond": "--audio-tokens-per-second", "VideoTokens": "--video-tokens",
}

// run parses args, serves until ctx ends, and returns the exit code:
// 0 after a clean shutdown, 2 for bad flags, 1 when serving fails.
// ready, when set, receives the listening address (tests).
func run(ctx context.Context, args []string, stderr io.Writer, ready func(addr string)) int {
	fs := pflag.NewFlagSet("mockllm", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	d := mockllm.DefaultOptions()
	o := d
	addr := fs.String("addr", "127.0.0.1:8000", "address to listen on (host:port; port 0 picks a free one)")
	tokSpec := fs.String("tokenizer", "builtin", `tokenizer for counting and output words: "builtin" (Qwen3), a tokenizer.json, its folder, or a cached HuggingFace model id`)
	fs.StringVar(&o.Model, "model", d.Model, "model id listed by /v1/models (requests may name any model)")
	fs.StringSliceVar(&o.ServedModelNames, "served-model-name", nil, "as vLLM's: the only model names served (comma-separated or repeated); others get 404 \"The model `X` does not exist.\"; /v1/models lists them")
	fs.BoolVar(&o.Strict, "strict", false, "validate chat and completions requests as vLLM does (field types and ranges, min_tokens <= max_tokens, ...): 400 BadRequestError in vLLM's words")
	fs.BoolVar(&o.VLLMChunks, "vllm-chunks", false, "stream in vLLM's exact chunk layout (32-hex ids, stop_reason on the last chunk, vLLM's usage chunk)")
	fs.BoolVar(&o.VLLMMetrics, "vllm-metrics", false, "serve vLLM's /metrics page (its families, labels and buckets, about 65 kB) instead of the mock's own")
	fs.BoolVar(&o.PromptTokensDetails, "enable-prompt-tokens-details", false, "as vLLM's: report prompt tokens found in the prefix cache as usage.prompt_tokens_details.cached_tokens")
	fs.Uint64Var(&o.Seed, "seed", d.Seed, "seed for output text, lengths, jitter and faults")
	fs.DurationVar(&o.TTFT, "ttft", d.TTFT, "time to first token, from admission")
	fs.DurationVar(&o.ITL, "itl", d.ITL, "inter-token latency: time between token events")
	fs.DurationVar(&o.TTFTPerInputToken, "ttft-per-input-token", d.TTFTPerInputToken, "extra TTFT per prompt token (prefill)")
	fs.Float64Var(&o.TTFTJitterCV, "ttft-jitter-cv", d.TTFTJitterCV, "lognormal jitter on TTFT: coefficient of variation (0 = none)")
	fs.Float64Var(&o.ITLJitterCV, "itl-jitter-cv", d.ITLJitterCV, "lognormal jitter on each ITL gap: coefficient of variation (0 = none)")
	fs.IntVar(&o.TokensPerChunk, "tokens-per-chunk", d.TokensPerChunk, "tokens carried by one SSE event")
	fs.IntVar(&o.MaxBatch, "max-num-seqs", d.MaxBatch, "as vLLM's: requests served at once; more wait in a FIFO queue, the queue time of their spans (0 = unbounded)")
	fs.IntVar(&o.MaxBatch, "max-batch", d.MaxBatch, "the same as --max-num-seqs")
	fs.IntVar(&o.KVCacheTokens, "kv-cache-tokens", d.KVCacheTokens, "simulated KV cache size in tokens, for vllm:kv_cache_usage_perc (0 = 65536)")
	fs.IntVar(&o.ReasoningTokens, "reasoning-tokens", d.ReasoningTokens, "reasoning tokens before the content (chat, responses, messages)")
	fs.IntVar(&o.NaturalTokens, "natural-tokens", d.NaturalTokens, "mean natural output length without ignore_eos (drawn from [N/2, 3N/2])")
	fs.Float64Var(&o.ErrorRate, "error-rate", d.ErrorRate, "fraction of requests answered with HTTP 500")
	fs.Float64Var(&o.StreamErrorRate, "stream-error-rate", d.StreamErrorRate, "fraction of requests whose stream carries an error event mid-stream")
	fs.Float64Var(&o.DisconnectRate, "disconnect-rate", d.DisconnectRate, "fraction of requests whose connection drops mid-stream")
	fs.Float64Var(&o.StallRate, "stall-rate", d.StallRate, "fraction of requests that stall mid-stream")
	fs.DurationVar(&o.StallDuration, "stall-duration", d.StallDuration, "how long a stall lasts (0 = until the client gives up)")
	fs.Float64Var(&o.ToolCallRate, "tool-call-rate", d.ToolCallRate, "fraction of chat/responses/messages requests answered with a tool call")
	fs.StringVar(&o.APIKey, "api-key", d.APIKey, "require this key (Authorization: Bearer, or x-api-key on /v1/messages)")
	fs.IntVar(&o.EmbeddingDim, "embedding-dim", d.EmbeddingDim, "embedding length when a request sets no dimensions")
	fs.IntVar(&o.Media.ImageTokens, "image-tokens", d.Media.ImageTokens, "prompt tokens counted per image part (each must decode, else 400)")
	fs.Float64Var(&o.Media.AudioTokensPerSecond, "audio-tokens-per-second", d.Media.AudioTokensPerSecond, "prompt tokens counted per second of audio (rounded up per clip)")
	fs.IntVar(&o.Media.VideoTokens, "video-tokens", d.Media.VideoTokens, "prompt tokens counted per video part")
	fs.BoolVar(&o.Quirks.IgnoreMaxCompletionTokens, "ignore-max-completion-tokens", false, "quirk: read a chat request's limit from max_tokens only, dropping max_completion_tokens (llama.cpp)")
	fs.BoolVar(&o.Quirks.CloseAfterResponse, "close-after-response", false, "quirk: close the connection right after each inference response while announcing Keep-Alive (llama.cpp)")
	fs.BoolVar(&o.Quirks.NoMetrics, "no-metrics", false, "quirk: answer /metrics with 501 and a hint (llama.cpp without --metrics)")
	fs.IntVar(&o.Quirks.ContextTokens, "context-tokens", 0, "quirk: a chat/completions request's context (prompt + output); past it the stream ends with llama.cpp's \"Context size has been exceeded.\" error (0 = none)")
	ver := cli.AddVersion(fs)
	traces := mockllm.TraceExport{}
	fs.StringVar(&traces.Endpoint, "otlp-traces-endpoint", "", "as vLLM's: export one llm_request span per request (vLLM's attributes, child of its traceparent) to this OTLP collector URL, e.g. http://127.0.0.1:4317 (docs/mockllm.md)")
	fs.StringVar(&traces.Protocol, "otlp-traces-protocol", "", "grpc or http/protobuf (default: $OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else grpc, as vLLM)")
	schedPath := fs.String("schedule-log", "", "write one JSON line per request: when its events were due and when each was sent (docs/mockllm.md)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: mockllm [flags]\n\nReference LLM server with known timing (docs/mockllm.md).\n\nFlags:\n%s", fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "mockllm: %v\n", err)
		return 2
	}
	if *ver {
		cli.PrintVersion(os.Stdout, "mockllm")
		return 0
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mockllm: unexpected argument %q (all settings are flags)\n", fs.Arg(0))
		return 2
	}
	if err := o.Validate(); err != nil {
		var oe *mockllm.OptionError
		if errors.As(err, &oe) {
			fmt.Fprintf(stderr, "mockllm: %s %v: %s\n", flagOf[oe.Field], oe.Value, oe.Reason)
		} else {
			fmt.Fprintf(stderr, "mockllm: %v\n", err)
		}
		return 2
	}
	tok, err := tokenizer.LoadWithOptions(*tokSpec, tokenizer.EnvLoadOptions(os.Getenv))
	if err != nil {
		fmt.Fprintf(stderr, "mockllm: --tokenizer %s: %v\n", *tokSpec, err)
		return 2
	}
	o.Tokenizer = tok
	if traces.Protocol == "" {
		traces.Protocol = os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	}
	return mockllm.Serve(ctx, o, mockllm.ServeOptions{Addr: *addr, ScheduleLog: *schedPath, Tokenizer: *tokSpec, TokenizerName: tok.Name(), Stderr: stderr, Ready: ready,
		Traces: traces})
}
