package mockllm

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/llmbench/llmbench/internal/jsonwire"
)

// Determinism: everything a response says (text, lengths, tool calls,
// jitter) derives from the seed and a hash of the request's API, model
// and prompt, so the same request gets the same answer in any arrival
// order, streaming or not; like a greedy model, a smaller max_tokens
// gives a prefix of the same text. Faults
// derive from the seed and the request's arrival number (1, 2, ... over
// the inference routes), so a fault rate is met exactly over any run of
// requests even when they are identical; which request gets a fault then
// depends on arrival order.

// Salts separate the random streams drawn from one request hash.
const (
	saltText   = 0x7465787400000001
	saltTiming = 0x74696d6500000002
	saltFault  = 0x6661756c00000003
	saltTool   = 0x746f6f6c00000004
	saltID     = 0x6964000000000005
	saltReason = 0x7265617300000006
	saltLength = 0x6c656e6700000007
)

// splitmix64 is a strong 64-bit mixer (Steele et al.), used to derive
// independent seeds from (seed, hash, salt).
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func mix(seed, h, salt uint64) uint64 { return splitmix64(splitmix64(seed^salt) ^ h) }

// appendHex appends v as 16 lowercase hex digits (ids).
func appendHex(b []byte, v uint64) []byte {
	var be [8]byte
	binary.BigEndian.PutUint64(be[:], v)
	return hex.AppendEncode(b, be[:])
}

func newRNG(seed, h, salt uint64) *rand.Rand {
	return rand.New(rand.NewPCG(mix(seed, h, salt), salt))
}

// unitFloat maps a 64-bit hash to [0, 1).
func unitFloat(x uint64) float64 { return float64(x>>11) / (1 << 53) }

// fnv64a hashes a request (path, then body).
func fnv64a(parts ...[]byte) uint64 {
	h := uint64(14695981039346656037)
	for _, p := range parts {
		for _, c := range p {
			h ^= uint64(c)
			h *= 1099511628211
		}
		h ^= 0xff // separator
		h *= 1099511628211
	}
	return h
}

// lognormal returns a factor with mean 1 and coefficient of variation cv.
func lognormal(r *rand.Rand, cv float64) float64 {
	if cv <= 0 {
		return 1
	}
	s2 := math.Log1p(cv * cv)
	return math.Exp(math.Sqrt(s2)*r.NormFloat64() - s2/2)
}

type finishKind uint8

const (
	finishStop   finishKind = iota // natural end (EOS)
	finishLength                   // token budget exhausted
	finishTool                     // ended with a tool call
)

type faultKind uint8

const (
	faultNone faultKind = iota
	faultError
	faultStreamError
	faultDisconnect
	faultStall
	faultContext // the request ran out of context (Quirks.ContextTokens)
	numFaults
)

var faultNames = [numFaults]string{"none", "error", "stream_error", "disconnect", "stall", "context_exceeded"}

type chunkKind uint8

const (
	chunkReasoning chunkKind = iota
	chunkContent
	chunkToolName
	chunkToolArgs
)

// chunk is one token event: tokens [lo, hi) of its kind's pieces.
type chunk struct {
	kind   chunkKind
	lo, hi int32
}

// genRequest is what an API's parser extracts from a request.
type genRequest struct {
	model        string
	stream       bool
	includeUsage bool
	maxTokens    int // 0: unset
	minTokens    int
	ignoreEOS    bool
	promptText   string   // what prompt tokens are counted on
	promptTokens int      // -1: count promptText
	reasoning    bool     // the API can carry reasoning
	tools        bool     // the API can carry tool calls
	toolName     string   // first tool the request offers, if any
	media        mediaUse // images, audio and video parts (mockllm/media.go)
}

// toolCall is a generated function call.
type toolCall struct {
	name       string
	nameTokens int
	callID     string
	args       []string // argument text, one piece per token
	argsText   string
}

