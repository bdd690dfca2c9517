package plan

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/plan/dataset"
	"github.com/llmbench/llmbench/plan/internal/parallel"
	"github.com/llmbench/llmbench/plan/media"
	"github.com/llmbench/llmbench/tokenizer"
)

// renderBatch is how many planned requests are rendered and written per round. Bodies are
// rendered in parallel within a round and written in order of first use, so the file does
// not depend on the number of workers, and memory holds one round's new bodies at most.
const renderBatch = 4096

// defaultReplyTokens is the length of a synthesized assistant reply when the turn leaves its
// output length unset: AIPerf's fallback OSL, max(128, ISL/2).
func defaultReplyTokens(isl int) int { return max(128, isl/2) }

// renderer turns dataset turns into request bodies through package endpoint, once per
// distinct (conversation, turn): a dataset entry sampled many times is stored once and its
// records share the bytes.
type renderer struct {
	opts   *Options
	ep     *endpoint.Endpoint
	ds     *dataset.Dataset
	corpus *dataset.Corpus
	tok    *tokenizer.Tokenizer
	live   bool
	path   string

	base   []int    // conversation → index of its turn 0 in refs/isl/done/models
	models []string // the model of each dataset turn; nil: opts.Model for all
	refs   []mmapds.BodyRef
	isl    []uint32
	keys   [][]uint64 // each body's prefix reuse keys (dataset.AppendReuseKeys)
	reuse  dataset.PrefixReuse
	// offered is the offered prefix reuse of the profile's records: reused and prompt tokens.
	offered [2]int64
	done    []bool
	replies [][]string // compiled history: conversation → assistant reply per turn
	seed    uint64     // root of the synthesized replies' streams
	bodies  int
	media   mediaState
	// Graph inputs (agentic.go): each derived conversation's cache-bust marker, and the
	// graph nodes and agents of the records.
	markers map[int]string
	graph   *graphRecords
}

func newRenderer(o *Options, ep *endpoint.Endpoint, ds *dataset.Dataset, corpus *dataset.Corpus) (*renderer, error) {
	r := &renderer{
		opts: o, ep: ep, ds: ds, corpus: corpus, tok: o.Tokenizer,
		live: o.ConversationHistory == "live",
		path: o.CustomEndpoint,
		base: make([]int, len(ds.Conversations)),
		seed: Stream(o.Seed, "plan.history.reply").Uint64(),
	}
	if r.path == "" {
		r.path = ep.RequestPath(o.Streaming)
	}
	if r.live {
		if err := checkMarker(ds); err != nil {
			return nil, err
		}
	}
	n := 0
	for i, c := range ds.Conversations {
		r.base[i] = n
		n += len(c.Turns)
	}
	r.refs = make([]mmapds.BodyRef, n)
	r.isl = make([]uint32, n)
	r.keys = make([][]uint64, n)
	r.done = make([]bool, n)
	r.models = selectModels(o, n)
	var err error
	if r.media, err = newMediaState(o, ds, n); err != nil {
		return nil, err
	}
	r.replies = make([][]string, len(ds.Conversations))
	return r, nil
}

// selectModels gives each of the n dataset turns (in conversation, then turn order) its
// model from the --model list, as AIPerf assigns one per prompt when it builds the dataset:
// round_robin cycles through the list, random draws from the plan.model_selection stream.
// It returns nil for a single model.
func selectModels(o *Options, n int) []string {
	names := o.Models()
	if len(names) < 2 {
		return nil
	}
	out := make([]string, n)
	rng := Stream(o.Seed, "plan.model_selection")
	for i := range out {
		if o.ModelSelectionStrategy == "random" {
			out[i] = names[rng.IntN(len(names))]
		} else {
			out[i] = names[i%len(names)]
		}
	}
	return out
}

