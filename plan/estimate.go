package plan

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/plan/dataset"
	"github.com/llmbench/llmbench/plan/media"
)

// The estimate's sizes. They are averages measured on the embedded corpus (about 4 bytes
// of body per token under the builtin tokenizer, JSON included), taken a little high: the
// estimate must catch the plans that would take gigabytes, not predict bytes.
const (
	bytesPerToken = 5
	// bodyOverhead is a body's JSON besides its text: model, max tokens, message framing.
	bodyOverhead = 256
	// turnOverhead is a dataset turn's structures besides its text (dataset.Turn, its
	// generation task, the renderer's per-turn state).
	turnOverhead = 400
	// plannedBytes is one planned request in compiler memory: its planned entry and the
	// record the writer holds until Close, with the slices' room to grow.
	plannedBytes = 192
	// markerTokens stands for a live-history reply placeholder in a body.
	markerTokens = 8
	// videoRatio is the estimated encoded size of a synthetic video over its raw frames.
	videoRatio = 20
	// gcFactor is the peak heap over the live data: GOGC=100 collects at twice the live heap.
	gcFactor = 2
	// rawInFlight is how many bodies' raw media the estimate counts at once (the render
	// workers at work; the estimate does not depend on the machine).
	rawInFlight = 4
)

// Estimate is the compiler's forecast of a plan's size, made from the options, and from
// the input once it is loaded, before the bodies are rendered (docs/plan-format.md
// "Bounds"). Counts are upper estimates: every dataset turn a request may send is counted
// once.
type Estimate struct {
	// Requests are the planned records of both phases.
	Requests float64
	// Bodies are the distinct bodies and BodyBytes their bytes in the file, MediaBytes the
	// part of them that is base64 media.
	Bodies, BodyBytes, MediaBytes float64
	// DatasetBytes is the dataset (prompt text and replies) held in memory while compiling.
	DatasetBytes float64
	// FileBytes is the plan file, MemoryBytes the compiler's peak memory.
	FileBytes, MemoryBytes float64
}

// String says the estimate in one line.
func (e Estimate) String() string {
	per := 0.0
	if e.Bodies > 0 {
		per = e.BodyBytes / e.Bodies
	}
	media := ""
	if e.MediaBytes > 0 {
		media = fmt.Sprintf(", %s of them media", humanBytes(e.MediaBytes))
	}
	return fmt.Sprintf("a file of %s (%s requests, %s distinct bodies of about %s%s) and compiler memory of %s (a dataset of %s)",
		humanBytes(e.FileBytes), num(math.Round(e.Requests)), num(math.Round(e.Bodies)), humanBytes(per), media,
		humanBytes(e.MemoryBytes), humanBytes(e.DatasetBytes))
}

// humanBytes writes n in the largest binary unit that keeps it at least 1: "4 GiB", "1.5 MiB".
func humanBytes(n float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for n >= 1024 && i < len(units)-1 {
		n /= 1024
		i++
	}
	if i == 0 {
		return num(math.Round(n)) + " B"
	}
	return strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.1f", n), "0"), ".") + " " + units[i]
}

// LargePlanBytes is the estimated size past which Compile tells Options.Notice, before
// writing, how large the plan will be and what makes it so.
const LargePlanBytes = 64 << 20

// noticeSize tells o.Notice about a plan estimated over LargePlanBytes.
func (o *Options) noticeSize(e Estimate) {
	if o.Notice != nil && e.FileBytes > LargePlanBytes {
		o.Notice(e.Large())
	}
}

