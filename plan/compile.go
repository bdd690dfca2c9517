// Package plan compiles a workload (flags, a dataset, a seed) into a plan file: every prompt,
// token count, rendered request body and send instant decided once, deterministically, so
// replay only sends bytes and keeps time. The same Options and inputs give a byte-identical
// file on any machine and at any GOMAXPROCS.
//
// The pieces each answer one question: an Arrival gives the next gap, a Ramp the rate at an
// instant, the length samplers the ISL/OSL of a synthetic turn, Stream the random numbers of
// one named component; schedule.go turns them into instants per timing mode, render.go turns
// dataset turns into bodies through package endpoint, and Compile writes the file. Source
// (source.go) is where the requests come from (input file, tokenizer, prompt corpus), with
// its checks, beside Options; the command only fills both from its flags. Flags (flags.go)
// is the one table of the plan's flags — names, defaults, help — defined on a command's
// flag set through the FlagSet interface (this package never imports pflag), and the
// recorded spec a plan file keeps is read back from the same table (Spec).
package plan

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/plan/dataset"
)

// LiveHistoryMarker stands, in a FlagLiveHistory body, where replay puts the text of an earlier
// response of the same session (see docs/plan-format.md). It is plain ASCII, so JSON encoding
// leaves it intact.
const LiveHistoryMarker = "@@LLMBENCH_PREVIOUS_RESPONSE@@"

// closedLoopPerSlot sizes a closed-loop plan bounded only by --benchmark-duration: room for
// this many requests per second per concurrency slot (requests of 1 ms and more), since how
// many fit depends on the server. Replay stops at the duration.
const closedLoopPerSlot = 1000

// distinctPerSlot is how many distinct synthetic conversations such a closed loop gets per
// second per slot (requests of 100 ms and more) before they repeat, when --num-dataset-entries
// leaves it to the plan: closedLoopPerSlot fresh prompts would make plans of gigabytes.
const distinctPerSlot = 10

// distinctCycle is how many conversations a synthetic plan without --num-dataset-entries
// draws before its sessions start over: 0 (never) unless it is a closed loop bounded only by
// --benchmark-duration, whose request count is room rather than a plan.
func (o *Options) distinctCycle(mode string) int {
	if mode != ModeConcurrency || o.RequestCount > 0 || o.NumSessions > 0 || o.BenchmarkDuration <= 0 {
		return 0
	}
	return max(o.WarmupRequestCount, o.NumWarmupSessions) + int(math.Ceil(o.BenchmarkDuration*float64(max(o.Concurrency, 1))*distinctPerSlot))
}

// Result describes a written plan.
type Result struct {
	// Hash is the plan's identity, the trailing SHA-256.
	Hash [mmapds.HashSize]byte
	// Warmup and Profile count the records of each phase.
	Warmup, Profile int
	// Sessions counts the sessions of both phases.
	Sessions int
	// Bodies counts the distinct request bodies stored.
	Bodies int
	// Mode is the timing mode (Mode* constants).
	Mode string
	// Offer is what the profile phase offers (its rate, its repeated bodies), read back from
	// the file; RepeatNote says how its requests repeat bodies ("" when none does).
	Offer      mmapds.Offer
	RepeatNote string
}