// write renders what reqs need and appends their records to w; cancel gives each record's
// CancelAfterNs, called in record order.
func (r *renderer) write(w *mmapds.Writer, reqs []planned, cancel func(*planned) int64) error {
	type key struct{ conv, turn int32 }
	var keys []key
	var convs []int
	batch := renderBatch
	if r.media.on() {
		batch = mediaRenderBatch
	}
	for start := 0; start < len(reqs); start += batch {
		chunk := reqs[start:min(start+batch, len(reqs))]
		keys, convs = keys[:0], convs[:0]
		for _, p := range chunk {
			k := r.base[p.conv] + int(p.turn)
			if r.done[k] {
				continue
			}
			r.done[k] = true
			keys = append(keys, key{p.conv, p.turn})
			if !r.live && r.replies[p.conv] == nil && r.usesHistory(int(p.conv), int(p.turn)) {
				r.replies[p.conv] = []string{} // claimed: filled below
				convs = append(convs, int(p.conv))
			}
		}
		if err := parallel.Indexed(len(convs), r.opts.Workers, func(i int) error {
			return r.synthesizeReplies(convs[i])
		}); err != nil {
			return err
		}
		bodies := make([][]byte, len(keys))
		isls := make([]int, len(keys))
		reuseKeys := make([][]uint64, len(keys))
		var ents []*mmapds.MediaEntry
		if r.media.on() {
			ents = make([]*mmapds.MediaEntry, len(keys))
		}
		if err := parallel.Indexed(len(keys), r.opts.Workers, func(i int) error {
			var err error
			var items []media.Item
			if ents != nil {
				if items, err = r.turnMedia(int(keys[i].conv), int(keys[i].turn)); err != nil {
					return err
				}
				if len(items) > 0 {
					e := mediaEntry(items)
					ents[i] = &e
				}
			}
			bodies[i], isls[i], reuseKeys[i], err = r.render(int(keys[i].conv), int(keys[i].turn), items)
			return err
		}); err != nil {
			return err
		}
		for i, k := range keys {
			ref, err := w.AddBody(bodies[i])
			if err != nil {
				return fmt.Errorf("plan: %w", err)
			}
			j := r.base[k.conv] + int(k.turn)
			r.refs[j], r.isl[j], r.keys[j] = ref, uint32(min(isls[i], 1<<32-1)), reuseKeys[i]
			r.bodies++
			bodies[i] = nil // the round's memory holds what is not written yet, no more
			if ents != nil && ents[i] != nil {
				r.media.entries = append(r.media.entries, *ents[i])
				r.media.idx[j] = uint32(len(r.media.entries))
			}
		}
		for i := range chunk {
			p := &chunk[i]
			k := r.base[p.conv] + int(p.turn)
			rec := mmapds.Record{
				SendOffsetNs:  p.send,
				DelayNs:       p.delay,
				CancelAfterNs: cancel(p),
				Session:       p.session,
				Turn:          uint32(p.turn),
				ISL:           r.isl[k],
				OSL:           uint32(max(r.ds.Conversations[p.conv].Turns[p.turn].OSL, 0)),
				Phase:         p.phase,
			}
			if r.media.idx != nil {
				rec.Media = r.media.idx[k]
			}
			if r.live && r.usesHistory(int(p.conv), int(p.turn)) {
				rec.Flags |= mmapds.FlagLiveHistory
			}
			c := &r.ds.Conversations[p.conv]
			if c.IsGraph() {
				n := c.Turns[p.turn].Node
				rec.Turn = uint32(n.AgentTurn)
				if r.live && len(n.Sources) > 0 {
					rec.Flags |= mmapds.FlagLiveHistory
				}
			}
			// Offered reuse, record by record in plan order: a body sent twice reuses itself.
			reuse := min(r.reuse.Add(r.keys[k]), int(rec.ISL))
			if rec.Phase == mmapds.PhaseProfile {
				r.offered[0] += int64(reuse)
				r.offered[1] += int64(rec.ISL)
			}
			idx := w.Len()
			if err := w.AddRef(rec, r.refs[k]); err != nil {
				return fmt.Errorf("plan: %w", err)
			}
			if c.IsGraph() {
				if err := w.AddNode(r.graph.node(c, p, idx, reuse)); err != nil {
					return fmt.Errorf("plan: %w", err)
				}
			}
		}
	}
	return nil
}