// Large says how large the plan will be and which part dominates it, with the flags that
// shrink that part.
func (e Estimate) Large() string {
	media, records := e.MediaBytes, e.Requests*mmapds.RecordSize
	text := e.BodyBytes - media
	what := "the request bodies' text dominates: fewer distinct bodies (--request-count, --num-dataset-entries) or shorter prompts (--isl, --conversation-turn-mean) shrink it"
	switch {
	case media >= text && media >= records:
		what = "media dominate: fewer or smaller images, audio or video (--image-width-mean, --image-height-mean, --image-batch-size, --audio-length-mean, --video-*) or fewer distinct bodies (--request-count, --num-dataset-entries) shrink it"
	case records > text:
		what = "the records dominate: fewer requests (--request-count, --benchmark-duration) shrink it"
	}
	return fmt.Sprintf("this plan will take about %s on disk (%s requests, %s distinct bodies of about %s%s): %s",
		humanBytes(e.FileBytes), num(math.Round(e.Requests)), num(math.Round(e.Bodies)), humanBytes(e.BodyBytes/math.Max(e.Bodies, 1)),
		map[bool]string{true: ", " + humanBytes(media) + " of them media", false: ""}[media > 0], what)
}

// maxPlanBytes is --max-plan-bytes in effect.
func (o *Options) maxPlanBytes() int64 {
	if o.MaxPlanBytes > 0 {
		return o.MaxPlanBytes
	}
	return DefaultMaxPlanBytes
}

// checkSize refuses a plan whose estimated file or compiler memory is over --max-plan-bytes,
// or whose requests are more than a plan holds.
func (o *Options) checkSize(e Estimate) error {
	if e.Requests > MaxRequests {
		return usagef("plan: the flags plan about %s requests, more than the maximum of %d (docs/plan-format.md \"Bounds\")", num(math.Round(e.Requests)), MaxRequests)
	}
	if limit := float64(o.maxPlanBytes()); e.FileBytes > limit || e.MemoryBytes > limit {
		return usagef("plan: the plan would take %s, more than --max-plan-bytes %d (%s): shrink the flags that size it, or raise --max-plan-bytes (docs/plan-format.md \"Bounds\")",
			e, o.maxPlanBytes(), humanBytes(limit))
	}
	return nil
}

// turnsEstimate is the turns of a synthetic conversation the estimate counts: the mean
// plus one standard deviation.
func (o *Options) turnsEstimate() float64 {
	return math.Max(1, math.Round(float64(o.ConversationTurnMean)+o.ConversationTurnStddev))
}

// requestsEstimate returns the warmup and profile requests the options plan, for
// conversations of turns turns on average; sessions is the input's conversation count
// (0 for synthetic data), which a file without a bound is sent once through.
func (o *Options) requestsEstimate(turns float64, sessions int) (warm, prof float64) {
	rate := o.RequestRate
	if o.UserCentricRate > 0 {
		rate = o.UserCentricRate
	}
	wRate := rate
	if o.WarmupRequestRate > 0 {
		wRate = o.WarmupRequestRate
	}
	switch {
	case o.WarmupRequestCount > 0:
		warm = float64(o.WarmupRequestCount)
	case o.NumWarmupSessions > 0:
		warm = float64(o.NumWarmupSessions) * turns
	default:
		warm = o.WarmupDuration * wRate
	}
	switch {
	case o.RequestCount > 0:
		prof = float64(o.RequestCount)
	case o.NumSessions > 0:
		prof = float64(o.NumSessions) * turns
	case o.BenchmarkDuration > 0 && rate > 0:
		prof = math.Ceil(o.BenchmarkDuration * rate)
	case o.BenchmarkDuration > 0:
		prof = math.Min(math.Ceil(o.BenchmarkDuration*float64(max(o.Concurrency, 1))*closedLoopPerSlot), MaxRequests)
	case sessions > 0:
		prof = float64(sessions) * turns
	default:
		prof = float64(max(10, 2*o.Concurrency))
	}
	return warm, prof
}

