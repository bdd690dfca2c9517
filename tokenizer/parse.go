package tokenizer

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/llmbench/llmbench/internal/jsonwire"
)

// The subset of tokenizer.json (HuggingFace tokenizers' serialization) that byte-level
// BPE uses. Everything else is rejected by name rather than silently mis-tokenized.

type addedJSON struct {
	ID         *int   `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	Lstrip     bool   `json:"lstrip"`
	Rstrip     bool   `json:"rstrip"`
	Normalized *bool  `json:"normalized"`
	Special    bool   `json:"special"`
}

// modelJSON holds the model's small fields; vocab and merges are read by hand.
type modelJSON struct {
	Type                    string
	Dropout                 *float64
	UnkToken                *string
	ContinuingSubwordPrefix *string
	EndOfWordSuffix         *string
	FuseUnk                 bool
	ByteFallback            bool
	IgnoreMerges            bool
	vocab                   map[string]int
	merges                  *mergeTable      // read with the vocab when it comes first (it does in HuggingFace's files)
	mergesAt                jsonwire.RawSpan // else where they are, read later; empty if absent
	sawType                 bool
}

// field pairs a key with where its value is decoded to.
type field struct {
	key string
	dst any
}

// rawObject holds an object's values, to decode the ones that matter by key.
type rawObject map[string]json.RawMessage

// get decodes the value at key into v; absent and null values leave v alone.
func (o rawObject) get(key string, v any) error {
	raw, ok := o[key]
	if !ok || isNull(raw) {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

// component is the "type"-tagged shape shared by normalizers, pre-tokenizers, decoders
// and post-processors; only the fields of the supported types are listed.
type component struct {
	Type           string            `json:"type"`
	Normalizers    []json.RawMessage `json:"normalizers"`
	Pretokenizers  []json.RawMessage `json:"pretokenizers"`
	Decoders       []json.RawMessage `json:"decoders"`
	Processors     []json.RawMessage `json:"processors"`
	Pattern        *patternJSON      `json:"pattern"`
	Behavior       string            `json:"behavior"`
	Invert         bool              `json:"invert"`
	AddPrefixSpace *bool             `json:"add_prefix_space"`
	UseRegex       *bool             `json:"use_regex"`
	Single         []templatePiece   `json:"single"`
	SpecialTokens  map[string]struct {
		IDs []int `json:"ids"`
	} `json:"special_tokens"`
	Cls []json.RawMessage `json:"cls"` // ["<s>", 0]
	Sep []json.RawMessage `json:"sep"`
}

type patternJSON struct {
	Regex  *string `json:"Regex"`
	String *string `json:"String"`
}

type templatePiece struct {
	SpecialToken *struct {
		ID string `json:"id"`
	} `json:"SpecialToken"`
	Sequence *struct {
		ID string `json:"id"`
	} `json:"Sequence"`
}

// maxTokenID bounds ids so that a corrupt file cannot make Parse allocate gigabytes.
const maxTokenID = 1 << 24

// Parse builds a Tokenizer from a tokenizer.json document. It accepts BPE models with
// byte-level pre-tokenization (GPT-2, Llama 3, Qwen2/3, Mistral-Nemo, o200k styles) and
// returns an error naming the first unsupported feature otherwise.
func Parse(data []byte) (*Tokenizer, error) {
	t, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	return t, nil
}

func parse(data []byte) (*Tokenizer, error) {
	s := jsonwire.NewScanner(data)
	if !s.EnterObject() {
		return nil, fmt.Errorf("tokenizer.json: %w", errNotObject)
	}
	top := rawObject{}
	var model *modelJSON
	n := 0
	for key, ok := s.Member(&n); ok; key, ok = s.Member(&n) {
		if string(key) != "model" {
			top[string(key)] = s.Raw()
			continue
		}
		m, err := readModel(&s)
		if err != nil {
			return nil, fmt.Errorf("tokenizer.json: %w", err)
		}
		model = m
	}
	s.End()
	if err := scanError(&s); err != nil {
		return nil, fmt.Errorf("tokenizer.json: %w", err)
	}
	// truncation and padding only shape batches for model input; Encode never truncates
	// or pads, so they are ignored.
	var added []addedJSON
	var normalizer, preTokenizer, postProcessor, decoder json.RawMessage
	for _, f := range []field{
		{"added_tokens", &added}, {"normalizer", &normalizer}, {"pre_tokenizer", &preTokenizer},
		{"post_processor", &postProcessor}, {"decoder", &decoder},
	} {
		if err := top.get(f.key, f.dst); err != nil {
			return nil, err
		}
	}
	sum := sha256.Sum256(data)
	t := &Tokenizer{digest: hex.EncodeToString(sum[:]), cacheWords: defaultCacheWords, slots: make([]encoderSlot, numSlots())}

	// The model first: "model type Unigram" explains a rejection better than its
	// pre-tokenizer does.
	if model == nil {
		return nil, errors.New("model: missing")
	}
	if err := t.parseModel(data, model); err != nil {
		return nil, err
	}
	if err := t.parseNormalizer(normalizer); err != nil {
		return nil, err
	}
	if err := t.parsePreTokenizer(preTokenizer); err != nil {
		return nil, err
	}
	addedToks, err := t.parseAdded(added)
	if err != nil {
		return nil, err
	}
	if limit := 2*(len(t.vocab)+len(addedToks)) + 1024; t.numIDs > limit {
		return nil, fmt.Errorf("token ids: largest is %d for %d tokens; ids this sparse are not supported", t.numIDs-1, len(t.vocab)+len(addedToks))
	}
	if err := t.buildDecoder(decoder, addedToks); err != nil {
		return nil, err
	}
	if err := t.parsePostProcessor(postProcessor, &t.prefixIDs, &t.suffixIDs); err != nil {
		return nil, err
	}
	return t, nil
}

// readModel reads the model object, noting where vocab and merges are.
func readModel(s *jsonwire.Scanner) (*modelJSON, error) {
	if !s.EnterObject() {
		return nil, fmt.Errorf("model: %w", errNotObject)
	}
	m := &modelJSON{}
	fields := rawObject{}
	// Vocab and merges are read in place, not skipped and re-read, unless the model is not
	// BPE at all, which is better reported by its type than by a vocab in another shape.
	notBPE := func() bool { return m.sawType && m.Type != "BPE" }
	n := 0
	for key, ok := s.Member(&n); ok; key, ok = s.Member(&n) {
		var err error
		switch k := string(key); {
		case k == "vocab" && !notBPE():
			if m.vocab, err = readVocab(s); err != nil {
				return nil, fmt.Errorf("model.vocab: %w", err)
			}
		case k == "merges" && !notBPE() && m.vocab != nil:
			if m.merges, err = readMerges(s, m.vocab); err != nil {
				return nil, fmt.Errorf("model.merges: %w", err)
			}
		case k == "merges":
			m.mergesAt = s.ValueSpan()
		default:
			raw := s.Raw()
			fields[k] = raw
			if k == "type" && s.Err() == nil {
				m.sawType = json.Unmarshal(raw, &m.Type) == nil
			}
		}
	}
	if err := scanError(s); err != nil {
		return nil, err
	}
	for _, f := range []field{
		{"type", &m.Type}, {"dropout", &m.Dropout}, {"unk_token", &m.UnkToken},
		{"continuing_subword_prefix", &m.ContinuingSubwordPrefix}, {"end_of_word_suffix", &m.EndOfWordSuffix},
		{"fuse_unk", &m.FuseUnk}, {"byte_fallback", &m.ByteFallback}, {"ignore_merges", &m.IgnoreMerges},
	} {
		if err := fields.get(f.key, f.dst); err != nil {
			return nil, fmt.Errorf("model.%w", err)
		}
	}
	return m, nil
}

// errNotObject is the error for a document or model that is not a JSON object.
var errNotObject = errors.New("not a JSON object")

// scanError is the scanner's syntax error, if any, naming its line.
func scanError(s *jsonwire.Scanner) error {
	if e := s.Err(); e != nil {
		return lineError(s.Bytes(), e.Offset, "%s", e.Msg)
	}
	return nil
}

// lineError is an error at byte off of data, naming its line.
func lineError(data []byte, off int, format string, args ...any) error {
	line := 1 + bytes.Count(data[:min(max(off, 0), len(data))], []byte{'\n'})
	return fmt.Errorf("line %d: %s", line, fmt.Sprintf(format, args...))
}

func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

func decodeComponent(raw json.RawMessage, what string) (*component, error) {
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return &c, nil
}

// parseNormalizer accepts no normalizer or NFC (possibly inside a Sequence).
func (t *Tokenizer) parseNormalizer(raw json.RawMessage) error {
	if isNull(raw) {
		return nil
	}
	c, err := decodeComponent(raw, "normalizer")
	if err != nil {
		return err
	}
	switch c.Type {
	case "NFC":
		t.nfc = nfcData()
		return nil
	case "Sequence":
		for i, sub := range c.Normalizers {
			if err := t.parseNormalizer(sub); err != nil {
				return fmt.Errorf("normalizer Sequence[%d]: %w", i, err)
			}
		}
		return nil
	}
	return fmt.Errorf("normalizer %q is not supported (only NFC or none)", c.Type)
}

// parsePreTokenizer accepts Split(Regex, Isolated) steps followed by one ByteLevel.
func (t *Tokenizer) parsePreTokenizer(raw json.RawMessage) error {
	if isNull(raw) {
		return errors.New("pre_tokenizer: missing; only byte-level BPE (a ByteLevel pre-tokenizer) is supported")
	}
	var steps []*component
	var flatten func(raw json.RawMessage, where string) error
	flatten = func(raw json.RawMessage, where string) error {
		c, err := decodeComponent(raw, where)
		if err != nil {
			return err
		}
		if c.Type != "Sequence" {
			steps = append(steps, c)
			return nil
		}
		for i, sub := range c.Pretokenizers {
			if err := flatten(sub, fmt.Sprintf("%s.pretokenizers[%d]", where, i)); err != nil {
				return err
			}
		}
		return nil
	}
	if err := flatten(raw, "pre_tokenizer"); err != nil {
		return err
	}
	sawByteLevel := false
	for _, c := range steps {
		if sawByteLevel {
			return fmt.Errorf("pre_tokenizer: %q after ByteLevel is not supported", c.Type)
		}
		switch c.Type {
		case "Split":
			if c.Pattern == nil || c.Pattern.Regex == nil {
				if c.Pattern != nil && c.Pattern.String != nil {
					return fmt.Errorf("pre_tokenizer Split: String pattern %q is not supported (only Regex)", *c.Pattern.String)
				}
				return errors.New("pre_tokenizer Split: missing pattern")
			}
			if c.Behavior != "Isolated" {
				return fmt.Errorf("pre_tokenizer Split: behavior %q is not supported (only Isolated)", c.Behavior)
			}
			if c.Invert {
				return errors.New("pre_tokenizer Split: invert true is not supported")
			}
			sp, err := newSplitter(*c.Pattern.Regex)
			if err != nil {
				return fmt.Errorf("pre_tokenizer Split: %w", err)
			}
			t.splits = append(t.splits, sp)
		case "ByteLevel":
			sawByteLevel = true
			// HuggingFace's defaults when the fields are absent are true for both.
			t.prefixSpace = c.AddPrefixSpace == nil || *c.AddPrefixSpace
			if c.UseRegex == nil || *c.UseRegex {
				sp, err := newSplitter(gpt2Pattern)
				if err != nil {
					return fmt.Errorf("pre_tokenizer ByteLevel: %w", err)
				}
				t.byteSplit = sp
			}
		default:
			return fmt.Errorf("pre_tokenizer %q is not supported (only Split with a Regex, and ByteLevel)", c.Type)
		}
	}
	if !sawByteLevel {
		return errors.New("pre_tokenizer: no ByteLevel step; only byte-level BPE is supported")
	}
	return nil
}

func (t *Tokenizer) parseModel(data []byte, m *modelJSON) error {
	if m.Type != "BPE" && !(m.Type == "" && (m.merges != nil || m.mergesAt.Len() > 0)) {
		return fmt.Errorf("model type %q is not supported (only BPE)", m.Type)
	}
	if m.Dropout != nil && *m.Dropout != 0 {
		return fmt.Errorf("model.dropout %v is not supported: it makes tokenization random", *m.Dropout)
	}
	if m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "" {
		return fmt.Errorf("model.continuing_subword_prefix %q is not supported", *m.ContinuingSubwordPrefix)
	}
	if m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "" {
		return fmt.Errorf("model.end_of_word_suffix %q is not supported", *m.EndOfWordSuffix)
	}
	vocab := m.vocab
	if vocab == nil {
		return errors.New("model.vocab: missing")
	}
	if len(vocab) == 0 {
		return errors.New("model.vocab: empty")
	}
	for _, id := range vocab {
		t.numIDs = max(t.numIDs, id+1)
	}
	t.vocab = vocab

	md := &t.model
	md.unk = -1
	if m.UnkToken != nil {
		id, ok := vocab[*m.UnkToken]
		if !ok {
			return fmt.Errorf("model.unk_token %q is not in the vocabulary", *m.UnkToken)
		}
		md.unk = int32(id)
	}
	md.fuseUnk = m.FuseUnk
	for b := 0; b < 256; b++ {
		tok := string(byteToRune[b])
		if id, ok := vocab[tok]; ok {
			md.byteIDs[b] = []int32{int32(id)}
			continue
		}
		if m.ByteFallback {
			var ids []int32
			for _, c := range []byte(tok) {
				id, ok := vocab[fmt.Sprintf("<0x%02X>", c)]
				if !ok {
					ids = nil
					break
				}
				ids = append(ids, int32(id))
			}
			md.byteIDs[b], md.byteFallback[b] = ids, ids != nil
		}
	}

	switch {
	case m.merges != nil:
		md.merges = m.merges
	case m.mergesAt.Len() > 0:
		var err error
		whole := jsonwire.NewScanner(data)
		sub := whole.Sub(m.mergesAt)
		if md.merges, err = readMerges(&sub, vocab); err != nil {
			return fmt.Errorf("model.merges: %w", err)
		}
	default:
		md.merges = newMergeTable(0)
	}

	if m.IgnoreMerges {
		md.ignoreMerges = true
		md.rawVocab = make(map[string]int32, len(vocab))
		var buf []byte
		for tok, id := range vocab {
			var ok bool
			if buf, ok = byteLevelDecode(buf[:0], tok); ok {
				md.rawVocab[string(buf)] = int32(id)
			}
		}
	}
	return nil
}

// readVocab reads the vocabulary object, token → id.
func readVocab(s *jsonwire.Scanner) (map[string]int, error) {
	if !s.EnterObject() {
		if err := scanError(s); err != nil {
			return nil, err
		}
		return nil, lineError(s.Bytes(), s.Pos(), "expected an object of token ids")
	}
	vocab := make(map[string]int, 1024)
	var seen []bool // by id, to catch two tokens sharing an id
	n := 0
	for key, ok := s.Member(&n); ok; key, ok = s.Member(&n) {
		at := s.Pos()
		raw := s.Raw()
		if s.Err() != nil {
			break
		}
		id, err := strconv.Atoi(string(raw))
		if err != nil {
			return nil, lineError(s.Bytes(), at, "token %q: expected an integer id, got %s", key, raw)
		}
		if id < 0 || id >= maxTokenID {
			return nil, lineError(s.Bytes(), at, "token %q has id %d, outside [0, %d)", key, id, maxTokenID)
		}
		if _, dup := vocab[string(key)]; dup {
			return nil, lineError(s.Bytes(), at, "token %q appears twice", key)
		}
		if id >= len(seen) {
			seen = append(seen, make([]bool, id+1-len(seen)+len(seen)/2)...)
		}
		if seen[id] {
			return nil, lineError(s.Bytes(), at, "token %q reuses id %d", key, id)
		}
		seen[id] = true
		vocab[string(key)] = id
	}
	return vocab, scanError(s)
}

// readMerges reads the merge list in either form HuggingFace writes, ["a b", ...] or
// [["a", "b"], ...], into a merge table; a merge's rank is its index.
func readMerges(s *jsonwire.Scanner, vocab map[string]int) (*mergeTable, error) {
	type merge struct{ a, b, ab int32 }
	var list []merge
	if s.IsNull() {
		return newMergeTable(0), scanError(s)
	}
	if !s.EnterArray() {
		if err := scanError(s); err != nil {
			return nil, err
		}
		return nil, lineError(s.Bytes(), s.Pos(), "expected a list")
	}
	var a, b, ab []byte
	n := 0
	for i := 0; s.Element(&n); i++ {
		switch s.Peek() {
		case '"':
			a, _ = s.Str(a[:0])
			sp := bytes.IndexByte(a, ' ')
			if s.Err() == nil && sp < 0 {
				return nil, fmt.Errorf("[%d]: %q is not two tokens separated by a space", i, a)
			}
			if sp >= 0 {
				b = append(b[:0], a[sp+1:]...)
				a = a[:sp]
			}
		case '[':
			s.EnterArray()
			parts, m := 0, 0
			for s.Element(&m) {
				at := s.Pos()
				var ok bool
				switch parts {
				case 0:
					a, ok = s.Str(a[:0])
				case 1:
					b, ok = s.Str(b[:0])
				default:
					return nil, fmt.Errorf("[%d]: more than 2 tokens", i)
				}
				if !ok && s.Err() == nil {
					return nil, lineError(s.Bytes(), at, "[%d]: expected a string", i)
				}
				parts++
			}
			if s.Err() == nil && parts != 2 {
				return nil, fmt.Errorf("[%d]: %d tokens, want 2", i, parts)
			}
		default:
			if s.Err() == nil {
				return nil, lineError(s.Bytes(), s.Pos(), "[%d]: expected a string or a list", i)
			}
		}
		if s.Err() != nil {
			break
		}
		ab = append(append(ab[:0], a...), b...)
		idA, okA := vocab[string(a)]
		idB, okB := vocab[string(b)]
		idAB, okAB := vocab[string(ab)]
		switch {
		case !okA:
			return nil, fmt.Errorf("[%d]: %q is not in the vocabulary", i, a)
		case !okB:
			return nil, fmt.Errorf("[%d]: %q is not in the vocabulary", i, b)
		case !okAB:
			return nil, fmt.Errorf("[%d]: merged token %q is not in the vocabulary", i, ab)
		}
		list = append(list, merge{int32(idA), int32(idB), int32(idAB)})
	}
	if err := scanError(s); err != nil {
		return nil, err
	}
	mt := newMergeTable(len(list))
	for rank, m := range list {
		mt.put(m.a, m.b, int32(rank), m.ab)
	}
	return mt, nil
}

func (t *Tokenizer) parseAdded(list []addedJSON) ([]*addedToken, error) {
	t.addedByContent = make(map[string]int, len(list))
	var raw, norm, all []*addedToken
	for i, a := range list {
		if a.ID == nil {
			return nil, fmt.Errorf("added_tokens[%d]: missing id", i)
		}
		if *a.ID < 0 || *a.ID >= maxTokenID {
			return nil, fmt.Errorf("added_tokens[%d]: id %d outside [0, %d)", i, *a.ID, maxTokenID)
		}
		if a.Content == "" {
			return nil, fmt.Errorf("added_tokens[%d]: empty content", i)
		}
		tok := &addedToken{
			id: *a.ID, content: a.Content, pattern: a.Content,
			singleWord: a.SingleWord, lstrip: a.Lstrip, rstrip: a.Rstrip, special: a.Special,
			// HuggingFace's AddedToken defaults "normalized" to !special.
			normalized: !a.Special,
		}
		if a.Normalized != nil {
			tok.normalized = *a.Normalized
		}
		t.numIDs = max(t.numIDs, tok.id+1)
		t.addedByContent[tok.content] = tok.id
		all = append(all, tok)
		if tok.normalized {
			if t.nfc != nil {
				var sc nfcScratch
				tok.pattern = t.nfc.normalize(tok.content, &sc)
			}
			norm = append(norm, tok)
		} else {
			raw = append(raw, tok)
		}
	}
	t.rawAdded, t.normAdded = newAddedMatcher(raw), newAddedMatcher(norm)
	return all, nil
}

// buildDecoder precomputes every id's bytes. HuggingFace passes added tokens through the
// decoder as well, so their content goes through the same byte-level mapping.
func (t *Tokenizer) buildDecoder(raw json.RawMessage, added []*addedToken) error {
	if isNull(raw) {
		t.decodeJoin = true
	} else if err := checkDecoder(raw, "decoder"); err != nil {
		return err
	}
	toks := make([]string, t.numIDs)
	t.decKnown = make([]bool, t.numIDs)
	for tok, id := range t.vocab {
		toks[id], t.decKnown[id] = tok, true
	}
	for _, a := range added {
		toks[a.id], t.decKnown[a.id] = a.content, true
	}
	t.decOff = make([]uint32, t.numIDs+1)
	for id, tok := range toks {
		if t.decodeJoin {
			t.decBytes = append(t.decBytes, tok...)
		} else {
			t.decBytes, _ = byteLevelDecode(t.decBytes, tok)
		}
		t.decOff[id+1] = uint32(len(t.decBytes))
	}
	return nil
}

// checkDecoder accepts ByteLevel, alone or as the only member of a Sequence.
func checkDecoder(raw json.RawMessage, where string) error {
	c, err := decodeComponent(raw, where)
	if err != nil {
		return err
	}
	switch c.Type {
	case "ByteLevel":
		return nil
	case "Sequence":
		if len(c.Decoders) != 1 {
			return fmt.Errorf("%s: Sequence of %d decoders is not supported (only a single ByteLevel)", where, len(c.Decoders))
		}
		return checkDecoder(c.Decoders[0], where+".decoders[0]")
	}
	return fmt.Errorf("%s %q is not supported (only ByteLevel)", where, c.Type)
}

// parsePostProcessor collects the ids added around a single sequence.
func (t *Tokenizer) parsePostProcessor(raw json.RawMessage, prefix, suffix *[]int) error {
	if isNull(raw) {
		return nil
	}
	c, err := decodeComponent(raw, "post_processor")
	if err != nil {
		return err
	}
	switch c.Type {
	case "ByteLevel":
		return nil // only adjusts offsets
	case "Sequence":
		for i, sub := range c.Processors {
			if err := t.parsePostProcessor(sub, prefix, suffix); err != nil {
				return fmt.Errorf("post_processor Sequence[%d]: %w", i, err)
			}
		}
		return nil
	case "TemplateProcessing":
		var pre, post []int
		seenA := false
		for i, p := range c.Single {
			switch {
			case p.Sequence != nil:
				if p.Sequence.ID != "A" || seenA {
					return fmt.Errorf("post_processor TemplateProcessing: single[%d]: sequence %q is not supported", i, p.Sequence.ID)
				}
				seenA = true
			case p.SpecialToken != nil:
				st, ok := c.SpecialTokens[p.SpecialToken.ID]
				if !ok {
					return fmt.Errorf("post_processor TemplateProcessing: single[%d]: special token %q is not in special_tokens", i, p.SpecialToken.ID)
				}
				if seenA {
					post = append(post, st.IDs...)
				} else {
					pre = append(pre, st.IDs...)
				}
			default:
				return fmt.Errorf("post_processor TemplateProcessing: single[%d]: unknown piece", i)
			}
		}
		*prefix = append(pre, *prefix...)
		*suffix = append(*suffix, post...)
		return nil
	case "RobertaProcessing", "BertProcessing":
		cls, err := processorToken(c.Cls, c.Type, "cls")
		if err != nil {
			return err
		}
		sep, err := processorToken(c.Sep, c.Type, "sep")
		if err != nil {
			return err
		}
		*prefix = append([]int{cls}, *prefix...)
		*suffix = append(*suffix, sep)
		return nil
	}
	return fmt.Errorf("post_processor %q is not supported", c.Type)
}

// processorToken reads a ["token", id] pair of Roberta/Bert processors.
func processorToken(pair []json.RawMessage, typ, field string) (int, error) {
	var id int
	if len(pair) != 2 || json.Unmarshal(pair[1], &id) != nil {
		return 0, fmt.Errorf("post_processor %s: %s is not a [token, id] pair", typ, field)
	}
	return id, nil
}
