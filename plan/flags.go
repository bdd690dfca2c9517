package plan

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strings"

	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/plan/dataset"
	"github.com/llmbench/llmbench/plan/media"
)

// FlagSet is what DefineFlags needs of a flag set; a *pflag.FlagSet has these methods, so
// this package defines the plan's flags without importing pflag.
type FlagSet interface {
	BoolVarP(p *bool, name, shorthand string, value bool, usage string)
	IntVarP(p *int, name, shorthand string, value int, usage string)
	Int64VarP(p *int64, name, shorthand string, value int64, usage string)
	Uint64VarP(p *uint64, name, shorthand string, value uint64, usage string)
	Float64VarP(p *float64, name, shorthand string, value float64, usage string)
	StringVarP(p *string, name, shorthand string, value string, usage string)
	StringArrayVarP(p *[]string, name, shorthand string, value []string, usage string)
	IntSliceVarP(p *[]int, name, shorthand string, value []int, usage string)
	Float64SliceVarP(p *[]float64, name, shorthand string, value []float64, usage string)
}

// Flags are the plan's options as a command line sets them: O takes the flags that map one
// to one onto Options, the others are converted by the command before a compile. Its one
// table of flags (DefineFlags) gives the names, defaults and help, and Spec, the record of
// them a plan file keeps.
type Flags struct {
	O               Options
	Source          Source
	ExtraInputs     []string
	PayloadTemplate string
	Seed            uint64
	// StartOffset and EndOffset are --fixed-schedule-start-offset and -end-offset; O's
	// pointers say whether they were given.
	StartOffset, EndOffset int64

	fields []field
	// lifted are the flags an extra input set (Apply): as if given on the command line.
	lifted map[string]bool
}

// field is one defined flag: its name, the value it sets, its default, and how the spec
// treats it.
type field struct {
	name  string
	ptr   any
	def   any
	media bool // left out of the spec of a plan without synthetic media (dropMedia)
}

// notInSpec are flags that say where to write or how to fetch, not what to plan: leaving
// them out of the recorded spec keeps two compiles to different paths byte-identical.
// (--tokenizer-revision still reaches analyze: the tokenizer's name in the plan's meta is
// "org/name@revision" when a revision other than main was asked for.)
var notInSpec = map[string]bool{"tokenizer-revision": true, "tokenizer-trust-remote-code": true, "max-plan-bytes": true}

// laterFlags are plan flags added after plans were first shared: at their defaults they
// are left out of the spec, so a plan that does not use them keeps the bytes, and the hash,
// it had before they existed.
var laterFlags = map[string]bool{"prefill-concurrency": true, "prefill-concurrency-ramp-duration": true, "warmup-prefill-concurrency": true,
	"warmup-concurrency-ramp-duration": true, "warmup-prefill-concurrency-ramp-duration": true, "warmup-request-rate-ramp-duration": true,
	"trace-idle-gap-cap-seconds": true, "trajectory-start-min-ratio": true, "trajectory-start-max-ratio": true, "cache-bust": true}

// NewFlags returns the flags at their defaults, O at DefaultOptions.
func NewFlags() *Flags { return &Flags{O: DefaultOptions()} }