// Compile validates opts, builds or takes the dataset, plans both phases and writes the plan
// file to opts.Output. Errors about the options or the input wrap ErrUsage.
func Compile(opts Options) (*Result, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.Tokenizer == nil {
		return nil, usagef("plan: no tokenizer (--tokenizer)")
	}
	ep, err := endpoint.Lookup(opts.EndpointType)
	if err != nil {
		return nil, usagef("%v", err)
	}
	corpus := opts.Corpus
	if corpus == nil {
		if corpus, err = dataset.LoadCorpus(opts.Tokenizer); err != nil {
			return nil, fmt.Errorf("plan: %w", err)
		}
	}
	streams := Streams(opts.Seed)

	ds := opts.Dataset
	if ds == nil {
		opts.noticeSize(opts.estimate(nil)) // Validate checked it against --max-plan-bytes
	}
	// gen draws a conversation per session while the schedule is made, when the requests do
	// not sample a fixed number of entries (--num-dataset-entries 0, the default).
	var gen *dataset.SyntheticGen
	if ds == nil {
		lengths, err := opts.lengths()
		if err != nil {
			return nil, usagef("%v", err)
		}
		gen, err = dataset.NewSyntheticGen(dataset.SyntheticOptions{
			Corpus:             corpus,
			Entries:            opts.NumDatasetEntries,
			Lengths:            lengths,
			TurnMean:           opts.ConversationTurnMean,
			TurnStddev:         opts.ConversationTurnStddev,
			TurnDelayMeanMs:    opts.ConversationTurnDelayMean,
			TurnDelayStddevMs:  opts.ConversationTurnDelayStddev,
			TurnDelayRatio:     opts.ConversationTurnDelayRatio,
			SharedSystemLength: opts.SharedSystemPromptLength,
			UserContextLength:  opts.UserContextPromptLength,
			PrefixPoolSize:     opts.PromptPrefixPoolSize,
			PrefixLength:       opts.PromptPrefixLength,
			Rankings:           opts.rankingsShape(),
			BatchSize:          opts.PromptBatchSize,
			Stream:             streams,
			Workers:            opts.Workers,
		})
		if err == nil {
			ds = gen.Dataset()
			if opts.NumDatasetEntries > 0 {
				if err = gen.Grow(opts.NumDatasetEntries); err == nil {
					_, err = gen.Fill()
				}
				gen = nil
			}
		}
		if err != nil {
			return nil, fmt.Errorf("plan: %w", err)
		}
	} else {
		if err := opts.graphChecks(ds); err != nil {
			return nil, err
		}
		ds = withOSL(ds, &opts)
		// The input is loaded: what it plans is known before anything is rendered.
		e := opts.estimate(ds)
		if err := opts.checkSize(e); err != nil {
			return nil, err
		}
		opts.noticeSize(e)
	}
	if len(ds.Conversations) == 0 && gen == nil {
		return nil, usagef("plan: the dataset has no conversations")
	}
	for i, c := range ds.Conversations {
		if len(c.Turns) == 0 {
			return nil, usagef("plan: dataset conversation %d (session %q) has no turns", i, c.SessionID)
		}
	}
	if opts.UserCentricRate > 0 && opts.Dataset != nil && !hasMultiTurn(ds) {
		return nil, usagef("--user-centric-rate needs sessions of at least 2 turns; the input has none")
	}

	mode := timingMode(&opts, ds)
	var fixed []fixedSession
	if mode == ModeFixedSchedule {
		if !ds.Timed {
			return nil, usagef("--fixed-schedule: the input (%s) has no timestamps", ds.Name)
		}
		if opts.SamplingStrategy != "" {
			return nil, usagef("--dataset-sampling-strategy does not apply to a fixed schedule, which replays the input in timestamp order")
		}
		if fixed, err = prepareFixed(ds, opts.FixedScheduleAutoOffset, opts.FixedScheduleStartOffset, opts.FixedScheduleEndOffset, opts.SynthesisSpeedupRatio); err != nil {
			return nil, err
		}
		if len(fixed) == 0 {
			return nil, usagef("--fixed-schedule: no request of the input lies in the offset window")
		}
	}
	strategy := opts.SamplingStrategy
	if strategy == "" {
		strategy = "sequential"
		if opts.Dataset == nil {
			strategy = "shuffle"
		}
	}
	arrival, _ := NewArrival(opts.ArrivalPattern, opts.ArrivalSmoothness)

	var pl *plays
	if ds.Graph {
		// Plays may append derived conversations: the compiler works on its own copy.
		cp := *ds
		cp.Conversations = append([]dataset.Conversation(nil), ds.Conversations...)
		ds = &cp
		pl = newPlays(&opts, ds, corpus, mode)
	}
	profile := profileLimits(&opts, ds, mode)
	// With gen, one sampler serves both phases: the profile's sessions follow the warmup's,
	// each with a conversation of its own.
	var fresh *sampler
	if gen != nil {
		fresh = &sampler{fresh: true, cycle: opts.distinctCycle(mode), grow: func(n int) error { return gen.Grow(max(0, n-gen.Len())) }}
	}
	newScheduler := func(phase mmapds.Phase, lim limits, session uint32) *scheduler {
		name := phase.String()
		smp := fresh
		if smp == nil {
			smp = &sampler{strategy: strategy, n: len(ds.Conversations), r: streams("plan.sampler." + name)}
		}
		return &scheduler{
			ds: ds, mode: mode, speedup: opts.SynthesisSpeedupRatio, phase: phase, lim: lim, session: session,
			delayCapNs: int64(math.Round(opts.InterTurnDelayCapSeconds * 1e9)),
			smp:        smp,
			arrival:    arrival, arrRNG: streams("plan.arrival." + name),
			ramp:  NewRamp(opts.RequestRate, opts.RequestRateRampDuration),
			users: opts.NumUsers, ucRate: opts.UserCentricRate, fixed: fixed, plays: pl,
		}
	}
	// Warmup is planned like the profile, on its own streams, and the profile's instants
	// follow where the warmup's schedule ends, on one timeline.
	var reqs []planned
	warm := 0
	var origin int64
	if wl := opts.warmup(); wl != (limits{}) {
		if mode == ModeConcurrency && wl.requests == 0 && wl.sessions == 0 {
			return nil, usagef("--warmup-duration alone cannot size a closed-loop warmup (replay bounds only the profile by time): add --warmup-request-count or --num-warmup-sessions, or plan with --request-rate")
		}
		w := newScheduler(mmapds.PhaseWarmup, wl, 0)
		// The warmup's arrivals and rate ramp are its own, each the profile's unless given
		// (AIPerf's fallbacks), the ramp from the warmup's start.
		rate, ramp := opts.RequestRate, opts.RequestRateRampDuration
		if opts.WarmupRequestRate > 0 {
			rate = opts.WarmupRequestRate
		}
		if opts.WarmupRequestRateRampDuration > 0 {
			ramp = opts.WarmupRequestRateRampDuration
		}
		w.ramp = NewRamp(rate, ramp)
		if opts.WarmupArrivalPattern != "" {
			w.arrival, _ = NewArrival(opts.WarmupArrivalPattern, opts.ArrivalSmoothness)
		}
		if err := w.run(); err != nil {
			return nil, err
		}
		reqs, warm, origin = w.out, len(w.out), w.end
	}
	var firstProfileSession uint32
	if warm > 0 {
		firstProfileSession = reqs[warm-1].session + 1
	}
	p := newScheduler(mmapds.PhaseProfile, profile, firstProfileSession)
	p.out, p.origin = reqs, origin
	if err := p.run(); err != nil {
		return nil, err
	}
	reqs = p.out
	if len(reqs) == warm {
		return nil, usagef("plan: the profile phase has no requests (check --benchmark-duration and the offset window)")
	}

	if gen != nil {
		if _, err := gen.Fill(); err != nil {
			return nil, fmt.Errorf("plan: %w", err)
		}
	}
	r, err := newRenderer(&opts, ep, ds, corpus)
	if err != nil {
		return nil, err
	}
	if pl != nil {
		r.markers, r.graph = pl.markers, &graphRecords{session: -1}
	}
	w, err := mmapds.Create(opts.Output)
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	w.Grow(len(reqs))
	cancelRNG := streams("plan.cancel")
	cancelNs := max(1, int64(math.Round(opts.RequestCancellationDelay*1e9)))
	if err := r.write(w, reqs, func(p *planned) int64 {
		if p.phase != mmapds.PhaseProfile || opts.RequestCancellationRate <= 0 {
			return 0
		}
		if cancelRNG.Float64()*100 < opts.RequestCancellationRate {
			return cancelNs
		}
		return 0
	}); err != nil {
		w.Abort()
		return nil, err
	}

	meta := r.meta(&opts, ds, corpus, mode, warm, len(reqs)-warm, profile.durationNs, reqs[warm:])
	hash, err := w.Close(meta)
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	offer, err := readOffer(opts.Output)
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	return &Result{
		Hash: hash, Warmup: warm, Profile: len(reqs) - warm, Mode: mode,
		Sessions: int(reqs[len(reqs)-1].session) + 1, Bodies: r.bodies,
		Offer: offer, RepeatNote: offer.RepeatNote(),
	}, nil
}

