package cli

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/plan"
	"github.com/llmbench/llmbench/plan/dataset"
	"github.com/llmbench/llmbench/tokenizer"
)

// notInSpec are flags that say where to write or how to fetch, not what to plan: leaving
// them out of the recorded spec keeps two compiles to different paths byte-identical.
// (--tokenizer-revision still reaches analyze: the tokenizer's name in the plan's meta is
// "org/name@revision" when a revision other than main was asked for.)
var notInSpec = map[string]bool{"output": true, "help": true, "help-all": true, "version": true, "tokenizer-revision": true, "tokenizer-trust-remote-code": true, "max-plan-bytes": true}

// Plan is the flag set of the plan compiler (`plan [flags] -o FILE`) and the options it fills.
type Plan struct {
	// FS holds the flags; compose it into a larger set with AddFlagSet.
	FS *pflag.FlagSet
	// O receives the flags that map one to one onto plan.Options.
	O  plan.Options
	cf planFlags
}

// planFlags holds the flags that do not map one to one onto plan.Options.
type planFlags struct {
	src             plan.Source
	extraInputs     []string
	payloadTemplate string
	seed            uint64
	startOffset     int64
	endOffset       int64
	help            bool
	helpAll         *bool
}

// NewPlan defines the plan flags, with AIPerf's names and defaults, on a new set.
func NewPlan() *Plan {
	p := &Plan{FS: NewFlagSet("plan"), O: plan.DefaultOptions()}
	fs, o, cf := p.FS, &p.O, &p.cf
	d := plan.DefaultOptions()

	fs.StringVarP(&o.Output, "output", "o", "", "plan file to write (required by plan)")
	fs.BoolVarP(&cf.help, "help", "h", false, "print this help")
	cf.helpAll = AddHelpAll(fs)
	fs.Int64Var(&o.MaxPlanBytes, "max-plan-bytes", plan.DefaultMaxPlanBytes, "refuse, before compiling, a plan whose estimated file or compiler memory is larger than this many bytes (docs/plan-format.md \"Bounds\")")

	// Endpoint
	fs.StringVarP(&o.Model, "model", "m", "", "model name put in every request body (required); a comma list a,b gives each dataset turn one")
	fs.StringVar(&o.ModelSelectionStrategy, "model-selection-strategy", d.ModelSelectionStrategy, "which model of a --model list a dataset turn gets: round_robin|random")
	fs.StringVar(&o.EndpointType, "endpoint-type", d.EndpointType, "API type: "+strings.Join(endpoint.Names(), ", "))
	fs.StringVar(&o.CustomEndpoint, "custom-endpoint", "", "URL path overriding the endpoint type's default")
	fs.BoolVar(&o.Streaming, "streaming", false, "ask for streamed (SSE) responses")
	fs.BoolVar(&o.UseLegacyMaxTokens, "use-legacy-max-tokens", false, "send max_tokens instead of max_completion_tokens")
	fs.BoolVar(&o.UseServerTokenCount, "use-server-token-count", false, "ask streaming responses for usage (stream_options.include_usage)")
	fs.StringArrayVar(&cf.extraInputs, "extra-inputs", nil, "k:v merged into every body, v typed as JSON (ignore_eos:true); repeatable, or a JSON object")
	fs.StringVar(&cf.payloadTemplate, "payload-template", "", "template endpoint: Go text/template of each body (sees .Model .Prompt .Messages .MaxTokens .Streaming .Query .Passages .Texts .Extra and func json), or @FILE; also --extra-inputs payload_template:...")
	fs.StringVar(&o.ResponseField, "response-field", "", "raw/template: dotted path to the output text in each response event or body, e.g. choices.0.delta.content (default: detect the shape); also --extra-inputs response_field:...")
	fs.StringVar(&cf.src.Tokenizer, "tokenizer", "", `"builtin", a tokenizer.json path or folder, or a HuggingFace model id (cached, else downloaded; default: the model id if it has a "/", else builtin)`)
	fs.StringVar(&cf.src.TokenizerRevision, "tokenizer-revision", "", `branch, tag or commit of a HuggingFace tokenizer ("": main)`)
	fs.BoolVar(&cf.src.TrustRemoteCode, "tokenizer-trust-remote-code", false, "accepted for AIPerf command lines; only tokenizer.json is ever read, no code runs")

	// Input
	fs.StringVar(&cf.src.InputFile, "input-file", "", "dataset or trace file (folder for random_pool/raw_payload)")
	fs.StringVar(&cf.src.DatasetType, "custom-dataset-type", "", "input format: "+strings.Join(dataset.FileTypes(), ", ")+` ("" detects it)`)
	fs.StringVar(&cf.src.PublicDataset, "public-dataset", "", "a public dataset by name (needs network: not supported, use --input-file)")
	fs.IntVar(&cf.src.BlockSize, "isl-block-size", 0, "tokens per hash_id block of traces (0: the format's default, 512 or 16)")
	fs.IntVar(&cf.src.MaxLineBytes, "max-line-bytes", dataset.DefaultMaxLineBytes, "refuse an input line longer than this many bytes (line-based formats; docs/datasets.md \"Line limit\")")
	fs.StringVar(&o.SamplingStrategy, "dataset-sampling-strategy", "", `sequential|random|shuffle ("": shuffle for synthetic, sequential for files)`)
	fs.Uint64Var(&cf.seed, "random-seed", 0, "root of every random stream (fixed: the same flags give the same plan)")

	// Fixed schedule
	fs.BoolVar(&o.FixedSchedule, "fixed-schedule", false, "replay the input's timestamps (automatic for timed inputs without --request-rate)")
	fs.BoolVar(&o.NoFixedSchedule, "no-fixed-schedule", false, "do not replay a timed input's timestamps unasked (closed loop instead)")
	fs.BoolVar(&o.FixedScheduleAutoOffset, "fixed-schedule-auto-offset", false, "shift the first timestamp to 0")
	fs.Int64Var(&cf.startOffset, "fixed-schedule-start-offset", 0, "replay from this input timestamp (ms)")
	fs.Int64Var(&cf.endOffset, "fixed-schedule-end-offset", 0, "replay up to this input timestamp (ms)")
	fs.Float64Var(&o.SynthesisSpeedupRatio, "synthesis-speedup-ratio", d.SynthesisSpeedupRatio, "divide input timestamps and delays by this")

	// Agentic workloads (weka_trace, dag_jsonl)
	fs.Float64Var(&o.TraceIdleGapCapSeconds, "trace-idle-gap-cap-seconds", 0, "weka_trace: shorten every longer gap between request starts of a session to this many seconds (AgentX: 10; 0: none)")
	fs.Float64Var(&o.TrajectoryStartMinRatio, "trajectory-start-min-ratio", 0, "weka_trace closed loop: the first --concurrency sessions start at a point drawn in [min, max] of their trace")
	fs.Float64Var(&o.TrajectoryStartMaxRatio, "trajectory-start-max-ratio", 0, "weka_trace closed loop: see --trajectory-start-min-ratio (both 0: every session from its start)")
	fs.StringVar(&o.CacheBust, "cache-bust", "none", "agentic inputs: a marker per session before the first user text (first_turn_prefix) or the first message (system_prefix) of its bodies; none")
	fs.Float64Var(&cf.src.Synthesis.PromptLenMultiplier, "synthesis-prompt-len-multiplier", 1, "traces: scale each row's unshared input tokens (after its shared hash_id prefix)")
	fs.Float64Var(&cf.src.Synthesis.PrefixLenMultiplier, "synthesis-prefix-len-multiplier", 1, "traces: stretch each row's shared hash_id prefix (shared blocks stay shared)")
	fs.IntVar(&cf.src.Synthesis.PrefixRootMultiplier, "synthesis-prefix-root-multiplier", 1, "traces: independent copies of the prefix trees, one drawn per session")
	fs.Float64Var(&cf.src.Synthesis.OutputLenMultiplier, "synthesis-output-len-multiplier", 1, "traces: scale each recorded output_length")
	fs.IntVar(&cf.src.Synthesis.MaxISL, "synthesis-max-isl", 0, "traces: drop rows with more input tokens (0: none)")
	fs.IntVar(&cf.src.Synthesis.MaxOSL, "synthesis-max-osl", 0, "traces: cap output lengths (0: no cap)")

	// Conversations
	fs.IntVar(&o.NumSessions, "num-sessions", 0, "number of sessions to send (excludes --request-count)")
	fs.IntVar(&o.NumDatasetEntries, "num-dataset-entries", d.NumDatasetEntries, "distinct synthetic conversations the requests sample from (0: one per session, so no prompt repeats; AIPerf's default is 100)")
	fs.IntVar(&o.ConversationTurnMean, "conversation-turn-mean", d.ConversationTurnMean, "turns per synthetic session (mean)")
	fs.Float64Var(&o.ConversationTurnStddev, "conversation-turn-stddev", 0, "turns per synthetic session (stddev)")
	fs.Float64Var(&o.ConversationTurnDelayMean, "conversation-turn-delay-mean", 0, "think time before a later turn, ms (mean)")
	fs.Float64Var(&o.ConversationTurnDelayStddev, "conversation-turn-delay-stddev", 0, "think time before a later turn, ms (stddev)")
	fs.Float64Var(&o.ConversationTurnDelayRatio, "conversation-turn-delay-ratio", d.ConversationTurnDelayRatio, "scale of the think time")
	fs.Float64Var(&o.InterTurnDelayCapSeconds, "inter-turn-delay-cap-seconds", 0, "cap every think time (recorded or synthetic) at this many seconds (0: no cap)")
	fs.StringVar(&o.ConversationHistory, "conversation-history", d.ConversationHistory, "compiled (bodies hold the whole conversation) | live (replay splices real responses)")

	// Prompts
	fs.IntVar(&o.ISLMean, "synthetic-input-tokens-mean", d.ISLMean, "synthetic prompt tokens (mean)")
	fs.Float64Var(&o.ISLStddev, "synthetic-input-tokens-stddev", 0, "synthetic prompt tokens (stddev)")
	fs.IntVar(&o.OSLMean, "output-tokens-mean", 0, "requested output tokens (mean; 0 leaves max tokens unset)")
	fs.Float64Var(&o.OSLStddev, "output-tokens-stddev", 0, "requested output tokens (stddev)")
	fs.Float64Var(&o.RandomRangeRatio, "random-range-ratio", 0, "draw ISL and OSL uniformly within ±ratio of the means")
	fs.StringVar(&o.RandomRangeRatioMode, "random-range-ratio-mode", d.RandomRangeRatioMode, "range bounds: vllm|sglang")
	fs.StringVar(&o.SeqDist, "seq-dist", "", `ISL,OSL mixture, e.g. "128,64:25;512|20,128:75"`)
	fs.IntVar(&o.SharedSystemPromptLength, "shared-system-prompt-length", 0, "tokens of one system prompt shared by all sessions")
	fs.IntVar(&o.UserContextPromptLength, "user-context-prompt-length", 0, "tokens of a per-session user context")
	fs.IntVar(&o.PromptPrefixPoolSize, "prompt-prefix-pool-size", 0, "number of random prefixes, one prepended per session")
	fs.IntVar(&o.PromptPrefixLength, "prompt-prefix-length", 0, "tokens per prefix")

	fs.StringVar(&cf.src.PromptCorpus, "prompt-corpus", "shakespeare", "synthetic text source: shakespeare (the embedded corpus) or a text file")
	fs.IntVarP(&o.PromptBatchSize, "prompt-batch-size", "b", 1, "texts per synthetic embeddings request (embeddings, nim_embeddings, template)")

	// Rankings (synthetic requests of the *_rankings endpoint types)
	fs.IntVar(&o.RankingsPassagesMean, "rankings-passages-mean", d.RankingsPassagesMean, "passages per synthetic ranking request (mean)")
	fs.Float64Var(&o.RankingsPassagesStddev, "rankings-passages-stddev", 0, "passages per synthetic ranking request (stddev)")
	fs.IntVar(&o.RankingsPassagesPromptTokenMean, "rankings-passages-prompt-token-mean", d.RankingsPassagesPromptTokenMean, "tokens per synthetic passage (mean)")
	fs.Float64Var(&o.RankingsPassagesPromptTokenStddev, "rankings-passages-prompt-token-stddev", 0, "tokens per synthetic passage (stddev)")
	fs.IntVar(&o.RankingsQueryPromptTokenMean, "rankings-query-prompt-token-mean", d.RankingsQueryPromptTokenMean, "tokens per synthetic query (mean)")
	fs.Float64Var(&o.RankingsQueryPromptTokenStddev, "rankings-query-prompt-token-stddev", 0, "tokens per synthetic query (stddev)")

	// Load
	fs.IntVar(&o.Concurrency, "concurrency", 0, "sessions in flight: alone a closed loop (default 1), with a rate a ceiling")
	fs.Float64Var(&o.RequestRate, "request-rate", 0, "requests per second")
	fs.StringVar(&o.ArrivalPattern, "arrival-pattern", d.ArrivalPattern, "constant|poisson|gamma")
	fs.Float64Var(&o.ArrivalSmoothness, "arrival-smoothness", d.ArrivalSmoothness, "gamma shape: 1 Poisson, <1 burstier, >1 smoother")
	fs.Float64Var(&o.RequestRateRampDuration, "request-rate-ramp-duration", 0, "seconds to ramp the rate up linearly")
	fs.Float64Var(&o.ConcurrencyRampDuration, "concurrency-ramp-duration", 0, "seconds to ramp concurrency up one slot at a time, from the profile's start")
	fs.IntVar(&o.PrefillConcurrency, "prefill-concurrency", 0, "most requests in prefill at once: sent, no response byte back yet (disaggregated serving; needs --streaming)")
	fs.Float64Var(&o.PrefillConcurrencyRampDuration, "prefill-concurrency-ramp-duration", 0, "seconds to ramp --prefill-concurrency up one slot at a time")
	fs.IntVar(&o.RequestCount, "request-count", 0, "profile requests (default max(10, 2·concurrency) for synthetic data)")
	fs.Float64Var(&o.BenchmarkDuration, "benchmark-duration", 0, "seconds of planned instants")
	fs.IntVar(&o.WarmupRequestCount, "warmup-request-count", 0, "unmeasured requests sent first")
	fs.IntVar(&o.NumWarmupSessions, "num-warmup-sessions", 0, "unmeasured sessions sent first")
	fs.Float64Var(&o.WarmupDuration, "warmup-duration", 0, "seconds of unmeasured planned instants sent first (needs a rate, or a warmup count)")
	fs.IntVar(&o.WarmupConcurrency, "warmup-concurrency", 0, "the warmup's concurrency (default: --concurrency)")
	fs.Float64Var(&o.WarmupRequestRate, "warmup-request-rate", 0, "warmup requests per second (with --request-rate; default: the profile's)")
	fs.StringVar(&o.WarmupArrivalPattern, "warmup-arrival-pattern", "", `warmup arrivals: constant|poisson|gamma (with --request-rate; "": the profile's)`)
	fs.IntVar(&o.WarmupPrefillConcurrency, "warmup-prefill-concurrency", 0, "the warmup's --prefill-concurrency (default: the profile's)")
	fs.Float64Var(&o.WarmupConcurrencyRampDuration, "warmup-concurrency-ramp-duration", 0, "seconds to ramp the warmup's concurrency, from the run's start (default: --concurrency-ramp-duration)")
	fs.Float64Var(&o.WarmupPrefillConcurrencyRampDuration, "warmup-prefill-concurrency-ramp-duration", 0, "seconds to ramp the warmup's prefill concurrency (default: --prefill-concurrency-ramp-duration)")
	fs.Float64Var(&o.WarmupRequestRateRampDuration, "warmup-request-rate-ramp-duration", 0, "seconds to ramp the warmup's request rate (default: --request-rate-ramp-duration)")
	fs.Float64Var(&o.RequestCancellationRate, "request-cancellation-rate", 0, "percent of requests to cancel")
	fs.Float64Var(&o.RequestCancellationDelay, "request-cancellation-delay", 0, "seconds after sending before cancelling")
	fs.Float64Var(&o.UserCentricRate, "user-centric-rate", 0, "requests per second over --num-users users, each on a fixed per-user gap")
	fs.IntVar(&o.NumUsers, "num-users", 0, "simulated users for --user-centric-rate")
	addMediaFlags(fs, &o.Media) // images, audio, video: cli/media.go
	return p
}