// DefineFlags defines the plan flags, with AIPerf's names and defaults, on fs (all but
// --output and the help, which the command defines).
func (f *Flags) DefineFlags(set FlagSet) {
	o := &f.O
	d := DefaultOptions()
	fs := recorder{set, f, false}
	fs.Int64VarP(&o.MaxPlanBytes, "max-plan-bytes", "", DefaultMaxPlanBytes, "refuse, before compiling, a plan whose estimated file or compiler memory is larger than this many bytes (docs/plan-format.md \"Bounds\")")

	// Endpoint
	fs.StringVarP(&o.Model, "model", "m", "", "model name put in every request body (required); a comma list a,b gives each dataset turn one")
	fs.StringVarP(&o.ModelSelectionStrategy, "model-selection-strategy", "", d.ModelSelectionStrategy, "which model of a --model list a dataset turn gets: round_robin|random")
	fs.StringVarP(&o.EndpointType, "endpoint-type", "", d.EndpointType, "API type: "+strings.Join(endpoint.Names(), ", "))
	fs.StringVarP(&o.CustomEndpoint, "custom-endpoint", "", "", "URL path overriding the endpoint type's default")
	fs.BoolVarP(&o.Streaming, "streaming", "", false, "ask for streamed (SSE) responses")
	fs.BoolVarP(&o.UseLegacyMaxTokens, "use-legacy-max-tokens", "", false, "send max_tokens instead of max_completion_tokens")
	fs.BoolVarP(&o.UseServerTokenCount, "use-server-token-count", "", false, "ask streaming responses for usage (stream_options.include_usage)")
	fs.StringArrayVarP(&f.ExtraInputs, "extra-inputs", "", nil, "k:v merged into every body, v typed as JSON (ignore_eos:true); repeatable, or a JSON object")
	fs.StringVarP(&f.PayloadTemplate, "payload-template", "", "", "template endpoint: Go text/template of each body (sees .Model .Prompt .Messages .MaxTokens .Streaming .Query .Passages .Texts .Extra and func json), or @FILE; also --extra-inputs payload_template:...")
	fs.StringVarP(&o.ResponseField, "response-field", "", "", "raw/template: dotted path to the output text in each response event or body, e.g. choices.0.delta.content (default: detect the shape); also --extra-inputs response_field:...")
	fs.StringVarP(&f.Source.Tokenizer, "tokenizer", "", "", `"builtin", a tokenizer.json path or folder, or a HuggingFace model id (cached, else downloaded; default: the model id if it has a "/", else builtin)`)
	fs.StringVarP(&f.Source.TokenizerRevision, "tokenizer-revision", "", "", `branch, tag or commit of a HuggingFace tokenizer ("": main)`)
	fs.BoolVarP(&f.Source.TrustRemoteCode, "tokenizer-trust-remote-code", "", false, "accepted for AIPerf command lines; only tokenizer.json is ever read, no code runs")

	// Input
	fs.StringVarP(&f.Source.InputFile, "input-file", "", "", "dataset or trace file (folder for random_pool/raw_payload)")
	fs.StringVarP(&f.Source.DatasetType, "custom-dataset-type", "", "", "input format: "+strings.Join(dataset.FileTypes(), ", ")+` ("" detects it)`)
	fs.StringVarP(&f.Source.PublicDataset, "public-dataset", "", "", "a public dataset by name (needs network: not supported, use --input-file)")
	fs.IntVarP(&f.Source.BlockSize, "isl-block-size", "", 0, "tokens per hash_id block of traces (0: the format's default, 512 or 16)")
	fs.IntVarP(&f.Source.MaxLineBytes, "max-line-bytes", "", dataset.DefaultMaxLineBytes, "refuse an input line longer than this many bytes (line-based formats; docs/datasets.md \"Line limit\")")
	fs.StringVarP(&o.SamplingStrategy, "dataset-sampling-strategy", "", "", `sequential|random|shuffle ("": shuffle for synthetic, sequential for files)`)
	fs.Uint64VarP(&f.Seed, "random-seed", "", 0, "root of every random stream (fixed: the same flags give the same plan)")

	// Fixed schedule
	fs.BoolVarP(&o.FixedSchedule, "fixed-schedule", "", false, "replay the input's timestamps (automatic for timed inputs without --request-rate)")
	fs.BoolVarP(&o.NoFixedSchedule, "no-fixed-schedule", "", false, "do not replay a timed input's timestamps unasked (closed loop instead)")
	fs.BoolVarP(&o.FixedScheduleAutoOffset, "fixed-schedule-auto-offset", "", false, "shift the first timestamp to 0")
	fs.Int64VarP(&f.StartOffset, "fixed-schedule-start-offset", "", 0, "replay from this input timestamp (ms)")
	fs.Int64VarP(&f.EndOffset, "fixed-schedule-end-offset", "", 0, "replay up to this input timestamp (ms)")
	fs.Float64VarP(&o.SynthesisSpeedupRatio, "synthesis-speedup-ratio", "", d.SynthesisSpeedupRatio, "divide input timestamps and delays by this")

	// Agentic workloads (weka_trace, dag_jsonl)
	fs.Float64VarP(&o.TraceIdleGapCapSeconds, "trace-idle-gap-cap-seconds", "", 0, "weka_trace: shorten every longer gap between request starts of a session to this many seconds (AgentX: 10; 0: none)")
	fs.Float64VarP(&o.TrajectoryStartMinRatio, "trajectory-start-min-ratio", "", 0, "weka_trace closed loop: the first --concurrency sessions start at a point drawn in [min, max] of their trace")
	fs.Float64VarP(&o.TrajectoryStartMaxRatio, "trajectory-start-max-ratio", "", 0, "weka_trace closed loop: see --trajectory-start-min-ratio (both 0: every session from its start)")
	fs.StringVarP(&o.CacheBust, "cache-bust", "", "none", "agentic inputs: a marker per session before the first user text (first_turn_prefix) or the first message (system_prefix) of its bodies; none")
	fs.Float64VarP(&f.Source.Synthesis.PromptLenMultiplier, "synthesis-prompt-len-multiplier", "", 1, "traces: scale each row's unshared input tokens (after its shared hash_id prefix)")
	fs.Float64VarP(&f.Source.Synthesis.PrefixLenMultiplier, "synthesis-prefix-len-multiplier", "", 1, "traces: stretch each row's shared hash_id prefix (shared blocks stay shared)")
	fs.IntVarP(&f.Source.Synthesis.PrefixRootMultiplier, "synthesis-prefix-root-multiplier", "", 1, "traces: independent copies of the prefix trees, one drawn per session")
	fs.Float64VarP(&f.Source.Synthesis.OutputLenMultiplier, "synthesis-output-len-multiplier", "", 1, "traces: scale each recorded output_length")
	fs.IntVarP(&f.Source.Synthesis.MaxISL, "synthesis-max-isl", "", 0, "traces: drop rows with more input tokens (0: none)")
	fs.IntVarP(&f.Source.Synthesis.MaxOSL, "synthesis-max-osl", "", 0, "traces: cap output lengths (0: no cap)")

	// Conversations
	fs.IntVarP(&o.NumSessions, "num-sessions", "", 0, "number of sessions to send (excludes --request-count)")
	fs.IntVarP(&o.NumDatasetEntries, "num-dataset-entries", "", d.NumDatasetEntries, "distinct synthetic conversations the requests sample from (0: one per session, so no prompt repeats; AIPerf's default is 100)")
	fs.IntVarP(&o.ConversationTurnMean, "conversation-turn-mean", "", d.ConversationTurnMean, "turns per synthetic session (mean)")
	fs.Float64VarP(&o.ConversationTurnStddev, "conversation-turn-stddev", "", 0, "turns per synthetic session (stddev)")
	fs.Float64VarP(&o.ConversationTurnDelayMean, "conversation-turn-delay-mean", "", 0, "think time before a later turn, ms (mean)")
	fs.Float64VarP(&o.ConversationTurnDelayStddev, "conversation-turn-delay-stddev", "", 0, "think time before a later turn, ms (stddev)")
	fs.Float64VarP(&o.ConversationTurnDelayRatio, "conversation-turn-delay-ratio", "", d.ConversationTurnDelayRatio, "scale of the think time")
	fs.Float64VarP(&o.InterTurnDelayCapSeconds, "inter-turn-delay-cap-seconds", "", 0, "cap every think time (recorded or synthetic) at this many seconds (0: no cap)")
	fs.StringVarP(&o.ConversationHistory, "conversation-history", "", d.ConversationHistory, "compiled (bodies hold the whole conversation) | live (replay splices real responses)")

	// Prompts
	fs.IntVarP(&o.ISLMean, "synthetic-input-tokens-mean", "", d.ISLMean, "synthetic prompt tokens (mean)")
	fs.Float64VarP(&o.ISLStddev, "synthetic-input-tokens-stddev", "", 0, "synthetic prompt tokens (stddev)")
	fs.IntVarP(&o.OSLMean, "output-tokens-mean", "", 0, "requested output tokens (mean; 0 leaves max tokens unset)")
	fs.Float64VarP(&o.OSLStddev, "output-tokens-stddev", "", 0, "requested output tokens (stddev)")
	fs.Float64VarP(&o.RandomRangeRatio, "random-range-ratio", "", 0, "draw ISL and OSL uniformly within ±ratio of the means")
	fs.StringVarP(&o.RandomRangeRatioMode, "random-range-ratio-mode", "", d.RandomRangeRatioMode, "range bounds: vllm|sglang")
	fs.StringVarP(&o.SeqDist, "seq-dist", "", "", `ISL,OSL mixture, e.g. "128,64:25;512|20,128:75"`)
	fs.IntVarP(&o.SharedSystemPromptLength, "shared-system-prompt-length", "", 0, "tokens of one system prompt shared by all sessions")
	fs.IntVarP(&o.UserContextPromptLength, "user-context-prompt-length", "", 0, "tokens of a per-session user context")
	fs.IntVarP(&o.PromptPrefixPoolSize, "prompt-prefix-pool-size", "", 0, "number of random prefixes, one prepended per session")
	fs.IntVarP(&o.PromptPrefixLength, "prompt-prefix-length", "", 0, "tokens per prefix")

	fs.StringVarP(&f.Source.PromptCorpus, "prompt-corpus", "", "shakespeare", "synthetic text source: shakespeare (the embedded corpus) or a text file")
	fs.IntVarP(&o.PromptBatchSize, "prompt-batch-size", "b", 1, "texts per synthetic embeddings request (embeddings, nim_embeddings, template)")

	// Rankings (synthetic requests of the *_rankings endpoint types)
	fs.IntVarP(&o.RankingsPassagesMean, "rankings-passages-mean", "", d.RankingsPassagesMean, "passages per synthetic ranking request (mean)")
	fs.Float64VarP(&o.RankingsPassagesStddev, "rankings-passages-stddev", "", 0, "passages per synthetic ranking request (stddev)")
	fs.IntVarP(&o.RankingsPassagesPromptTokenMean, "rankings-passages-prompt-token-mean", "", d.RankingsPassagesPromptTokenMean, "tokens per synthetic passage (mean)")
	fs.Float64VarP(&o.RankingsPassagesPromptTokenStddev, "rankings-passages-prompt-token-stddev", "", 0, "tokens per synthetic passage (stddev)")
	fs.IntVarP(&o.RankingsQueryPromptTokenMean, "rankings-query-prompt-token-mean", "", d.RankingsQueryPromptTokenMean, "tokens per synthetic query (mean)")
	fs.Float64VarP(&o.RankingsQueryPromptTokenStddev, "rankings-query-prompt-token-stddev", "", 0, "tokens per synthetic query (stddev)")

	// Load
	fs.IntVarP(&o.Concurrency, "concurrency", "", 0, "sessions in flight: alone a closed loop (default 1), with a rate a ceiling")
	fs.Float64VarP(&o.RequestRate, "request-rate", "", 0, "requests per second")
	fs.StringVarP(&o.ArrivalPattern, "arrival-pattern", "", d.ArrivalPattern, "constant|poisson|gamma")
	fs.Float64VarP(&o.ArrivalSmoothness, "arrival-smoothness", "", d.ArrivalSmoothness, "gamma shape: 1 Poisson, <1 burstier, >1 smoother")
	fs.Float64VarP(&o.RequestRateRampDuration, "request-rate-ramp-duration", "", 0, "seconds to ramp the rate up linearly")
	fs.Float64VarP(&o.ConcurrencyRampDuration, "concurrency-ramp-duration", "", 0, "seconds to ramp concurrency up one slot at a time, from the profile's start")
	fs.IntVarP(&o.PrefillConcurrency, "prefill-concurrency", "", 0, "most requests in prefill at once: sent, no response byte back yet (disaggregated serving; needs --streaming)")
	fs.Float64VarP(&o.PrefillConcurrencyRampDuration, "prefill-concurrency-ramp-duration", "", 0, "seconds to ramp --prefill-concurrency up one slot at a time")
	fs.IntVarP(&o.RequestCount, "request-count", "", 0, "profile requests (default max(10, 2·concurrency) for synthetic data)")
	fs.Float64VarP(&o.BenchmarkDuration, "benchmark-duration", "", 0, "seconds of planned instants")
	fs.IntVarP(&o.WarmupRequestCount, "warmup-request-count", "", 0, "unmeasured requests sent first")
	fs.IntVarP(&o.NumWarmupSessions, "num-warmup-sessions", "", 0, "unmeasured sessions sent first")
	fs.Float64VarP(&o.WarmupDuration, "warmup-duration", "", 0, "seconds of unmeasured planned instants sent first (needs a rate, or a warmup count)")
	fs.IntVarP(&o.WarmupConcurrency, "warmup-concurrency", "", 0, "the warmup's concurrency (default: --concurrency)")
	fs.Float64VarP(&o.WarmupRequestRate, "warmup-request-rate", "", 0, "warmup requests per second (with --request-rate; default: the profile's)")
	fs.StringVarP(&o.WarmupArrivalPattern, "warmup-arrival-pattern", "", "", `warmup arrivals: constant|poisson|gamma (with --request-rate; "": the profile's)`)
	fs.IntVarP(&o.WarmupPrefillConcurrency, "warmup-prefill-concurrency", "", 0, "the warmup's --prefill-concurrency (default: the profile's)")
	fs.Float64VarP(&o.WarmupConcurrencyRampDuration, "warmup-concurrency-ramp-duration", "", 0, "seconds to ramp the warmup's concurrency, from the run's start (default: --concurrency-ramp-duration)")
	fs.Float64VarP(&o.WarmupPrefillConcurrencyRampDuration, "warmup-prefill-concurrency-ramp-duration", "", 0, "seconds to ramp the warmup's prefill concurrency (default: --prefill-concurrency-ramp-duration)")
	fs.Float64VarP(&o.WarmupRequestRateRampDuration, "warmup-request-rate-ramp-duration", "", 0, "seconds to ramp the warmup's request rate (default: --request-rate-ramp-duration)")
	fs.Float64VarP(&o.RequestCancellationRate, "request-cancellation-rate", "", 0, "percent of requests to cancel")
	fs.Float64VarP(&o.RequestCancellationDelay, "request-cancellation-delay", "", 0, "seconds after sending before cancelling")
	fs.Float64VarP(&o.UserCentricRate, "user-centric-rate", "", 0, "requests per second over --num-users users, each on a fixed per-user gap")
	fs.IntVarP(&o.NumUsers, "num-users", "", 0, "simulated users for --user-centric-rate")
	f.defineMedia(recorder{set, f, true})
}