// gen is one request's planned response.
type gen struct {
	api          apiKind
	seq          uint64
	hash         uint64
	id           string // hex, API prefixes added by renderers
	vllm         bool   // vLLM's chunk layout (Options.VLLMChunks)
	created      int64
	model        string
	stream       bool
	includeUsage bool
	promptTokens int

	kv *kvHold // the tokens this request holds in the simulated KV cache (metrics.go)

	audioTokens int // of promptTokens, the audio's (usage prompt_tokens_details.audio_tokens)
	// cachedTokens, of promptTokens, were found in the prefix cache (usage
	// prompt_tokens_details.cached_tokens); 0 unless Options.PromptTokensDetails.
	cachedTokens int

	reasoning    []string // pieces, first without its leading space
	content      []string
	contentIDs   []int
	tool         *toolCall
	finish       finishKind
	chunks       []chunk
	outputTokens int // reasoning + content (or tool) tokens

	fault   faultKind
	faultAt int // token events emitted before the fault

	timing   *rand.Rand
	respSeq  int // Responses API sequence_number
	openKind int // Anthropic/Responses: kind of the open block (-1 none)
	blockIdx int // Anthropic content block index / Responses output_index
}

// reasoningText returns the whole reasoning text.
func (g *gen) reasoningText() string { return strings.Join(g.reasoning, "") }

// contentText returns the whole content text.
func (g *gen) contentText() string { return strings.Join(g.content, "") }

// pieces returns the token pieces of a chunk.
func (g *gen) pieces(c chunk) []string {
	switch c.kind {
	case chunkReasoning:
		return g.reasoning[c.lo:c.hi]
	case chunkContent:
		return g.content[c.lo:c.hi]
	case chunkToolArgs:
		return g.tool.args[c.lo:c.hi]
	}
	return nil
}

// chunkTokens is the number of tokens an event carries.
func (g *gen) chunkTokens(c chunk) int {
	if c.kind == chunkToolName {
		return g.tool.nameTokens
	}
	return int(c.hi - c.lo)
}

// appendPieces appends the text of a chunk, JSON-escaped.
func (g *gen) appendPieces(b []byte, c chunk) []byte {
	if c.kind == chunkToolName {
		return jsonwire.AppendStringBody(b, g.tool.name)
	}
	for _, p := range g.pieces(c) {
		b = jsonwire.AppendStringBody(b, p)
	}
	return b
}

// words draws n pieces from the vocabulary: one bare word, then spaced.
func (v *vocabulary) text(r *rand.Rand, n int, ids bool) ([]string, []int) {
	if n <= 0 {
		return nil, nil
	}
	out := make([]string, n)
	var idv []int
	if ids {
		idv = make([]int, n)
	}
	for i := range n {
		w := &v.words[r.IntN(len(v.words))]
		if i == 0 {
			out[i] = w.bare
			if ids {
				idv[i] = w.bareID
			}
		} else {
			out[i] = w.spaced
			if ids {
				idv[i] = w.spacedID
			}
		}
	}
	return out, idv
}