// Help reports whether --help was given.
func (p *Plan) Help() bool { return p.cf.help || *p.cf.helpAll }

// HelpAll tells whether --help-all was given: the help with every compatibility flag described.
func (p *Plan) HelpAll() bool { return *p.cf.helpAll }

// Seed is the --random-seed in effect.
func (p *Plan) Seed() uint64 { return p.cf.seed }

// TokenizerSpec is the tokenizer the plan is compiled with (--tokenizer, else the model id).
func (p *Plan) TokenizerSpec() string { return p.cf.src.TokenizerSpec(p.O.Model) }

// Validate checks the flags on their own (no tokenizer, no input read), so a typo fails at
// once; the input-dependent checks follow in Compile.
func (p *Plan) Validate() error {
	o := p.O
	if err := p.cf.apply(p.FS, &o); err != nil {
		return err
	}
	if p.cf.src.InputFile != "" {
		o.Dataset = &dataset.Dataset{} // stands for the input until it is loaded: skips the synthetic-only checks
	}
	return o.Validate()
}

// Compile loads the tokenizer and the input, compiles the plan to p.O.Output and prints the
// one-line summary on stdout; notices (the builtin tokenizer standing in for a model id,
// downloads) go to stderr. It returns the exit status: 0, 1 failed, 2 bad input (said on
// stderr in one line "plan: ...").
func (p *Plan) Compile(getenv func(string) string, stdout, stderr io.Writer) int {
	o := p.O
	cf := &p.cf
	if err := cf.apply(p.FS, &o); err != nil {
		return fail(stderr, 2, err)
	}
	tokSpec := cf.src.TokenizerSpec(o.Model)
	if cf.src.InputFile != "" {
		o.Dataset = &dataset.Dataset{}
	}
	if err := o.Validate(); err != nil {
		return fail(stderr, 2, err)
	}
	o.Dataset = nil

	lo := tokenizer.EnvLoadOptions(getenv)
	lo.Revision, lo.TrustRemoteCode, lo.Progress = cf.src.TokenizerRevision, cf.src.TrustRemoteCode, stderr
	tok, err := tokenizer.LoadWithOptions(tokSpec, lo)
	if err != nil {
		return fail(stderr, 2, fmt.Errorf("--tokenizer: %w", err))
	}
	o.Tokenizer = tok
	if o.Corpus, err = cf.src.Corpus(tok); err != nil {
		code := 1 // the embedded corpus failing is ours
		if cf.src.PromptCorpus != "shakespeare" {
			code = 2
		}
		return fail(stderr, code, err)
	}
	if cf.src.InputFile != "" {
		o.Dataset, err = cf.src.LoadDataset(&o)
		if err != nil {
			return fail(stderr, 2, err)
		}
		if o.Dataset.LiveReplies && !Changed(p.FS, "conversation-history") {
			// dag_jsonl bodies carry the actual replies (AIPerf's semantics): live unless asked
			// otherwise, which plan.Compile then refuses naming the flag.
			o.ConversationHistory = "live"
			p.FS.Set("conversation-history", "live")
		}
	}
	o.Spec = spec(p.FS)
	o.Notice = func(msg string) { fmt.Fprintf(stderr, "plan: %s\n", msg) }
	dropMediaSpec(o.Spec, &o.Media) // cli/media.go
	dropLaterSpec(o.Spec, p.FS)
	res, err := plan.Compile(o)
	if err != nil {
		code := 1
		if errors.Is(err, plan.ErrUsage) {
			code = 2
		}
		return fail(stderr, code, err)
	}
	fmt.Fprintf(stdout, "plan: wrote %s: %d requests (%d warmup, %d profile), %d sessions, %d distinct bodies, %s, seed %d; sha256 %s\n",
		o.Output, res.Warmup+res.Profile, res.Warmup, res.Profile, res.Sessions, res.Bodies, res.Mode, o.Seed, hex.EncodeToString(res.Hash[:]))
	if res.RepeatNote != "" {
		fmt.Fprintf(stdout, "plan: %s\n", res.RepeatNote)
	}
	return 0
}

