package tokenizer

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestBuiltinBasics(t *testing.T) {
	tok := builtin(t)
	if got := tok.Encode("Hello world"); !slices.Equal(got, []int{9707, 1879}) {
		t.Errorf("Encode(Hello world) = %v, want [9707 1879]", got)
	}
	if tok.Name() != "builtin:qwen3" {
		t.Errorf("Name = %q", tok.Name())
	}
	// The digest of /work/shared/data/tokenizer/qwen3-tokenizer.json: the embedded file is
	// that file, byte for byte.
	if got, want := tok.SHA256(), "aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4"; got != want {
		t.Errorf("SHA256 = %s, want %s", got, want)
	}
	if got := tok.VocabSize(); got != 151669 {
		t.Errorf("VocabSize = %d, want 151669", got)
	}
	for tokStr, want := range map[string]int{"<|im_end|>": 151645, "<think>": 151667, "Ġworld": 1879, "Hello": 9707} {
		if id, ok := tok.TokenID(tokStr); !ok || id != want {
			t.Errorf("TokenID(%q) = %d, %v; want %d", tokStr, id, ok, want)
		}
	}
	if _, ok := tok.TokenID(" world"); ok {
		t.Errorf("TokenID accepts raw text; vocabulary tokens are byte-level spelled")
	}
	if got := tok.EncodeWithSpecialTokens("Hello world"); !slices.Equal(got, []int{9707, 1879}) {
		t.Errorf("Qwen3 adds no special tokens, got %v", got)
	}
	again, err := Load("builtin")
	if err != nil || again != tok {
		t.Errorf("Load(builtin) = %p, %v; want the shared %p", again, err, tok)
	}
}

func TestEncodeDecodeExamples(t *testing.T) {
	tok := builtin(t)
	tests := []struct {
		in   string
		want []int // nil: only check the round trip
		dec  string
	}{
		{in: "<|im_start|>user\nhi<|im_end|>", want: []int{151644, 872, 198, 6023, 151645}},
		{in: "<think>\n\n</think>"},
		{in: "e\u0301", dec: "é"},                               // NFC composes before tokenizing
		{in: "\u0958", dec: "\u0915\u093c"},                     // and decomposes exclusions
		{in: "a<|im_start|>\u0301", dec: "a<|im_start|>\u0301"}, // segments normalize separately
		{in: ""},
		{in: "   leading and trailing   "},
		{in: "tabs\tand\r\nnewlines\n\n\n"},
		{in: "emoji 😀👍🏽 and CJK 中文字符"},
	}
	for _, tt := range tests {
		ids := tok.Encode(tt.in)
		if tt.want != nil && !slices.Equal(ids, tt.want) {
			t.Errorf("Encode(%+q) = %v, want %v", tt.in, ids, tt.want)
		}
		want := tt.dec
		if want == "" {
			want = tt.in
		}
		if got := tok.Decode(ids); got != want {
			t.Errorf("Decode(Encode(%+q)) = %+q, want %+q", tt.in, got, want)
		}
	}
}

func TestDecodeInvalid(t *testing.T) {
	tok := builtin(t)
	ids := tok.Encode("€") // one token for three bytes, or several: cut it in the middle
	all := tok.AppendDecode(nil, ids)
	if string(all) != "€" {
		t.Fatalf("AppendDecode = %q", all)
	}
	// Byte tokens of the first two bytes of "€" decode to one U+FFFD, as in Rust.
	part := []int{int(tok.model.byteIDs[0xE2][0]), int(tok.model.byteIDs[0x82][0])}
	if got := tok.Decode(part); got != "\ufffd" {
		t.Errorf("Decode(partial €) = %+q, want one U+FFFD", got)
	}
	if got := string(tok.AppendDecode(nil, part)); got != "\xe2\x82" {
		t.Errorf("AppendDecode keeps raw bytes, got %+q", got)
	}
	if got := tok.Decode([]int{-1, 9707, 1 << 30, 1879}); got != "Hello world" {
		t.Errorf("unknown ids are skipped: got %q", got)
	}
}