// readOffer reads the offer of the plan file just written (its hash was just computed).
func readOffer(path string) (mmapds.Offer, error) {
	p, err := mmapds.Open(path, mmapds.Options{SkipHash: true})
	if err != nil {
		return mmapds.Offer{}, err
	}
	defer p.Close()
	return p.Offer()
}

// timingMode picks the mode by AIPerf's priority: a fixed schedule (asked for, or a timed
// input without an explicit rate, unless --no-fixed-schedule), user-centric, request rate,
// then concurrency alone.
func timingMode(o *Options, ds *dataset.Dataset) string {
	switch {
	case o.trajectory(): // AgentX's lanes: a closed loop, whatever the input's timestamps
		return ModeConcurrency
	case o.FixedSchedule || (ds.Timed && !o.NoFixedSchedule && o.RequestRate == 0 && o.UserCentricRate == 0):
		return ModeFixedSchedule
	case o.UserCentricRate > 0:
		return ModeUserCentric
	case o.RequestRate > 0:
		return ModeRequestRate
	}
	return ModeConcurrency
}

// profileLimits sizes the profile phase: --request-count, --num-sessions and
// --benchmark-duration as given; else a fixed schedule replays the whole window, a file is
// sent once through, and synthetic data gets AIPerf's max(10, 2·concurrency) requests. A
// closed loop bounded only by a duration gets room for closedLoopPerSlot requests per second
// per slot.
func profileLimits(o *Options, ds *dataset.Dataset, mode string) limits {
	lim := limits{requests: o.RequestCount, sessions: o.NumSessions, durationNs: int64(math.Round(o.BenchmarkDuration * 1e9))}
	switch {
	case lim.requests > 0 || lim.sessions > 0:
	case lim.durationNs > 0 && mode == ModeConcurrency && ds.Graph:
		lim.lanes = max(o.Concurrency, 1) // plays.laneFull sizes it
	case lim.durationNs > 0:
		if mode == ModeConcurrency {
			// Capped: replay stops at the duration anyway, and a plan holds at most MaxRequests.
			lim.requests = int(min(math.Ceil(o.BenchmarkDuration*float64(max(o.Concurrency, 1))*closedLoopPerSlot), MaxRequests-float64(o.WarmupRequestCount)))
		}
	case mode == ModeFixedSchedule:
	case o.Dataset != nil:
		lim.sessions = len(ds.Conversations)
	default:
		lim.requests = max(10, 2*o.Concurrency)
	}
	return lim
}