// apply maps the flags that need conversion onto o.
func (cf *planFlags) apply(fs *pflag.FlagSet, o *plan.Options) error {
	o.Seed = cf.seed
	if Changed(fs, "fixed-schedule-start-offset") {
		o.FixedScheduleStartOffset = &cf.startOffset
	}
	if Changed(fs, "fixed-schedule-end-offset") {
		o.FixedScheduleEndOffset = &cf.endOffset
	}
	if err := cf.src.Check(); err != nil {
		return err
	}
	if cf.src.InputFile == "" {
		for _, name := range []string{"custom-dataset-type", "isl-block-size", "synthesis-prompt-len-multiplier", "synthesis-prefix-len-multiplier", "synthesis-prefix-root-multiplier", "synthesis-output-len-multiplier", "synthesis-max-isl", "synthesis-max-osl"} {
			if Changed(fs, name) {
				return fmt.Errorf("--%s needs --input-file", name)
			}
		}
	}
	extra, err := plan.ParseExtraInputs(cf.extraInputs)
	if err != nil {
		return err
	}
	// AIPerf passes the template and the response field as extra inputs; they configure the
	// plan and are not body members. Moving them onto the flags also records them in the spec
	// under the flag names, where analyze looks for the response field.
	lift := []struct{ key, flag string }{{"payload_template", "payload-template"}, {"response_field", "response-field"}}
	for _, l := range lift {
		v, ok := extra[l.key]
		if !ok || (l.key == "payload_template" && o.EndpointType != "template") ||
			(l.key == "response_field" && o.EndpointType != "raw" && o.EndpointType != "template") {
			continue
		}
		str, isStr := v.(string)
		if !isStr && l.key == "payload_template" {
			// A template without actions can be valid JSON, which ParseExtraInputs decoded:
			// take it back as text.
			b, err := json.Marshal(v)
			if err != nil {
				return fmt.Errorf("--extra-inputs %s: %w", l.key, err)
			}
			str, isStr = string(b), true
		}
		if !isStr {
			return fmt.Errorf("--extra-inputs %s: want a string", l.key)
		}
		// The same value is what an earlier apply put there (profile applies once to check
		// the flags and once per compile).
		if Changed(fs, l.flag) && fs.Lookup(l.flag).Value.String() != str {
			return fmt.Errorf("--%s and --extra-inputs %s are both given", l.flag, l.key)
		}
		if err := fs.Set(l.flag, str); err != nil {
			return fmt.Errorf("--extra-inputs %s: %w", l.key, err)
		}
		delete(extra, l.key)
	}
	if len(extra) == 0 {
		extra = nil
	}
	o.ExtraInputs = extra
	o.PayloadTemplate, err = plan.ReadPayloadTemplate(cf.payloadTemplate)
	return err
}

