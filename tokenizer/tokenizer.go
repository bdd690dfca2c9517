package tokenizer

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"unicode/utf8"
)

// Tokenizer is a loaded byte-level BPE tokenizer. It is immutable after loading and safe
// for concurrent use by many goroutines.
type Tokenizer struct {
	name   string
	digest string // hex SHA-256 of the tokenizer.json bytes
	numIDs int    // largest id + 1

	vocab          map[string]int // model vocabulary, keys in byte-level form
	addedByContent map[string]int
	rawAdded       *addedMatcher // added tokens matched before normalization
	normAdded      *addedMatcher // added tokens matched after normalization

	nfc         *nfcTables  // nil: no normalizer
	splits      []*splitter // Split pre-tokenizers, applied in turn
	prefixSpace bool        // ByteLevel add_prefix_space
	byteSplit   *splitter   // ByteLevel use_regex: GPT-2's pattern, after the prefix space

	model bpeModel

	decOff     []uint32 // id → decBytes[decOff[id]:decOff[id+1]]
	decBytes   []byte
	decKnown   []bool // id has a token (vocabularies may have holes)
	decodeJoin bool   // no decoder: HuggingFace joins token strings with spaces

	prefixIDs, suffixIDs []int // what the post-processor adds around a single sequence

	cacheWords int // words cached per encoder; 0 disables the cache
	slots      []encoderSlot
}

// encoderSlot holds one encoder and the lock that lends it to one goroutine at a time.
// Slots, unlike a sync.Pool, survive garbage collections, so the word caches stay warm in
// programs that allocate.
type encoderSlot struct {
	mu sync.Mutex
	e  *encoder
	_  [48]byte // keep neighbouring locks off one cache line
}

// Words longer than this are merged every time rather than cached: they are rare, and
// caching them would let one huge input evict the common words.
const maxCachedWordLen = 64

// defaultCacheWords bounds each encoder's word cache (about 3 MB when full).
const defaultCacheWords = 1 << 16

// encoder is the working state of one encoding: scratch buffers and a word cache. The
// Tokenizer lends encoders from its slots, so no two goroutines share one.
type encoder struct {
	t         *Tokenizer
	out       []int
	cache     *wordCache // nil when caching is off
	bpe       bpeScratch
	nfc       nfcScratch
	rawSpans  []addedSpan
	normSpans []addedSpan
	prefixed  []byte
	counted   []int // Count's throwaway output
}

// getEncoder lends an encoder: the first free slot, so that a lone goroutine always
// gets the same one (and its warm cache); when every slot is busy it waits for one.
func (t *Tokenizer) getEncoder() (*encoder, *encoderSlot) {
	for i := range t.slots {
		if s := &t.slots[i]; s.mu.TryLock() {
			return t.slotEncoder(s), s
		}
	}
	s := &t.slots[rand.IntN(len(t.slots))]
	s.mu.Lock()
	return t.slotEncoder(s), s
}

func (t *Tokenizer) slotEncoder(s *encoderSlot) *encoder {
	if s.e == nil {
		s.e = &encoder{t: t}
		if t.cacheWords > 0 {
			s.e.cache = newWordCache(t.cacheWords)
		}
	}
	return s.e
}

// maxKeptScratch bounds the scratch buffers an encoder keeps between calls (in elements),
// so that one huge input does not pin its buffers' memory for the tokenizer's lifetime.
const maxKeptScratch = 1 << 18

// shrink drops scratch buffers that one large input grew beyond maxKeptScratch.
func (e *encoder) shrink() {
	if cap(e.counted) > maxKeptScratch {
		e.counted = nil
	}
	if cap(e.nfc.out) > maxKeptScratch || cap(e.nfc.span) > maxKeptScratch || cap(e.nfc.runes) > maxKeptScratch {
		e.nfc = nfcScratch{}
	}
	if cap(e.bpe.syms) > maxKeptScratch || cap(e.bpe.heap) > maxKeptScratch {
		e.bpe = bpeScratch{}
	}
	if cap(e.rawSpans) > maxKeptScratch || cap(e.normSpans) > maxKeptScratch || cap(e.prefixed) > maxKeptScratch {
		e.rawSpans, e.normSpans, e.prefixed = nil, nil, nil
	}
}

// numSlots is how many encoders a Tokenizer may hold: enough that goroutines on every
// processor rarely wait, few enough to bound memory (a full word cache is about 3 MB).
func numSlots() int {
	return min(max(4, 2*runtime.GOMAXPROCS(0)), 64)
}

// Encode returns the token ids of s. No special tokens are added (the equivalent of
// HuggingFace's encode(s, add_special_tokens=False)); added tokens written in s, such as
// "<|im_start|>", are recognised as themselves. Bytes that are not valid UTF-8 are
// encoded byte by byte rather than rejected.
func (t *Tokenizer) Encode(s string) []int {
	return t.AppendEncode(make([]int, 0, len(s)/3+1), s)
}

// AppendEncode appends the token ids of s to dst and returns the extended slice. Once the
// words of s have been seen (the tokenizer keeps bounded caches of words), it allocates
// nothing when dst has room.
func (t *Tokenizer) AppendEncode(dst []int, s string) []int {
	e, slot := t.getEncoder()
	e.out = dst
	e.encode(s)
	dst = e.out
	e.out = nil
	e.shrink()
	slot.mu.Unlock()
	return dst
}

// Count returns the number of tokens in s, len(Encode(s)), without building the slice.
func (t *Tokenizer) Count(s string) int {
	e, slot := t.getEncoder()
	e.out = e.counted[:0]
	e.encode(s)
	n := len(e.out)
	e.counted, e.out = e.out, nil
	e.shrink()
	slot.mu.Unlock()
	return n
}

