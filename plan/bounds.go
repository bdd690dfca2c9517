package plan

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/llmbench/llmbench/internal/timespan"
	"github.com/llmbench/llmbench/plan/dataset"
)

// The documented caps of the plan's options (docs/plan-format.md "Bounds"). Each keeps a
// typo in one flag a one-line error instead of an out-of-memory kill, an overflowed instant
// or a run that never ends; the size estimate (estimate.go) then bounds what the flags
// ask for together.
const (
	// MaxSpan bounds every duration flag, every think time and every planned instant: a plan
	// spans at most 365 days (spanWords).
	MaxSpan   = timespan.Max
	spanWords = "365 days"
	// MaxDatasetEntries bounds --num-dataset-entries and --prompt-prefix-pool-size.
	MaxDatasetEntries = 1 << 20
	// MaxTurns bounds --conversation-turn-mean and --conversation-turn-stddev.
	MaxTurns = 1024
	// MaxConcurrency bounds --concurrency, --warmup-concurrency, the prefill caps and --num-users.
	MaxConcurrency = 1 << 20
	// MaxRate bounds the request rates (requests per second): one request per ns.
	MaxRate = 1e9
	// MaxOffsetMs bounds the fixed-schedule offsets (input timestamps in ms): the largest
	// that fits in int64 nanoseconds, so epoch-ms traces can be windowed.
	MaxOffsetMs = math.MaxInt64 / int64(time.Millisecond)
	// MinSmoothness and MaxSmoothness bound --arrival-smoothness (the gamma shape): far
	// below, nearly every gap rounds to 0; above, the arrivals are constant.
	MinSmoothness, MaxSmoothness = 1e-3, 1e3
	// MinSpeedup and MaxSpeedup bound --synthesis-speedup-ratio.
	MinSpeedup, MaxSpeedup = 1e-6, 1e6
	// MaxDelayRatio bounds --conversation-turn-delay-ratio.
	MaxDelayRatio = 1e6
	// DefaultMaxPlanBytes is --max-plan-bytes unless given: the largest estimated plan file
	// or compiler memory (estimate.go) that is compiled.
	DefaultMaxPlanBytes = 4 << 30
)

// maxSpanSeconds and maxSpanMs are MaxSpan in the flags' units.
const (
	maxSpanSeconds = float64(MaxSpan / time.Second)
	maxSpanMs      = float64(MaxSpan / time.Millisecond)
)

// Bound is the documented range of one numeric option, by its flag.
type Bound struct {
	// Flag is the flag's name with its dashes, e.g. "--num-dataset-entries".
	Flag string
	// Min and Max are the inclusive range.
	Min, Max float64
	// Unit says what the value counts ("seconds", "tokens", ...).
	Unit string
}

// String is the range as the error lines write it, e.g. "seconds in [0, 31536000]".
func (b Bound) String() string {
	s := fmt.Sprintf("[%s, %s]", num(b.Min), num(b.Max))
	if b.Unit != "" {
		s = b.Unit + " in " + s
	}
	return s
}