// defineMedia defines AIPerf's image, audio and video input flags, with its defaults.
func (f *Flags) defineMedia(fs recorder) {
	o := &f.O.Media
	d := media.DefaultOptions()
	*o = d
	im, au, vi := &o.Image, &o.Audio, &o.Video
	fs.Float64VarP(&im.WidthMean, "image-width-mean", "", 0, "synthetic image width in pixels (mean; 0: no images)")
	fs.Float64VarP(&im.WidthStddev, "image-width-stddev", "", 0, "synthetic image width (stddev)")
	fs.Float64VarP(&im.HeightMean, "image-height-mean", "", 0, "synthetic image height in pixels (mean; 0: no images)")
	fs.Float64VarP(&im.HeightStddev, "image-height-stddev", "", 0, "synthetic image height (stddev)")
	fs.IntVarP(&im.BatchSize, "image-batch-size", "", d.Image.BatchSize, "images per request")
	fs.StringVarP(&im.Format, "image-format", "", d.Image.Format, "png|jpeg|random (drawn per image)")
	fs.StringVarP(&im.Source, "image-source", "", d.Image.Source, "noise (random pixels) or a directory of images, resized to the drawn size")
	fs.StringVarP(&im.Sampling, "image-source-sampling", "", d.Image.Sampling, "how --image-source files are picked: random-with-replacement|shuffle-cycle|sequential-cycle")

	fs.Float64VarP(&au.LengthMean, "audio-length-mean", "", 0, "synthetic audio clip seconds (mean; 0: no audio)")
	fs.Float64VarP(&au.LengthStddev, "audio-length-stddev", "", 0, "synthetic audio clip seconds (stddev)")
	fs.StringVarP(&au.Format, "audio-format", "", d.Audio.Format, "wav|mp3 (mp3 needs ffmpeg with libmp3lame)")
	fs.IntSliceVarP(&au.Depths, "audio-depths", "", d.Audio.Depths, "bit depths drawn from, per clip (8,16,24,32)")
	fs.Float64SliceVarP(&au.SampleRates, "audio-sample-rates", "", d.Audio.SampleRates, "sample rates in kHz drawn from, per clip")
	fs.IntVarP(&au.NumChannels, "audio-num-channels", "", d.Audio.NumChannels, "1 or 2")
	fs.IntVarP(&au.BatchSize, "audio-batch-size", "", d.Audio.BatchSize, "audio clips per request")

	fs.IntVarP(&vi.Width, "video-width", "", 0, "synthetic video frame width (0: no video; needs ffmpeg at plan time)")
	fs.IntVarP(&vi.Height, "video-height", "", 0, "synthetic video frame height (0: no video)")
	fs.Float64VarP(&vi.FPS, "video-fps", "", d.Video.FPS, "video frames per second")
	fs.Float64VarP(&vi.Duration, "video-duration", "", d.Video.Duration, "video seconds")
	fs.StringVarP(&vi.SynthType, "video-synth-type", "", d.Video.SynthType, "moving_shapes|grid_clock|noise")
	fs.StringVarP(&vi.Format, "video-format", "", d.Video.Format, "webm|mp4")
	fs.StringVarP(&vi.Codec, "video-codec", "", "", `ffmpeg encoder, e.g. libvpx-vp9, libx264, h264_nvenc ("": libvpx-vp9 for webm, libx264 for mp4)`)
	fs.IntVarP(&vi.BatchSize, "video-batch-size", "", d.Video.BatchSize, "videos per request")
}