// plan decides lengths, text, tool call, fault and chunking of a request.
func (s *Server) plan(api apiKind, req *genRequest, h, seq uint64) *gen {
	o := &s.opts
	g := &gen{
		api:          api,
		seq:          seq,
		hash:         h,
		model:        req.model,
		stream:       req.stream,
		includeUsage: req.includeUsage,
		openKind:     -1,
	}
	if g.model == "" {
		g.model = o.Model
	}
	g.id = string(appendHex(nil, mix(o.Seed, seq, saltID)))
	if o.VLLMChunks {
		g.vllm = true
		g.id = vllmID(o.Seed, seq)
	}
	g.promptTokens = req.promptTokens
	if g.promptTokens < 0 {
		// Encoded rather than counted: the prefix cache looks at the tokens.
		buf := s.ids.Get().(*[]int)
		var ids []int
		if ae, ok := o.Tokenizer.(interface{ AppendEncode([]int, string) []int }); ok {
			ids = ae.AppendEncode((*buf)[:0], req.promptText)
		} else {
			ids = o.Tokenizer.Encode(req.promptText)
		}
		g.promptTokens = len(ids)
		if hit := s.prefix.add(ids); o.PromptTokensDetails {
			g.cachedTokens = hit
		}
		*buf = ids[:0]
		s.ids.Put(buf)
	}
	g.promptTokens += o.Media.tokens(&req.media)
	g.audioTokens = req.media.audioTokens
	g.fault, g.faultAt = s.drawFault(seq)
	g.timing = newRNG(o.Seed, h, saltTiming)

	natural := o.NaturalTokens/2 + newRNG(o.Seed, h, saltLength).IntN(o.NaturalTokens+1)
	if natural < 1 {
		natural = 1
	}
	wantR := 0
	if req.reasoning {
		wantR = o.ReasoningTokens
	}
	total := wantR + natural
	g.finish = finishStop
	switch {
	case req.ignoreEOS && req.maxTokens > 0:
		total, g.finish = req.maxTokens, finishLength
	default:
		if total < req.minTokens {
			total = req.minTokens
		}
		if req.maxTokens > 0 && total >= req.maxTokens {
			total, g.finish = req.maxTokens, finishLength
		}
	}
	nr := min(wantR, total)
	nc := total - nr
	g.reasoning, _ = s.vocab.text(newRNG(o.Seed, h, saltReason), nr, false)
	text := newRNG(o.Seed, h, saltText)

	useTool := req.tools && o.ToolCallRate > 0 && unitFloat(mix(o.Seed, h, saltTool)) < o.ToolCallRate
	if useTool {
		if tc, ok := s.makeToolCall(req.toolName, nc, text, h); ok {
			g.tool = tc
			if g.finish == finishStop {
				g.finish = finishTool
			}
		}
	}
	if g.tool == nil {
		g.content, g.contentIDs = s.vocab.text(text, nc, api == apiTGI)
	}
	g.outputTokens = nr + nc
	if g.tool != nil {
		g.outputTokens = nr + g.tool.nameTokens + len(g.tool.args)
	}

	k := int32(o.TokensPerChunk)
	addChunks := func(kind chunkKind, n int) {
		for lo := int32(0); lo < int32(n); lo += k {
			g.chunks = append(g.chunks, chunk{kind, lo, min(lo+k, int32(n))})
		}
	}
	addChunks(chunkReasoning, nr)
	if g.tool != nil {
		g.chunks = append(g.chunks, chunk{kind: chunkToolName})
		addChunks(chunkToolArgs, len(g.tool.args))
	} else {
		addChunks(chunkContent, nc)
	}
	g.placeFault()
	g.placeContextFault(o.Quirks.ContextTokens)
	return g
}

// placeContextFault ends a chat or completions stream that would run past ctx tokens
// (prompt and output) with llama.cpp's error once the context is full
// (Quirks.ContextTokens), unless another fault strikes first.
func (g *gen) placeContextFault(ctx int) {
	if ctx <= 0 || (g.api != apiChat && g.api != apiCompletions) || g.promptTokens+g.outputTokens <= ctx {
		return
	}
	room := max(ctx-g.promptTokens, 0)
	at := 0 // events that fit
	for n := 0; at < len(g.chunks) && n+g.chunkTokens(g.chunks[at]) <= room; at++ {
		n += g.chunkTokens(g.chunks[at])
	}
	if g.fault != faultNone && g.faultAt <= at {
		return
	}
	g.fault, g.faultAt = faultContext, at
}