func TestAllocations(t *testing.T) {
	tok := builtin(t)
	text := "The quick brown fox jumps over the lazy dog. Ünïcödé, 中文, and <|im_end|>\n\n"
	dst := tok.AppendEncode(nil, text) // warm this goroutine's cache
	if n := testing.AllocsPerRun(100, func() { dst = tok.AppendEncode(dst[:0], text) }); n != 0 {
		t.Errorf("AppendEncode allocates %v times per call with a warm cache", n)
	}
	if n := testing.AllocsPerRun(100, func() { tok.Count(text) }); n != 0 {
		t.Errorf("Count allocates %v times per call", n)
	}
	buf := tok.AppendDecode(nil, dst)
	if n := testing.AllocsPerRun(100, func() { buf = tok.AppendDecode(buf[:0], dst) }); n != 0 {
		t.Errorf("AppendDecode allocates %v times per call", n)
	}
}

// TestConcurrent encodes the golden lines from many goroutines at once (run with -race).
func TestConcurrent(t *testing.T) {
	tok := builtin(t)
	lines := readGolden(t)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < len(lines); i += 3 {
				if got := tok.Encode(lines[i].Text); !slices.Equal(got, lines[i].IDs) {
					errs <- fmt.Sprintf("goroutine %d, line %d differs", g, i+1)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestSmallCache makes the word cache evict constantly; results must not change.
func TestSmallCache(t *testing.T) {
	tok := withCache(builtin(t), 7)
	for n, g := range readGolden(t)[:60] {
		for range 2 {
			if got := tok.Encode(g.Text); !slices.Equal(got, g.IDs) {
				t.Fatalf("line %d differs with a tiny cache", n+1)
			}
		}
	}
}

func TestAddedTokenOptions(t *testing.T) {
	s := synth{added: []map[string]any{
		addedTok(300, "<m>", nil),
		addedTok(301, "<ls>", map[string]bool{"lstrip": true}),
		addedTok(302, "<rs>", map[string]bool{"rstrip": true}),
		addedTok(303, "<w>", map[string]bool{"single_word": true}),
		addedTok(304, "<m>x", nil), // longest match wins
		addedTok(305, "é", map[string]bool{"normalized": true, "special": false}),
	}}
	tok := s.parse(t)
	tests := []struct {
		in   string
		want []int
	}{
		{"a<m>b", concat(byteIDsOf("a"), []int{300}, byteIDsOf("b"))},
		{"a<m>xb", concat(byteIDsOf("a"), []int{304}, byteIDsOf("b"))},
		{"a  <ls>b", concat(byteIDsOf("a"), []int{301}, byteIDsOf("b"))},
		{"a<rs> \n b", concat(byteIDsOf("a"), []int{302}, byteIDsOf("b"))},
		{"x<w>", byteIDsOf("x<w>")},
		{"x <w> y", concat(byteIDsOf("x "), []int{303}, byteIDsOf(" y"))},
		{"_<w>", byteIDsOf("_<w>")},
		{"cafe\u0301!", concat(byteIDsOf("caf"), []int{305}, byteIDsOf("!"))}, // matched after NFC... if NFC is on
	}
	for _, tt := range tests[:len(tests)-1] {
		if got := tok.Encode(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Encode(%+q) = %v, want %v", tt.in, got, tt.want)
		}
	}
	// With NFC, a normalized added token matches its decomposed spelling too.
	s.normalizer = map[string]any{"type": "NFC"}
	tok = s.parse(t)
	last := tests[len(tests)-1]
	if got := tok.Encode(last.in); !slices.Equal(got, last.want) {
		t.Errorf("Encode(%+q) = %v, want %v", last.in, got, last.want)
	}
	// HuggingFace passes added tokens through the ByteLevel decoder too, so "é" (a
	// byte-alphabet character) becomes the lone byte 0xE9 and then U+FFFD. Quirky, but exact.
	if got := tok.Decode([]int{300, 305}); got != "<m>\ufffd" {
		t.Errorf("Decode of added tokens = %q", got)
	}
}

func concat(parts ...[]int) []int {
	var out []int
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func TestByteLevelOptions(t *testing.T) {
	gpt2 := synth{
		preTokenizer: map[string]any{"type": "ByteLevel", "add_prefix_space": true, "use_regex": true},
		added:        []map[string]any{addedTok(300, "<|endoftext|>", map[string]bool{"normalized": true})},
	}.parse(t)
	tests := []struct {
		in   string
		want []int
	}{
		// add_prefix_space applies to each segment between added tokens, then GPT-2's split.
		{"hi", byteIDsOf(" hi")},
		{" hi", byteIDsOf(" hi")},
		{"<|endoftext|>hi you", concat([]int{300}, byteIDsOf(" hi you"))},
	}
	for _, tt := range tests {
		if got := gpt2.Encode(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Encode(%+q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestMergesAndIgnoreMerges(t *testing.T) {
	s := synth{
		merges: [][2]string{{"a", "b"}, {"ab", "c"}, {"Ġ", "ab"}},
		extra:  []string{"xyz"},
	}
	tok := s.parse(t)
	ab, _ := tok.TokenID("ab")
	abc, _ := tok.TokenID("abc")
	gab, _ := tok.TokenID("Ġab")
	xyz, _ := tok.TokenID("xyz")
	if got, want := tok.Encode("abc abx xyz"), concat([]int{abc}, []int{gab}, byteIDsOf("x"), byteIDsOf(" xyz")); !slices.Equal(got, want) {
		t.Errorf("merges: got %v, want %v (ab=%d)", got, want, ab)
	}
	s.model = map[string]any{"ignore_merges": true}
	tok = s.parse(t)
	if got, want := tok.Encode("xyz"), []int{xyz}; !slices.Equal(got, want) {
		t.Errorf("ignore_merges keeps whole vocabulary words: got %v, want %v", got, want)
	}
}

func TestUnknownBytes(t *testing.T) {
	s := synth{dropBytes: []byte{'z'}, extra: []string{"<unk>"}}
	tok := s.parse(t) // no unk token: the byte is dropped, as HuggingFace does
	if got := tok.Encode("azzb"); !slices.Equal(got, byteIDsOf("ab")) {
		t.Errorf("unknown bytes without unk_token: got %v", got)
	}
	s.model = map[string]any{"unk_token": "<unk>"}
	tok = s.parse(t)
	unk, _ := tok.TokenID("<unk>")
	if got, want := tok.Encode("azzb"), concat(byteIDsOf("a"), []int{unk, unk}, byteIDsOf("b")); !slices.Equal(got, want) {
		t.Errorf("unk: got %v, want %v", got, want)
	}
	s.model = map[string]any{"unk_token": "<unk>", "fuse_unk": true}
	tok = s.parse(t)
	if got, want := tok.Encode("azzb"), concat(byteIDsOf("a"), []int{unk}, byteIDsOf("b")); !slices.Equal(got, want) {
		t.Errorf("fuse_unk: got %v, want %v", got, want)
	}
}

func TestPostProcessorAndDecoder(t *testing.T) {
	s := synth{
		extra: []string{"<s>", "</s>"},
		postProcessor: map[string]any{"type": "TemplateProcessing",
			"single":         []any{map[string]any{"SpecialToken": map[string]any{"id": "<s>", "type_id": 0}}, map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}}},
			"special_tokens": map[string]any{"<s>": map[string]any{"id": "<s>", "ids": []int{256}, "tokens": []string{"<s>"}}}},
	}
	tok := s.parse(t)
	if got, want := tok.EncodeWithSpecialTokens("hi"), concat([]int{256}, byteIDsOf("hi")); !slices.Equal(got, want) {
		t.Errorf("TemplateProcessing: got %v, want %v", got, want)
	}
	s.postProcessor = map[string]any{"type": "RobertaProcessing", "cls": []any{"<s>", 256}, "sep": []any{"</s>", 257}}
	tok = s.parse(t)
	if got, want := tok.EncodeWithSpecialTokens("hi"), concat([]int{256}, byteIDsOf("hi"), []int{257}); !slices.Equal(got, want) {
		t.Errorf("RobertaProcessing: got %v, want %v", got, want)
	}
	s.decoder = "null"
	tok = s.parse(t)
	if got := tok.Decode(tok.Encode("a b")); got != "a Ġ b" {
		t.Errorf("without a decoder HuggingFace joins tokens with spaces: got %q", got)
	}
}

func TestParseErrors(t *testing.T) {
	base := synth{}
	tests := []struct {
		name string
		data func() []byte
		want string
	}{
		{"not json", func() []byte { return []byte("{\"model\": [") }, "tokenizer.json"},
		{"empty", func() []byte { return nil }, "tokenizer.json"},
		{"trailing", func() []byte { return append(base.json(t), " {}"...) }, "data after top-level value"},
		{"float id", func() []byte {
			return []byte("{\"model\": {\"type\": \"BPE\",\n \"vocab\": {\"a\": 0,\n \"b\": 1.5}}}")
		}, `line 3: token "b": expected an integer id, got 1.5`},
		{"syntax line", func() []byte { return []byte("{\"model\": {\"type\": \"BPE\",\n\n \"vocab\": {\"a\": 0,}}}") }, "model.vocab: line 3: expected string key in object"},
		{"merge pair number", func() []byte {
			return []byte(`{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", 7]]}}`)
		}, "model.merges: line 1: [0]: expected a string"},
		{"wordpiece", func() []byte { s := base; s.model = map[string]any{"type": "WordPiece"}; return s.json(t) }, `model type "WordPiece"`},
		{"nfkc", func() []byte { s := base; s.normalizer = map[string]any{"type": "NFKC"}; return s.json(t) }, `normalizer "NFKC"`},
		{"metaspace", func() []byte {
			s := base
			s.preTokenizer = map[string]any{"type": "Metaspace", "replacement": "▁"}
			return s.json(t)
		}, `pre_tokenizer "Metaspace"`},
		{"split removed", func() []byte {
			s := base
			s.preTokenizer = map[string]any{"type": "Sequence", "pretokenizers": []any{
				map[string]any{"type": "Split", "pattern": map[string]any{"Regex": qwenPattern}, "behavior": "Removed"},
				map[string]any{"type": "ByteLevel"}}}
			return s.json(t)
		}, `behavior "Removed"`},
		{"unknown regex", func() []byte {
			s := base
			s.preTokenizer = map[string]any{"type": "Sequence", "pretokenizers": []any{
				map[string]any{"type": "Split", "pattern": map[string]any{"Regex": `\p{N}{1,3}|[一-龥]+`}, "behavior": "Isolated"},
				map[string]any{"type": "ByteLevel"}}}
			return s.json(t)
		}, `alternative "[一-龥]+"`},
		{"no byte level", func() []byte {
			s := base
			s.preTokenizer = map[string]any{"type": "Split", "pattern": map[string]any{"Regex": qwenPattern}, "behavior": "Isolated"}
			return s.json(t)
		}, "no ByteLevel"},
		{"decoder", func() []byte { s := base; s.decoder = map[string]any{"type": "WordPiece"}; return s.json(t) }, `decoder "WordPiece"`},
		{"dropout", func() []byte { s := base; s.model = map[string]any{"dropout": 0.1}; return s.json(t) }, "dropout"},
		{"suffix", func() []byte { s := base; s.model = map[string]any{"end_of_word_suffix": "</w>"}; return s.json(t) }, "end_of_word_suffix"},
		{"merge oov", func() []byte {
			s := base
			s.model = map[string]any{"merges": [][]string{{"q", "NOPE"}}}
			return s.json(t)
		}, `"NOPE" is not in the vocabulary`},
		{"merge shape", func() []byte { s := base; s.model = map[string]any{"merges": []string{"ab"}}; return s.json(t) }, "separated by a space"},
		{"dup id", func() []byte {
			s := base
			s.model = map[string]any{"vocab": map[string]int{"a": 1, "b": 1}}
			return s.json(t)
		}, "reuses id 1"},
		{"sparse ids", func() []byte {
			s := base
			s.model = map[string]any{"vocab": map[string]int{"a": 1, "b": 9000000}, "merges": []string{}}
			return s.json(t)
		}, "sparse"},
		{"post processor", func() []byte { s := base; s.postProcessor = map[string]any{"type": "BertLike"}; return s.json(t) }, `post_processor "BertLike"`},
		{"unk oov", func() []byte { s := base; s.model = map[string]any{"unk_token": "<nope>"}; return s.json(t) }, `unk_token "<nope>"`},
	}
	for _, tt := range tests {
		_, err := Parse(tt.data())
		if err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "tokenizer: ") {
			t.Errorf("%s: error %q does not say %q", tt.name, err, tt.want)
		}
	}
}

// A plan records Name(); loading that name must give the same tokenizer back.
func TestLoadOwnName(t *testing.T) {
	tok, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	again, err := Load(tok.Name())
	if err != nil {
		t.Fatal(err)
	}
	if again.SHA256() != tok.SHA256() {
		t.Fatalf("Load(%q) gave another tokenizer", tok.Name())
	}
}