// estimate forecasts the plan the options compile from ds, or, when ds is nil, from the
// synthetic dataset they describe (before it is generated).
func (o *Options) estimate(ds *dataset.Dataset) Estimate {
	if ds != nil {
		return o.estimateInput(ds)
	}
	var e Estimate
	turns := o.turnsEstimate()
	warm, prof := o.requestsEstimate(turns, 0)
	e.Requests = warm + prof
	convs := float64(o.NumDatasetEntries)
	if convs == 0 {
		// A conversation per session, drawn as the schedule needs one (up to a cycle).
		convs = math.Ceil(e.Requests / turns)
		if c := o.distinctCycle(timingMode(o, &dataset.Dataset{})); c > 0 {
			convs = math.Min(convs, float64(c))
		}
	}

	// Tokens of one turn's prompt, of one reply, and of what every body of a
	// conversation repeats (system prompt, user context, the first turn's prefix).
	isl, osl := o.lengthsEstimate()
	prompt := isl * math.Max(1, float64(o.PromptBatchSize))
	if o.rankings() {
		prompt = float64(o.RankingsQueryPromptTokenMean) + o.RankingsQueryPromptTokenStddev +
			(float64(o.RankingsPassagesMean)+o.RankingsPassagesStddev)*(float64(o.RankingsPassagesPromptTokenMean)+o.RankingsPassagesPromptTokenStddev)
	}
	reply := osl
	if reply == 0 {
		reply = float64(defaultReplyTokens(int(isl)))
	}
	if o.ConversationHistory == "live" {
		reply = markerTokens
	}
	shared := float64(o.SharedSystemPromptLength + o.UserContextPromptLength + o.PromptPrefixLength)

	// Distinct bodies: the conversations the requests reach, each up to k turns.
	k := math.Min(turns, e.Requests)
	reached := math.Min(convs, math.Ceil(e.Requests/turns))
	e.Bodies = reached * k
	convTokens := k*shared + prompt*k*(k+1)/2 + reply*k*(k-1)/2 // turn t repeats turns 0..t-1 and their replies
	if o.rankings() {
		convTokens = k * prompt // no history
	}
	perBody, perBodyRaw := o.mediaEstimate()
	e.MediaBytes = e.Bodies * perBody
	e.BodyBytes = reached*(convTokens*bytesPerToken+k*bodyOverhead) + e.MediaBytes

	// The generated dataset: every conversation's prompts and context, the prefix pool and
	// the prefixed first prompts, then the replies synthesized for the conversations sent.
	e.DatasetBytes = convs*turns*(prompt*bytesPerToken+turnOverhead) +
		convs*float64(o.UserContextPromptLength+o.PromptPrefixLength)*bytesPerToken +
		float64(o.PromptPrefixPoolSize*o.PromptPrefixLength+o.SharedSystemPromptLength)*bytesPerToken +
		reached*(turns-1)*reply*bytesPerToken
	e.finish(perBodyRaw)
	return e
}

// finish fills the file and memory totals from the parts.
func (e *Estimate) finish(perBodyRaw float64) {
	e.FileBytes = e.BodyBytes + e.Requests*mmapds.RecordSize
	avg := 0.0
	if e.Bodies > 0 {
		avg = e.BodyBytes / e.Bodies
	}
	// A render round holds its new bodies (and, with media, the raw media they are made of)
	// until they are written.
	// until they are written: a text body twice while it is built (the joined text whose
	// tokens are counted, the JSON), a body with media once, plus the raw media of the
	// bodies being made at that moment.
	round := math.Min(e.Bodies, renderBatch) * avg * 2
	if perBodyRaw > 0 {
		round = math.Min(e.Bodies, mediaRenderBatch)*avg + math.Min(e.Bodies, rawInFlight)*perBodyRaw
	}
	// The collector lets the heap grow to twice what is live before it collects (GOGC=100).
	e.MemoryBytes = gcFactor * (e.DatasetBytes + e.Requests*plannedBytes + round)
}

// lengthsEstimate is the prompt and requested output length (tokens) of a synthetic turn
// the estimate counts: the mean plus one standard deviation, the top of a range, or the
// largest pair of a --seq-dist.
func (o *Options) lengthsEstimate() (isl, osl float64) {
	isl, osl = float64(o.ISLMean)+o.ISLStddev, float64(o.OSLMean)+o.OSLStddev
	if o.OSLMean == 0 {
		osl = 0
	}
	if o.RandomRangeRatio > 0 {
		isl, osl = float64(o.ISLMean)*(1+o.RandomRangeRatio), float64(o.OSLMean)*(1+o.RandomRangeRatio)
	}
	if d, err := ParseSeqDist(o.SeqDist); o.SeqDist != "" && err == nil {
		isl, osl = 0, 0
		for _, p := range d.Pairs {
			isl, osl = math.Max(isl, float64(p.ISL)+p.ISLStddev), math.Max(osl, float64(p.OSL)+p.OSLStddev)
		}
	}
	return math.Max(1, isl), osl
}

