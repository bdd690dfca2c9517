package tokenizer

import (
	"encoding/json"
	"testing"
)

// synth describes a small tokenizer.json for tests: the 256 byte tokens (ids 0–255 in byte
// order), then one token per merge, then extra tokens, plus whatever components a test sets.
type synth struct {
	merges        [][2]string // byte-level spelling
	extra         []string    // more vocabulary tokens (byte-level spelling)
	added         []map[string]any
	normalizer    any
	preTokenizer  any // default: Qwen's Split + ByteLevel
	postProcessor any
	decoder       any // default: ByteLevel; use "null" for none
	model         map[string]any
	dropBytes     []byte // bytes whose token is left out of the vocabulary
}

func (s synth) json(t testing.TB) []byte {
	t.Helper()
	vocab := map[string]int{}
	next := 0
	add := func(tok string) {
		if _, ok := vocab[tok]; !ok {
			vocab[tok] = next
			next++
		}
	}
	drop := map[byte]bool{}
	for _, b := range s.dropBytes {
		drop[b] = true
	}
	for b := 0; b < 256; b++ {
		if drop[byte(b)] {
			next++ // keep ids of the other bytes where they were
			continue
		}
		add(string(byteToRune[b]))
	}
	var merges [][]string
	for _, m := range s.merges {
		add(m[0] + m[1])
		merges = append(merges, []string{m[0], m[1]})
	}
	for _, e := range s.extra {
		add(e)
	}
	model := map[string]any{"type": "BPE", "dropout": nil, "unk_token": nil, "vocab": vocab, "merges": merges}
	for k, v := range s.model {
		model[k] = v
	}
	doc := map[string]any{
		"version": "1.0", "truncation": nil, "padding": nil,
		"added_tokens": s.added, "normalizer": s.normalizer, "post_processor": s.postProcessor,
		"model": model,
	}
	if doc["added_tokens"] == nil {
		doc["added_tokens"] = []any{}
	}
	doc["pre_tokenizer"] = s.preTokenizer
	if s.preTokenizer == nil {
		doc["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": qwenPattern}, "behavior": "Isolated", "invert": false},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false},
		}}
	}
	switch s.decoder {
	case nil:
		doc["decoder"] = map[string]any{"type": "ByteLevel"}
	case "null":
		doc["decoder"] = nil
	default:
		doc["decoder"] = s.decoder
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func (s synth) parse(t testing.TB) *Tokenizer {
	t.Helper()
	tok, err := Parse(s.json(t))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func addedTok(id int, content string, opts map[string]bool) map[string]any {
	m := map[string]any{"id": id, "content": content, "single_word": false, "lstrip": false,
		"rstrip": false, "normalized": false, "special": true}
	for k, v := range opts {
		m[k] = v
	}
	return m
}

// ids spells the expected ids of byte tokens, for synthetic tokenizers without merges.
func byteIDsOf(s string) []int {
	out := make([]int, len(s))
	for i := 0; i < len(s); i++ {
		out[i] = int(s[i])
	}
	return out
}
