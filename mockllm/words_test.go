package mockllm

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestIsSpacedWord(t *testing.T) {
	cases := map[string]bool{
		" the": true, " a": false, " th": false, " gx": false, "the": false, " The": false, " don't": false,
		" by": true, " supercalifragili": true, " supercalifragilis": false, " caf\u00e9": false, "  the": false,
	}
	for s, want := range cases {
		if got := isSpacedWord(s); got != want {
			t.Errorf("isSpacedWord(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestVocabularyWithFake: entries that are single tokens only with a
// space or only bare are left out; texts re-tokenize word for word.
func TestVocabularyWithFake(t *testing.T) {
	v, err := buildVocabulary(fakeTok)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range v.words {
		if w.bare == "onlyspaced" || w.bare == "onlybare" {
			t.Errorf("kept %q", w.bare)
		}
		if fakeTok.Decode([]int{w.spacedID}) != w.spaced || fakeTok.Decode([]int{w.bareID}) != w.bare {
			t.Errorf("ids of %q do not decode back", w.bare)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 100 {
		n := 1 + r.IntN(300)
		p, _ := v.text(r, n, false)
		if got := fakeTok.Count(strings.Join(p, "")); got != n {
			t.Fatalf("%d words are %d tokens", n, got)
		}
	}
	again, _ := buildVocabulary(fakeTok)
	if again != v {
		t.Error("vocabulary not cached per tokenizer")
	}
}

// tinyTokenizer has too few words to build a vocabulary.
type tinyTokenizer struct{ fakeTokenizer }

func TestVocabularyTooSmall(t *testing.T) {
	tiny := &tinyTokenizer{fakeTokenizer{ids: map[string]int{}}}
	for _, s := range []string{"a", "b", " ab", "ab"} {
		tiny.ids[s] = len(tiny.vocab)
		tiny.vocab = append(tiny.vocab, s)
	}
	o := testOptions()
	o.Tokenizer = tiny
	if _, err := New(o); err == nil || !strings.Contains(err.Error(), "single-token") {
		t.Errorf("New with a 1-word tokenizer: %v", err)
	}
}

func TestOptionsValidate(t *testing.T) {
	cases := []struct {
		name  string
		set   func(*Options)
		field string
	}{
		{"negative ttft", func(o *Options) { o.TTFT = -1 }, "TTFT"},
		{"negative itl", func(o *Options) { o.ITL = -1 }, "ITL"},
		{"negative stall", func(o *Options) { o.StallDuration = -1 }, "StallDuration"},
		{"cv", func(o *Options) { o.ITLJitterCV = -0.5 }, "ITLJitterCV"},
		{"cv NaN", func(o *Options) { o.TTFTJitterCV = nan() }, "TTFTJitterCV"},
		{"rate", func(o *Options) { o.DisconnectRate = 1.5 }, "DisconnectRate"},
		{"tool rate", func(o *Options) { o.ToolCallRate = -0.1 }, "ToolCallRate"},
		{"rate sum", func(o *Options) { o.ErrorRate, o.StallRate = 0.6, 0.5 }, "ErrorRate"},
		{"chunk", func(o *Options) { o.TokensPerChunk = -1 }, "TokensPerChunk"},
		{"batch", func(o *Options) { o.MaxBatch = -1 }, "MaxBatch"},
		{"dim", func(o *Options) { o.EmbeddingDim = 1 << 20 }, "EmbeddingDim"},
		{"ok", func(o *Options) {
			o.ErrorRate, o.StreamErrorRate, o.DisconnectRate, o.StallRate = 0.25, 0.25, 0.25, 0.25
		}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := testOptions()
			tc.set(&o)
			err := o.Validate()
			oe, _ := err.(*OptionError)
			switch {
			case tc.field == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tc.field != "" && (oe == nil || oe.Field != tc.field):
				t.Errorf("error %v, want one naming %s", err, tc.field)
			}
			if _, nerr := New(o); (nerr == nil) != (tc.field == "") {
				t.Errorf("New: %v", nerr)
			}
		})
	}
}