// mediaEstimate returns the base64 bytes of the synthetic media of one body, and the raw
// bytes it is made from (pixels, samples, frames) while it is rendered.
func (o *Options) mediaEstimate() (encoded, raw float64) {
	m := &o.Media
	if !m.Enabled() {
		return 0, 0
	}
	const b64 = 4.0 / 3
	if im := m.Image; im.WidthMean > 0 && im.HeightMean > 0 {
		px := math.Min(im.WidthMean+im.WidthStddev, 16384) * math.Min(im.HeightMean+im.HeightStddev, 16384)
		n := float64(im.BatchSize)
		encoded += n * px * 3 * b64 // noise does not compress: PNG and JPEG hold about 3 bytes a pixel
		raw += n * px * (4 + 3)     // the RGBA image and its encoding
	}
	if au := m.Audio; au.LengthMean > 0 {
		sec := math.Min(math.Max(au.LengthMean+au.LengthStddev, 0.01), 3600)
		rate, depth := 0.0, 0
		for _, r := range au.SampleRates {
			rate = math.Max(rate, r*1000)
		}
		for _, d := range au.Depths {
			depth = max(depth, d)
		}
		wav := sec * rate * float64(au.NumChannels*depth/8)
		n := float64(au.BatchSize)
		clip := wav
		if au.Format == "mp3" {
			clip = sec * 128000 / 8
		}
		encoded += n * clip * b64
		raw += n * (wav + clip)
	}
	if vi := m.Video; vi.Width > 0 && vi.Height > 0 {
		frames := math.Max(1, math.Round(vi.Duration*vi.FPS))
		rgb := float64(vi.Width) * float64(vi.Height) * 3 * frames
		n := float64(vi.BatchSize)
		encoded += n * rgb / videoRatio * b64
		raw += n * (rgb + rgb/videoRatio)
	}
	return encoded, raw
}

// estimateInput forecasts the plan of a loaded input: each conversation's bodies from its
// own text (a turn that builds on the conversation so far repeats the earlier turns and
// their replies), and the local media files the input names, by their size.
func (o *Options) estimateInput(ds *dataset.Dataset) Estimate {
	var e Estimate
	totalTurns := 0
	for _, c := range ds.Conversations {
		totalTurns += len(c.Turns)
	}
	if totalTurns == 0 {
		return e
	}
	turns := float64(totalTurns) / float64(len(ds.Conversations))
	warm, prof := o.requestsEstimate(turns, len(ds.Conversations))
	e.Requests = warm + prof
	if ds.Graph {
		return o.estimateGraph(ds, e, warm, turns)
	}
	sizes := map[string]float64{} // media file → bytes
	var all, allMedia, text float64
	for _, c := range ds.Conversations {
		ctx := float64(len(c.UserContext))
		if len(c.Turns) > 0 {
			ctx += float64(len(c.Turns[0].System))
		}
		history := 0.0
		text += ctx
		for t := range c.Turns {
			turn := &c.Turns[t]
			own := turnBytes(turn)
			text += own + float64(len(turn.Reply)) + turnOverhead
			body := own + bodyOverhead
			if t > 0 && !c.SelfContained && len(turn.Raw) == 0 && len(turn.Messages) == 0 {
				body += ctx + history
			} else if len(turn.Raw) == 0 && len(turn.Messages) == 0 {
				body += ctx
			}
			reply := float64(len(turn.Reply))
			if reply == 0 {
				n := turn.OSL
				if n <= 0 {
					n = defaultReplyTokens(max(turn.PromptTokens, len(turn.Prompt)/bytesPerToken))
				}
				reply = float64(n * bytesPerToken)
			}
			history += own + reply
			for _, ref := range turn.Media {
				allMedia += mediaFileBytes(ref, sizes) * 4 / 3
			}
			all += body
		}
	}
	share := math.Min(1, e.Requests/float64(totalTurns)) // a bound reaches part of the input
	e.Bodies = math.Min(e.Requests, float64(totalTurns))
	e.MediaBytes = allMedia * share
	e.BodyBytes = all*share + e.MediaBytes
	e.DatasetBytes = text
	raw := 0.0
	if allMedia > 0 {
		raw = allMedia / float64(totalTurns) // the files are read when their body is rendered
	}
	e.finish(raw)
	return e
}