// usesHistory reports whether a turn's body is built from the conversation so far (rather
// than sent on its own: verbatim input, or a self-contained conversation).
func (r *renderer) usesHistory(conv, turn int) bool {
	c := &r.ds.Conversations[conv]
	t := &c.Turns[turn]
	return turn > 0 && !c.SelfContained && len(t.Raw) == 0 && len(t.Messages) == 0
}

// synthesizeReplies fills the assistant replies of one conversation's turns for compiled
// history: the input's recorded reply, or corpus text of the turn's output length. Each
// conversation has its own stream, so the text does not depend on rendering order.
func (r *renderer) synthesizeReplies(conv int) error {
	turns := r.ds.Conversations[conv].Turns
	out := make([]string, len(turns)-1)
	rng := rand.New(rand.NewPCG(r.seed, uint64(conv)))
	for j := range out {
		t := &turns[j]
		if t.Reply != "" {
			out[j] = t.Reply
			continue
		}
		n := t.OSL
		if n <= 0 {
			isl := t.PromptTokens
			if isl <= 0 {
				isl = r.tok.Count(t.Prompt)
			}
			n = defaultReplyTokens(isl)
		}
		text, err := r.corpus.Prompt(rng, n)
		if err != nil {
			return fmt.Errorf("plan: conversation %d turn %d reply: %w", conv, j, err)
		}
		out[j] = text
	}
	r.replies[conv] = out
	return nil
}

// render returns the body of one dataset turn, its verified ISL (the token count of all
// text the request sends: system, user context, history, prompt, joined by a space as AIPerf
// and the prompt-style endpoints join messages; live-history placeholders are not counted)
// and the prefix reuse keys of those tokens (reuseKeys).
func (r *renderer) render(conv, turn int, items []media.Item) ([]byte, int, []uint64, error) {
	c := &r.ds.Conversations[conv]
	t := &c.Turns[turn]
	o := r.opts
	model := o.Model
	if r.models != nil {
		model = r.models[r.base[conv]+turn]
	}
	if names := o.Models(); t.ModelRank > 0 && len(names) > 1 {
		model = names[(t.ModelRank-1)%len(names)] // the session's main model gets the first
	}
	req := endpoint.Request{
		Model:           model,
		MaxTokens:       max(t.OSL, 0),
		Streaming:       o.Streaming,
		LegacyMaxTokens: o.UseLegacyMaxTokens,
		IncludeUsage:    o.UseServerTokenCount && o.Streaming,
		Extra:           o.ExtraInputs,
		Query:           t.Query,
		Passages:        t.Passages,
		Texts:           t.Texts,
		Template:        o.PayloadTemplate,
		Media:           endpointMedia(items),
	}
	if len(t.Extra) > 0 { // the input's per-turn members win over --extra-inputs
		req.Extra = make(map[string]any, len(o.ExtraInputs)+len(t.Extra))
		maps.Copy(req.Extra, o.ExtraInputs)
		maps.Copy(req.Extra, t.Extra)
	}
	if t.Node != nil {
		isl, ids, err := r.graphBody(conv, turn, &req)
		if err != nil {
			return nil, 0, nil, err
		}
		body, err := r.ep.Render(nil, &req)
		if err != nil {
			return nil, 0, nil, usagef("plan: session %q turn %d: %v", c.SessionID, turn, err)
		}
		return body, isl, r.reuseKeys(&req, conv, turn, items, dataset.AppendPromptKeys(nil, ids)), nil
	}
	history := turn
	if c.SelfContained {
		history = 0
	}
	isl := 0
	var ids []int           // the prompt's tokens, for prefix reuse; none for raw bodies
	var promptKeys []uint64 // or their keys, when the loader had them
	switch {
	case len(t.Raw) > 0:
		req.Raw = t.Raw
		isl = t.PromptTokens
		if isl <= 0 && t.Prompt != "" {
			isl = r.tok.Count(t.Prompt)
		}
	case len(t.Messages) > 0:
		req.Messages = t.Messages
		isl, ids = r.joined(t.Messages, "")
	default:
		msgs := make([]endpoint.Message, 0, 2*turn+3)
		if sys := c.Turns[0].System; sys != "" {
			msgs = append(msgs, endpoint.Message{Role: "system", Content: sys})
		}
		if c.UserContext != "" {
			msgs = append(msgs, endpoint.Message{Role: "user", Content: c.UserContext})
		}
		for j := range history {
			reply := LiveHistoryMarker
			if !r.live {
				reply = r.replies[conv][j]
			}
			msgs = append(msgs, endpoint.Message{Role: "user", Content: c.Turns[j].Prompt},
				endpoint.Message{Role: "assistant", Content: reply})
		}
		msgs = append(msgs, endpoint.Message{Role: "user", Content: t.Prompt})
		req.Messages = msgs
		if len(msgs) == 1 && t.PromptTokens > 0 {
			isl = t.PromptTokens // exact by construction (synthetic) or measured by the loader
			if promptKeys = t.PromptKeys; promptKeys == nil {
				ids = r.tok.Encode(t.Prompt)
			}
		} else {
			skip := ""
			if r.live {
				skip = LiveHistoryMarker
			}
			isl, ids = r.joined(msgs, skip)
		}
	}
	switch {
	case len(t.Passages) > 0 || t.Query != "":
		isl = r.tok.Count(strings.Join(append([]string{t.Query}, t.Passages...), " "))
		ids, promptKeys = nil, nil // no generation, no prefix cache
	case len(t.Texts) > 0:
		isl = r.tok.Count(strings.Join(t.Texts, " ")) // every text of the batch, joined as AIPerf joins them
		ids, promptKeys = nil, nil
	}
	if promptKeys == nil {
		promptKeys = dataset.AppendPromptKeys(nil, ids)
	}
	body, err := r.ep.Render(nil, &req)
	if err != nil {
		// The flags or the input ask for a body the API cannot take: bad input, not a failure.
		return nil, 0, nil, usagef("plan: conversation %d (session %q) turn %d: %v", conv, c.SessionID, turn, err)
	}
	return body, isl, r.reuseKeys(&req, conv, turn, items, promptKeys), nil
}