// Spec records every flag after defaults by canonical name, typed as the flag is: the
// offsets not given are nil, the later flags at their defaults and, without synthetic media,
// the media flags are left out. Call it once the command line's values are in f and o
// (the options a compile gets).
func (f *Flags) Spec(o *Options) map[string]any {
	m := make(map[string]any)
	for _, fd := range f.fields {
		if notInSpec[fd.name] || (fd.media && !o.Media.Enabled()) {
			continue
		}
		var v any
		switch p := fd.ptr.(type) {
		case *bool:
			v = *p
		case *int:
			v = *p
		case *int64:
			v = *p
		case *uint64:
			v = *p
		case *float64:
			v = *p
		case *string:
			v = *p
		case *[]string:
			v = recordedStrings(*p)
		case *[]int:
			v = listWords(*p, "%d")
		case *[]float64:
			v = listWords(*p, "%f")
		}
		switch {
		case fd.name == "fixed-schedule-start-offset" && o.FixedScheduleStartOffset == nil,
			fd.name == "fixed-schedule-end-offset" && o.FixedScheduleEndOffset == nil:
			v = nil
		case laterFlags[fd.name] && fmt.Sprint(v) == fmt.Sprint(fd.def):
			continue
		}
		m[fd.name] = v
	}
	return m
}