// estimateGraph forecasts a graph input's plan (agentic.go): a closed loop sized by a
// duration plans, per slot, sessions until their shortest possible replays (think times, a
// millisecond a request) fill it; every session has bodies of its own when it is derived
// (trajectory starts, cache-bust markers), else the sessions of one conversation share
// them. A body is its prompt (a hash-id prompt: its tokens) and, for a dag_jsonl turn, the
// history it carries (its sources' messages and reply markers). Hash-id prompts are built
// as they are rendered, so the dataset in memory is their ids, not their text.
func (o *Options) estimateGraph(ds *dataset.Dataset, e Estimate, warm, turns float64) Estimate {
	cp := 0.0
	for i := range ds.Conversations {
		cp += float64(max(dataset.CriticalPathNs(&ds.Conversations[i], minRequestNs), minRequestNs))
	}
	cp /= float64(len(ds.Conversations))
	if timingMode(o, ds) == ModeConcurrency && o.BenchmarkDuration > 0 && o.RequestCount == 0 && o.NumSessions == 0 {
		lanes := float64(max(o.Concurrency, 1))
		e.Requests = warm + math.Min((math.Ceil(o.BenchmarkDuration*1e9/cp)+1)*lanes*turns, MaxRequests)
	}
	var all, text float64
	for _, c := range ds.Conversations {
		for t := range c.Turns {
			turn := &c.Turns[t]
			own := turnBytes(turn)
			body := own + bodyOverhead
			for _, s := range turn.Node.Sources {
				body += turnBytes(&c.Turns[s]) + markerTokens*bytesPerToken
			}
			all += body
			text += turnOverhead + float64(len(turn.HashIDs)*8)
			if turn.Blocks == nil {
				text += own
			}
		}
	}
	derived := o.trajectory() || (o.CacheBust != "" && o.CacheBust != "none")
	perRequest := all / float64(max(1, ds.TotalTurns()))
	e.Bodies = math.Min(e.Requests, float64(ds.TotalTurns()))
	if derived {
		e.Bodies = e.Requests
	}
	e.BodyBytes = e.Bodies * perRequest
	e.DatasetBytes = text + e.Requests*turnOverhead/4 // derived sessions: their graph, sharing prompts
	e.finish(0)
	return e
}

// turnBytes is the text a turn sends of its own: its prompt (or batch of texts, or query
// and passages, or hash-id prompt), messages or raw body.
func turnBytes(t *dataset.Turn) float64 {
	n := len(t.Prompt) + len(t.Raw) + len(t.Query)
	if t.Blocks != nil {
		n += (t.Blocks.Length + cacheBustTokens) * bytesPerToken
	}
	for _, s := range t.Texts {
		n += len(s)
	}
	for _, s := range t.Passages {
		n += len(s)
	}
	for _, m := range t.Messages {
		n += len(m.Content) + 32
	}
	return float64(n)
}

// mediaFileBytes is the size of a medium an input names: a local file's size (looked up
// once per path), 0 for URLs and files that cannot be read (Compile then says which).
func mediaFileBytes(ref dataset.MediaRef, sizes map[string]float64) float64 {
	if media.IsURL(ref.Ref) {
		return float64(len(ref.Ref))
	}
	path := ref.Ref
	if !filepath.IsAbs(path) {
		path = filepath.Join(ref.Dir, path)
	}
	if n, ok := sizes[path]; ok {
		return n
	}
	n := 0.0
	if st, err := os.Stat(path); err == nil {
		n = float64(st.Size())
	}
	sizes[path] = n
	return n
}