// EncodeWithSpecialTokens is Encode plus what the tokenizer's post-processor adds around a
// single sequence (HuggingFace's add_special_tokens=True): a BOS token for Llama 3,
// nothing for Qwen.
func (t *Tokenizer) EncodeWithSpecialTokens(s string) []int {
	dst := make([]int, 0, len(t.prefixIDs)+len(s)/3+1+len(t.suffixIDs))
	dst = append(dst, t.prefixIDs...)
	dst = t.AppendEncode(dst, s)
	return append(dst, t.suffixIDs...)
}

// Decode returns the text of ids, as HuggingFace's decode(ids) does: added and special
// tokens are kept, unknown ids are skipped, and byte sequences that are not valid UTF-8
// (a character cut between ids) become U+FFFD.
func (t *Tokenizer) Decode(ids []int) string {
	b := t.AppendDecode(nil, ids)
	if utf8.Valid(b) {
		return string(b)
	}
	return string(appendLossy(make([]byte, 0, len(b)+8), b))
}

// AppendDecode appends the raw bytes of ids to dst. Unlike Decode it does not repair
// invalid UTF-8, so a stream decoded id by id concatenates to the right bytes.
func (t *Tokenizer) AppendDecode(dst []byte, ids []int) []byte {
	first := true
	for _, id := range ids {
		if id < 0 || id >= t.numIDs || !t.decKnown[id] {
			continue
		}
		if t.decodeJoin && !first {
			dst = append(dst, ' ')
		}
		first = false
		dst = append(dst, t.decBytes[t.decOff[id]:t.decOff[id+1]]...)
	}
	return dst
}

// Name returns where the tokenizer came from: "builtin:qwen3", a path, or a model id.
func (t *Tokenizer) Name() string { return t.name }

// SHA256 returns the hex SHA-256 of the tokenizer.json bytes, which identifies the
// tokenizer exactly (plans record it).
func (t *Tokenizer) SHA256() string { return t.digest }

// VocabSize returns the number of token ids: one more than the largest id of the
// vocabulary and the added tokens (151669 for Qwen3; the model's embedding matrix may be
// padded beyond it).
func (t *Tokenizer) VocabSize() int { return t.numIDs }

// TokenID returns the id of an added token (by its content, e.g. "<|im_end|>") or of a
// vocabulary token in its byte-level spelling (e.g. "Ġworld" for " world").
func (t *Tokenizer) TokenID(tok string) (int, bool) {
	if id, ok := t.addedByContent[tok]; ok {
		return id, true
	}
	id, ok := t.vocab[tok]
	return id, ok
}

// encode appends the ids of s to e.out: added tokens found in the raw text, the rest
// normalized, pre-tokenized and merged.
func (e *encoder) encode(s string) {
	t := e.t
	if t.rawAdded == nil {
		e.encodeSegment(s)
		return
	}
	e.rawSpans = t.rawAdded.appendSpans(e.rawSpans[:0], s)
	for _, sp := range e.rawSpans {
		if sp.tok != nil {
			e.out = append(e.out, sp.tok.id)
		} else {
			e.encodeSegment(s[sp.start:sp.end])
		}
	}
}

// encodeSegment handles text between raw-matched added tokens.
func (e *encoder) encodeSegment(s string) {
	t := e.t
	if t.nfc != nil {
		s = t.nfc.normalize(s, &e.nfc)
	}
	if t.normAdded == nil {
		e.pretokenize(s)
		return
	}
	e.normSpans = t.normAdded.appendSpans(e.normSpans[:0], s)
	for _, sp := range e.normSpans {
		if sp.tok != nil {
			e.out = append(e.out, sp.tok.id)
		} else {
			e.pretokenize(s[sp.start:sp.end])
		}
	}
}

func (e *encoder) pretokenize(s string) {
	if len(e.t.splits) == 0 {
		e.byteLevel(s)
		return
	}
	e.splitStage(0, s)
}

// splitStage runs Split pre-tokenizer k over s and passes each piece on.
func (e *encoder) splitStage(k int, s string) {
	sp := e.t.splits[k]
	last := k == len(e.t.splits)-1
	for i := 0; i < len(s); {
		j := sp.next(s, i)
		if last {
			e.byteLevel(s[i:j])
		} else {
			e.splitStage(k+1, s[i:j])
		}
		i = j
	}
}

// byteLevel is the ByteLevel pre-tokenizer: optional prefix space and GPT-2 split.
func (e *encoder) byteLevel(piece string) {
	t := e.t
	if piece == "" {
		return
	}
	if t.prefixSpace && piece[0] != ' ' {
		e.prefixed = append(append(e.prefixed[:0], ' '), piece...)
		piece = string(e.prefixed)
	}
	if t.byteSplit == nil {
		e.word(piece)
		return
	}
	for i := 0; i < len(piece); {
		j := t.byteSplit.next(piece, i)
		e.word(piece[i:j])
		i = j
	}
}

// word appends the ids of one pre-tokenized piece, from the cache when possible.
func (e *encoder) word(w string) {
	m := &e.t.model
	if len(w) == 1 {
		if ids := m.byteIDs[w[0]]; len(ids) == 1 && !m.byteFallback[w[0]] {
			e.out = append(e.out, int(ids[0]))
			return
		}
	}
	cacheable := e.cache != nil && len(w) <= maxCachedWordLen
	if cacheable {
		if ids, ok := e.cache.get(w); ok {
			for _, id := range ids {
				e.out = append(e.out, int(id))
			}
			return
		}
	}
	start := len(e.out)
	e.out = m.appendWord(e.out, w, &e.bpe)
	if cacheable {
		e.cache.put(w, e.out[start:])
	}
}