// num formats a bound or a value without an exponent when it is a whole number short
// enough to read.
func num(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e21 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// bounded is a bound and the option's value.
type bounded struct {
	Bound
	v float64
}

// bounds lists every numeric option of o with its bound. The media flags are bounded by
// media.Options.Validate, the synthesis flags by dataset.Synthesis.Check.
func (o *Options) bounds() []bounded {
	const tok, sec, ms, req = "tokens", "seconds", "ms", "requests"
	maxTok := float64(dataset.MaxPromptTokens)
	b := func(flag string, v, lo, hi float64, unit string) bounded {
		return bounded{Bound{Flag: flag, Min: lo, Max: hi, Unit: unit}, v}
	}
	f := func(i int) float64 { return float64(i) }
	out := []bounded{
		b("--num-dataset-entries", f(o.NumDatasetEntries), 0, MaxDatasetEntries, "conversations"),
		b("--num-sessions", f(o.NumSessions), 0, MaxRequests, "sessions"),
		b("--conversation-turn-mean", f(o.ConversationTurnMean), 1, MaxTurns, "turns"),
		b("--conversation-turn-stddev", o.ConversationTurnStddev, 0, MaxTurns, "turns"),
		b("--conversation-turn-delay-mean", o.ConversationTurnDelayMean, 0, maxSpanMs, ms),
		b("--conversation-turn-delay-stddev", o.ConversationTurnDelayStddev, 0, maxSpanMs, ms),
		b("--conversation-turn-delay-ratio", o.ConversationTurnDelayRatio, 0, MaxDelayRatio, ""),
		b("--inter-turn-delay-cap-seconds", o.InterTurnDelayCapSeconds, 0, maxSpanSeconds, sec),
		b("--synthetic-input-tokens-mean", f(o.ISLMean), 0, maxTok, tok),
		b("--synthetic-input-tokens-stddev", o.ISLStddev, 0, maxTok, tok),
		b("--output-tokens-mean", f(o.OSLMean), 0, maxTok, tok),
		b("--output-tokens-stddev", o.OSLStddev, 0, maxTok, tok),
		b("--random-range-ratio", o.RandomRangeRatio, 0, 1, ""),
		b("--shared-system-prompt-length", f(o.SharedSystemPromptLength), 0, maxTok, tok),
		b("--user-context-prompt-length", f(o.UserContextPromptLength), 0, maxTok, tok),
		b("--prompt-prefix-pool-size", f(o.PromptPrefixPoolSize), 0, MaxDatasetEntries, "prefixes"),
		b("--prompt-prefix-length", f(o.PromptPrefixLength), 0, maxTok, tok),
		b("--prompt-batch-size", f(o.PromptBatchSize), 0, maxPassages, "texts"),
		b("--rankings-passages-mean", f(o.RankingsPassagesMean), 0, maxPassages, "passages"),
		b("--rankings-passages-stddev", o.RankingsPassagesStddev, 0, maxPassages, "passages"),
		b("--rankings-passages-prompt-token-mean", f(o.RankingsPassagesPromptTokenMean), 0, maxTok, tok),
		b("--rankings-passages-prompt-token-stddev", o.RankingsPassagesPromptTokenStddev, 0, maxTok, tok),
		b("--rankings-query-prompt-token-mean", f(o.RankingsQueryPromptTokenMean), 0, maxTok, tok),
		b("--rankings-query-prompt-token-stddev", o.RankingsQueryPromptTokenStddev, 0, maxTok, tok),
		b("--concurrency", f(o.Concurrency), 0, MaxConcurrency, "sessions"),
		b("--request-rate", o.RequestRate, 0, MaxRate, "requests/s"),
		b("--arrival-smoothness", o.ArrivalSmoothness, MinSmoothness, MaxSmoothness, ""),
		b("--request-rate-ramp-duration", o.RequestRateRampDuration, 0, maxSpanSeconds, sec),
		b("--concurrency-ramp-duration", o.ConcurrencyRampDuration, 0, maxSpanSeconds, sec),
		b("--request-count", f(o.RequestCount), 0, MaxRequests, req),
		b("--benchmark-duration", o.BenchmarkDuration, 0, maxSpanSeconds, sec),
		b("--warmup-request-count", f(o.WarmupRequestCount), 0, MaxRequests, req),
		b("--num-warmup-sessions", f(o.NumWarmupSessions), 0, MaxRequests, "sessions"),
		b("--warmup-duration", o.WarmupDuration, 0, maxSpanSeconds, sec),
		b("--warmup-concurrency", f(o.WarmupConcurrency), 0, MaxConcurrency, "sessions"),
		b("--warmup-request-rate", o.WarmupRequestRate, 0, MaxRate, "requests/s"),
		b("--prefill-concurrency", f(o.PrefillConcurrency), 0, MaxConcurrency, req),
		b("--prefill-concurrency-ramp-duration", o.PrefillConcurrencyRampDuration, 0, maxSpanSeconds, sec),
		b("--warmup-prefill-concurrency", f(o.WarmupPrefillConcurrency), 0, MaxConcurrency, req),
		b("--warmup-concurrency-ramp-duration", o.WarmupConcurrencyRampDuration, 0, maxSpanSeconds, sec),
		b("--warmup-prefill-concurrency-ramp-duration", o.WarmupPrefillConcurrencyRampDuration, 0, maxSpanSeconds, sec),
		b("--warmup-request-rate-ramp-duration", o.WarmupRequestRateRampDuration, 0, maxSpanSeconds, sec),
		b("--request-cancellation-rate", o.RequestCancellationRate, 0, 100, "percent"),
		b("--request-cancellation-delay", o.RequestCancellationDelay, 0, maxSpanSeconds, sec),
		b("--synthesis-speedup-ratio", o.SynthesisSpeedupRatio, MinSpeedup, MaxSpeedup, ""),
		b("--trace-idle-gap-cap-seconds", o.TraceIdleGapCapSeconds, 0, maxSpanSeconds, sec),
		b("--trajectory-start-min-ratio", o.TrajectoryStartMinRatio, 0, 1, ""),
		b("--trajectory-start-max-ratio", o.TrajectoryStartMaxRatio, 0, 1, ""),
		b("--user-centric-rate", o.UserCentricRate, 0, MaxRate, "requests/s"),
		b("--num-users", f(o.NumUsers), 0, MaxConcurrency, "users"),
		b("--max-plan-bytes", float64(o.MaxPlanBytes), 0, 1<<50, "bytes"), // 0: the default; at most 1 PiB
	}
	for _, p := range []struct {
		flag string
		v    *int64
	}{{"--fixed-schedule-start-offset", o.FixedScheduleStartOffset}, {"--fixed-schedule-end-offset", o.FixedScheduleEndOffset}} {
		v := 0.0
		if p.v != nil {
			v = float64(*p.v)
		}
		out = append(out, b(p.flag, v, 0, float64(MaxOffsetMs), ms))
	}
	return out
}

// Bounds returns the documented range of every numeric option, by flag, in flag order.
func Bounds() []Bound {
	o := DefaultOptions()
	var out []Bound
	for _, x := range o.bounds() {
		out = append(out, x.Bound)
	}
	return out
}

// checkBounds checks every numeric option against its bound: NaN, infinities, negative
// values and values past the cap are refused, naming the flag.
func (o *Options) checkBounds() error {
	for _, x := range o.bounds() {
		if !(x.v >= x.Min && x.v <= x.Max) { // NaN too
			return usagef("%s %s: want %s", x.Flag, num(x.v), x.Bound)
		}
	}
	return nil
}

// checkSpan refuses a plan whose instants would lie more than MaxSpan after its start:
// the planned requests over the rate, plus the ramp (docs/plan-format.md "Bounds").
// Arrival draws can still overrun a span that is close to the bound; the scheduler checks
// every instant it plans (checkedNs).
func (o *Options) checkSpan(turns float64) error {
	span, what, most := 0.0, "", 0.0
	add := func(requests, rate float64, flag string) {
		if requests > 0 && rate > 0 {
			span += requests / rate
			if requests/rate > most { // name the part that spans the most
				most, what = requests/rate, fmt.Sprintf("%s %s for %s requests", flag, num(rate), num(math.Round(requests)))
			}
		}
	}
	rate := o.RequestRate
	switch {
	case o.UserCentricRate > 0:
		rate = o.UserCentricRate
	case rate == 0:
		return nil // closed loop: no instants
	}
	rateFlag := "--request-rate"
	if o.UserCentricRate > 0 {
		rateFlag = "--user-centric-rate"
	}
	wRate, wFlag := rate, rateFlag
	if o.WarmupRequestRate > 0 {
		wRate, wFlag = o.WarmupRequestRate, "--warmup-request-rate"
	}
	switch {
	case o.WarmupRequestCount > 0:
		add(float64(o.WarmupRequestCount), wRate, wFlag)
	case o.NumWarmupSessions > 0:
		add(float64(o.NumWarmupSessions)*turns, wRate, wFlag)
	default:
		span += o.WarmupDuration
	}
	switch {
	case o.BenchmarkDuration > 0:
		span += o.BenchmarkDuration
	case o.RequestCount > 0:
		add(float64(o.RequestCount), rate, rateFlag)
	case o.NumSessions > 0:
		add(float64(o.NumSessions)*turns, rate, rateFlag)
	case o.Dataset == nil:
		add(float64(max(10, 2*o.Concurrency)), rate, rateFlag)
	}
	span += o.RequestRateRampDuration // a linear ramp at most doubles the time of what it covers
	if span > maxSpanSeconds {
		if what == "" {
			what = "the durations"
		}
		return usagef("%s: the schedule would span %s (%s s); a plan spans at most %s (docs/plan-format.md \"Bounds\")",
			what, humanSeconds(span), num(math.Round(span)), spanWords)
	}
	return nil
}

// humanSeconds writes a long span in the largest unit that fits: "317 years", "12 days".
func humanSeconds(s float64) string {
	switch {
	case s >= 365*86400:
		return num(math.Round(s/(365*86400))) + " years"
	case s >= 86400:
		return num(math.Round(s/86400)) + " days"
	}
	return time.Duration(s * float64(time.Second)).Round(time.Second).String()
}

// checkedNs converts an instant or a delay in seconds into ns, or fails when it lies past
// MaxSpan: int64 nanoseconds overflow near 292 years, and a plan spanning more than MaxSpan
// is a mistake, not a benchmark.
func checkedNs(seconds float64, what string) (int64, error) {
	if !(seconds >= 0 && seconds <= maxSpanSeconds) {
		return 0, usagef("plan: %s lies %s (%s s) after the start; a plan spans at most %s (docs/plan-format.md \"Bounds\")",
			what, humanSeconds(seconds), num(math.Round(seconds)), spanWords)
	}
	return int64(math.Round(seconds * 1e9)), nil
}