// withOSL returns ds with every turn that has no output length given one from the --osl
// distribution (AIPerf's fallback for files), leaving the caller's dataset untouched.
func withOSL(ds *dataset.Dataset, o *Options) *dataset.Dataset {
	if o.OSLMean <= 0 {
		return ds
	}
	var osl func(r *rand.Rand) int
	switch {
	case o.RandomRangeRatio > 0:
		l := RangeLengths{ISLMean: 1, OSLMean: o.OSLMean, Ratio: o.RandomRangeRatio, Mode: o.RandomRangeRatioMode}
		osl = func(r *rand.Rand) int { return max(1, l.uniform(r, o.OSLMean)) }
	default:
		osl = func(r *rand.Rand) int { return positiveNormalInt(r, float64(o.OSLMean), o.OSLStddev) }
	}
	r := Stream(o.Seed, "plan.osl")
	out := *ds
	out.Conversations = make([]dataset.Conversation, len(ds.Conversations))
	for i, c := range ds.Conversations {
		turns := make([]dataset.Turn, len(c.Turns))
		copy(turns, c.Turns)
		for t := range turns {
			if turns[t].OSL <= 0 {
				turns[t].OSL = osl(r)
			}
		}
		c.Turns = turns
		out.Conversations[i] = c
	}
	return &out
}

func hasMultiTurn(ds *dataset.Dataset) bool {
	for _, c := range ds.Conversations {
		if len(c.Turns) > 1 {
			return true
		}
	}
	return false
}

// checkMarker fails when input text already contains the live-history marker, which would
// make replay splice responses into the wrong place.
func checkMarker(ds *dataset.Dataset) error {
	for i, c := range ds.Conversations {
		if strings.Contains(c.UserContext, LiveHistoryMarker) {
			return usagef("plan: conversation %d contains the live-history marker %q", i, LiveHistoryMarker)
		}
		for t, turn := range c.Turns {
			if strings.Contains(turn.Prompt, LiveHistoryMarker) || strings.Contains(turn.System, LiveHistoryMarker) {
				return usagef("plan: conversation %d turn %d contains the live-history marker %q", i, t, LiveHistoryMarker)
			}
		}
	}
	return nil
}