// joined returns the tokens of the messages' contents joined by a space, leaving out
// messages whose content is skip (live replies), and the token ids of the prompt as far as
// they are known: all of them, or, when a message is left out, those of the text before it
// but its last token (which the reply, known at run time only, may merge with).
func (r *renderer) joined(msgs []endpoint.Message, skip string) (int, []int) {
	var b strings.Builder
	cut := -1
	for _, m := range msgs {
		if skip != "" && m.Content == skip {
			if cut < 0 {
				cut = b.Len()
			}
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(m.Content)
	}
	text := b.String()
	if cut < 0 {
		ids := r.tok.Encode(text)
		return len(ids), ids
	}
	ids := r.tok.Encode(text[:cut])
	return r.tok.Count(text), ids[:max(len(ids)-1, 0)]
}

// reuseKeys returns the prefix reuse keys of a request whose prompt's keys are keys
// (dataset.AppendReuseKeys). Its scope is what a server puts before the prompt's text or
// lets decide the cache: the model, the tools, and media (a request with media shares no
// block, as its media's place among the tokens is not counted).
func (r *renderer) reuseKeys(req *endpoint.Request, conv, turn int, items []media.Item, keys []uint64) []uint64 {
	if len(keys) == 0 {
		return nil
	}
	parts := []string{req.Model}
	if tools, ok := req.Extra["tools"]; ok {
		b, _ := json.Marshal(tools)
		parts = append(parts, string(b))
	}
	if len(items) > 0 {
		parts = append(parts, fmt.Sprintf("media of conversation %d turn %d", conv, turn))
	}
	return dataset.AppendReuseKeys(make([]uint64, 0, len(keys)), dataset.ReuseScope(parts...), keys) // keys may be the dataset's
}

// meta assembles the plan-wide metadata.
func (r *renderer) meta(o *Options, ds *dataset.Dataset, corpus *dataset.Corpus, mode string, warm, prof int, durationNs int64, profile []planned) *mmapds.Meta {
	headers := map[string]string{"Content-Type": "application/json", "Accept": "application/json"}
	if o.Streaming {
		headers["Accept"] = "text/event-stream"
	}
	maps.Copy(headers, r.ep.Headers)
	m := &mmapds.Meta{
		ToolVersion:       ToolVersion,
		Endpoint:          r.ep.Name,
		Paths:             []string{r.path},
		Method:            "POST",
		Headers:           headers,
		Streaming:         o.Streaming,
		Model:             o.Model,
		TimingMode:        mode,
		Dataset:           ds.Name,
		Concurrency:       o.Concurrency,
		ConcurrencyRampNs: int64(math.Round(o.ConcurrencyRampDuration * 1e9)),

		PrefillConcurrency:             o.PrefillConcurrency,
		PrefillConcurrencyRampNs:       int64(math.Round(o.PrefillConcurrencyRampDuration * 1e9)),
		WarmupConcurrency:              o.WarmupConcurrency,
		WarmupConcurrencyRampNs:        int64(math.Round(o.WarmupConcurrencyRampDuration * 1e9)),
		WarmupPrefillConcurrency:       o.WarmupPrefillConcurrency,
		WarmupPrefillConcurrencyRampNs: int64(math.Round(o.WarmupPrefillConcurrencyRampDuration * 1e9)),

		WarmupCount:         warm,
		ProfileCount:        prof,
		DurationNs:          durationNs,
		Tokenizer:           r.tok.Name(),
		TokenizerSHA256:     r.tok.SHA256(),
		CorpusSHA256:        corpus.SHA256(),
		Seed:                o.Seed,
		ConversationHistory: o.ConversationHistory,
		Reproducible:        !r.live,
		Spec:                o.Spec,
		Media:               r.media.entries,
	}
	if r.graph != nil {
		m.Agents = r.graph.agents
	}
	if o.ResponseField != "" && o.Spec["response-field"] != o.ResponseField {
		// analyze finds the response field in the spec; a caller that built Options without
		// the CLI still gets it recorded there (on a copy: the caller's map is not touched).
		m.Spec = maps.Clone(o.Spec)
		if m.Spec == nil {
			m.Spec = map[string]any{}
		}
		m.Spec["response-field"] = o.ResponseField
	}
	if mode == ModeConcurrency && m.Concurrency == 0 {
		m.Concurrency = 1 // AIPerf's default: one session at a time
	}
	m.PrefixReuseBlockTokens = dataset.ReuseBlockTokens
	m.ProfileReusedTokens, m.ProfilePromptTokens = r.offered[0], r.offered[1]
	if o.Dataset != nil {
		m.InputSHA256 = ds.SourceSHA256
		m.InputInsight = dataset.Insight(o.Dataset)
	}
	if r.live {
		m.LiveHistoryMarker = LiveHistoryMarker
	}
	switch mode {
	case ModeRequestRate:
		m.OfferedRate = o.RequestRate
		m.ArrivalPattern = o.ArrivalPattern
	case ModeUserCentric:
		m.OfferedRate = o.UserCentricRate
		if n, ok := m.Spec["num-users"].(int); !ok || n != o.NumUsers {
			// replay's users gate reads the user grid from the spec (mmapds.Meta.UserGrid);
			// a caller that built Options without the CLI gets it recorded (on a copy).
			m.Spec = maps.Clone(m.Spec)
			if m.Spec == nil {
				m.Spec = map[string]any{}
			}
			m.Spec["num-users"] = o.NumUsers
		}
	case ModeFixedSchedule:
		first, last := int64(math.MaxInt64), int64(-1)
		for i := range profile {
			if profile[i].send >= 0 {
				first, last = min(first, profile[i].send), max(last, profile[i].send)
			}
		}
		if last > first && len(profile) > 1 {
			m.OfferedRate = float64(len(profile)-1) / (float64(last-first) / 1e9)
		}
	}
	return m
}