// recordedStrings is a repeatable string flag as the spec has always recorded it: the values
// read back from the comma-separated form the flag prints, or that form when it does not
// read back.
func recordedStrings(a []string) any {
	b := &bytes.Buffer{}
	w := csv.NewWriter(b)
	_ = w.Write(a)
	w.Flush()
	s := strings.TrimSuffix(b.String(), "\n")
	if s == "" {
		return []string{}
	}
	rec, err := csv.NewReader(strings.NewReader(s)).Read()
	if err != nil {
		return "[" + s + "]"
	}
	if rec == nil {
		return []string{}
	}
	return rec
}

// listWords is a list flag as it prints: [v1,v2] each in the verb's format.
func listWords[T any](a []T, verb string) string {
	out := make([]string, len(a))
	for i, v := range a {
		out[i] = fmt.Sprintf(verb, v)
	}
	return "[" + strings.Join(out, ",") + "]"
}

// recorder defines each flag on a FlagSet and notes it in the table Spec reads.
type recorder struct {
	fs    FlagSet
	f     *Flags
	media bool
}

func (r recorder) note(name string, p, def any) {
	r.f.fields = append(r.f.fields, field{name: name, ptr: p, def: def, media: r.media})
}

func (r recorder) BoolVarP(p *bool, name, short string, v bool, usage string) {
	r.note(name, p, v)
	r.fs.BoolVarP(p, name, short, v, usage)
}