// spec records every flag after defaults by canonical name, typed; offsets that were not
// given are nil.
func spec(fs *pflag.FlagSet) map[string]any {
	m := make(map[string]any)
	fs.VisitAll(func(f *pflag.Flag) {
		if notInSpec[f.Name] {
			return
		}
		var v any
		var err error
		switch f.Value.Type() {
		case "bool":
			v, err = fs.GetBool(f.Name)
		case "int":
			v, err = fs.GetInt(f.Name)
		case "int64":
			v, err = fs.GetInt64(f.Name)
		case "uint64":
			v, err = fs.GetUint64(f.Name)
		case "float64":
			v, err = fs.GetFloat64(f.Name)
		case "stringArray":
			var a []string
			a, err = fs.GetStringArray(f.Name)
			if a == nil {
				a = []string{}
			}
			v = a
		default:
			v = f.Value.String()
		}
		if err != nil {
			v = f.Value.String()
		}
		if (f.Name == "fixed-schedule-start-offset" || f.Name == "fixed-schedule-end-offset") && !f.Changed {
			v = nil
		}
		m[f.Name] = v
	})
	return m
}

// laterFlags are plan flags added after plans were first shared: at their defaults they
// are left out of the spec, so a plan that does not use them keeps the bytes, and the hash,
// it had before they existed.
var laterFlags = []string{"prefill-concurrency", "prefill-concurrency-ramp-duration", "warmup-prefill-concurrency",
	"warmup-concurrency-ramp-duration", "warmup-prefill-concurrency-ramp-duration", "warmup-request-rate-ramp-duration",
	"trace-idle-gap-cap-seconds", "trajectory-start-min-ratio", "trajectory-start-max-ratio", "cache-bust"}

// dropLaterSpec removes the laterFlags at their defaults from spec.
func dropLaterSpec(spec map[string]any, fs *pflag.FlagSet) {
	for _, n := range laterFlags {
		if f := fs.Lookup(n); f != nil && f.Value.String() == f.DefValue {
			delete(spec, n)
		}
	}
}

// fail prints err as the one line "plan: ..." and returns code.
func fail(w io.Writer, code int, err error) int {
	fmt.Fprintln(w, OneLine("plan", err))
	return code
}