// drawFault decides request seq's fault and after how many token events
// it strikes (drawn later against the event count: a fraction in [0,1)).
//
// The kinds take consecutive bands of [0,1) as wide as their rates, and
// arrival n falls at frac(φ + n/golden ratio), φ drawn from the seed: a
// Kronecker sequence, whose points spread evenly over any run of
// consecutive arrivals, so each kind strikes within 2 of N × rate of any N
// arrivals (independent draws would miss by the binomial spread: 16
// arrivals at 0.25/0.25/0.125 gave 3/4/5 faults instead of 4/4/2).
func (s *Server) drawFault(seq uint64) (faultKind, int) {
	o := &s.opts
	u := faultPoint(o.Seed, seq)
	pos := newRNG(o.Seed, seq, saltFault).IntN(1 << 30)
	bands := [...]struct {
		k faultKind
		p float64
	}{{faultError, o.ErrorRate}, {faultStreamError, o.StreamErrorRate}, {faultDisconnect, o.DisconnectRate}, {faultStall, o.StallRate}}
	acc := 0.0
	for _, b := range bands {
		acc += b.p
		if b.p > 0 && u < acc {
			return b.k, pos
		}
	}
	return faultNone, 0
}

// goldenStep is 1/φ = (√5 − 1)/2 in units of 2^-64 (⌊2^64/φ⌋), the step of
// the most evenly spread Kronecker sequence.
const goldenStep = 0x9e3779b97f4a7c15

// faultPoint is arrival seq's point in [0,1): frac(φ + seq/golden ratio)
// with the offset φ drawn from the seed. The sum is kept in fixed point
// (2^-64 units, wrapping: the fractional part), so the points stay evenly
// spread however large seq grows.
func faultPoint(seed, seq uint64) float64 {
	return unitFloat(mix(seed, 0, saltFault) + seq*goldenStep)
}

// placeFault maps the raw fault position onto [1, events-1] (mid-stream),
// or 0 when the stream has a single event.
func (g *gen) placeFault() {
	n := len(g.chunks)
	if n <= 1 {
		g.faultAt = 0
		return
	}
	g.faultAt = 1 + g.faultAt%(n-1)
}

const defaultToolName = "get_weather"

// makeToolCall builds a function call of about budget tokens (name plus
// arguments). It reports false when the budget cannot hold the name.
func (s *Server) makeToolCall(name string, budget int, r *rand.Rand, h uint64) (*toolCall, bool) {
	tok := s.opts.Tokenizer
	if !plainToolName(name) {
		name = defaultToolName
	}
	nt := tok.Count(name)
	if nt >= budget && name != defaultToolName {
		name = defaultToolName
		nt = tok.Count(name)
	}
	if nt >= budget {
		return nil, false
	}
	argsOf := func(k int) string {
		words, _ := s.vocab.text(r, k, false)
		return `{"query": "` + strings.Join(words, "") + `"}`
	}
	// The wrapper costs a fixed number of tokens around k words.
	overhead := tok.Count(`{"query": "`+s.vocab.words[0].bare+`"}`) - 1
	k := max(budget-nt-overhead, 1)
	args := argsOf(k)
	ids := tok.Encode(args)
	if len(ids) > budget-nt {
		ids = ids[:budget-nt]
	}
	tc := &toolCall{name: name, nameTokens: nt, callID: "call_" + string(appendHex(nil, mix(s.opts.Seed, h, saltTool)))}
	id1 := make([]int, 1)
	var sb strings.Builder
	for _, id := range ids {
		id1[0] = id
		p := tok.Decode(id1)
		tc.args = append(tc.args, p)
		sb.WriteString(p)
	}
	tc.argsText = sb.String()
	return tc, true
}

// plainToolName accepts names that end in a letter or digit, so that the
// name and the arguments ('{...') never merge into one token.
func plainToolName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	c := s[len(s)-1]
	return c != '_' && c != '-'
}

// ttft draws the request's time to first token in nanoseconds.
func (g *gen) ttft(o *Options) int64 {
	base := float64(o.TTFT) + float64(o.TTFTPerInputToken)*float64(g.promptTokens)
	return int64(base * lognormal(g.timing, o.TTFTJitterCV))
}

// gap draws the next inter-event gap in nanoseconds.
func (g *gen) gap(o *Options) int64 {
	return int64(float64(o.ITL) * lognormal(g.timing, o.ITLJitterCV))
}