func (r recorder) IntVarP(p *int, name, short string, v int, usage string) {
	r.note(name, p, v)
	r.fs.IntVarP(p, name, short, v, usage)
}

func (r recorder) Int64VarP(p *int64, name, short string, v int64, usage string) {
	r.note(name, p, v)
	r.fs.Int64VarP(p, name, short, v, usage)
}

func (r recorder) Uint64VarP(p *uint64, name, short string, v uint64, usage string) {
	r.note(name, p, v)
	r.fs.Uint64VarP(p, name, short, v, usage)
}

func (r recorder) Float64VarP(p *float64, name, short string, v float64, usage string) {
	r.note(name, p, v)
	r.fs.Float64VarP(p, name, short, v, usage)
}

func (r recorder) StringVarP(p *string, name, short string, v string, usage string) {
	r.note(name, p, v)
	r.fs.StringVarP(p, name, short, v, usage)
}

func (r recorder) StringArrayVarP(p *[]string, name, short string, v []string, usage string) {
	r.note(name, p, v)
	r.fs.StringArrayVarP(p, name, short, v, usage)
}

func (r recorder) IntSliceVarP(p *[]int, name, short string, v []int, usage string) {
	r.note(name, p, v)
	r.fs.IntSliceVarP(p, name, short, v, usage)
}

func (r recorder) Float64SliceVarP(p *[]float64, name, short string, v []float64, usage string) {
	r.note(name, p, v)
	r.fs.Float64SliceVarP(p, name, short, v, usage)
}
