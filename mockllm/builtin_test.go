package mockllm

import (
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/llmbench/llmbench/tokenizer"
)

var (
	builtinOnce sync.Once
	builtinTok  *tokenizer.Tokenizer
)

func builtin(t testing.TB) *tokenizer.Tokenizer {
	t.Helper()
	builtinOnce.Do(func() {
		tok, err := tokenizer.Builtin()
		if err != nil {
			t.Fatalf("builtin tokenizer: %v", err)
		}
		builtinTok = tok
	})
	if builtinTok == nil {
		t.Fatal("builtin tokenizer failed to load")
	}
	return builtinTok
}

// TestBuiltinVocabularyRetokenizes is the property the exact counts rest
// on: any text of n vocabulary words (one bare, then spaced) encodes to
// exactly n tokens under the builtin tokenizer, and back to the same text.
func TestBuiltinVocabularyRetokenizes(t *testing.T) {
	tok := builtin(t)
	v, err := buildVocabulary(tok)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.words) < 1000 {
		t.Fatalf("only %d words", len(v.words))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		n := 1 + r.IntN(600)
		if trial < 10 {
			n = trial + 1
		}
		pieces, ids := v.text(r, n, true)
		text := strings.Join(pieces, "")
		got := tok.Encode(text)
		if len(got) != n {
			t.Fatalf("%d words encode to %d tokens: %q", n, len(got), text)
		}
		for i := range got {
			if got[i] != ids[i] {
				t.Fatalf("token %d is %d, vocabulary says %d (%q)", i, got[i], ids[i], pieces[i])
			}
		}
		if tok.Decode(got) != text {
			t.Fatalf("decode mismatch for %q", text)
		}
	}
}

// TestBuiltinCountsThroughServer runs every text API with the builtin
// tokenizer, reasoning and tool calls on: what the client receives
// re-tokenizes to exactly the reported counts, prompts included.
func TestBuiltinCountsThroughServer(t *testing.T) {
	tok := builtin(t)
	for _, tools := range []float64{0, 1} {
		o := testOptions()
		o.Tokenizer = tok
		o.ReasoningTokens = 5
		o.ToolCallRate = tools
		o.TokensPerChunk = 2
		base := startServer(t, o)
		for _, api := range textAPIs {
			for _, stream := range []bool{true, false} {
				for _, x := range []map[string]any{{"max": 40, "ignore_eos": true}, {}, {"max": 9}} {
					r, _ := api.call(t, base, stream, x)
					if api.api == "anthropic" && !stream && r.toolName != "" {
						continue // non-streaming tool input is re-marshalled JSON
					}
					reasoning := tok.Count(r.reasoning)
					got := reasoning + tok.Count(r.content) + tok.Count(r.toolName+r.toolArgs)
					if got != r.completion {
						t.Errorf("%s stream=%v %v tools=%v: text is %d tokens, usage says %d (%q %q %q %q)",
							api.api, stream, x, tools, got, r.completion, r.reasoning, r.content, r.toolName, r.toolArgs)
					}
					if x["ignore_eos"] == true && r.completion != 40 {
						t.Errorf("%s stream=%v tools=%v: %d tokens, want max_tokens 40", api.api, stream, tools, r.completion)
					}
					if reasoningAPIs[api.api] && reasoning != 5 {
						t.Errorf("%s: %d reasoning tokens, want 5", api.api, reasoning)
					}
					if want := tok.Count("hello world wide"); r.prompt != want && (api.api != "tgi" || stream) {
						t.Errorf("%s: prompt tokens %d, want %d", api.api, r.prompt, want)
					}
				}
			}
		}
	}
}

// TestDefaultTokenizerIsBuiltin: Options without a tokenizer use the
// builtin one.
func TestDefaultTokenizerIsBuiltin(t *testing.T) {
	builtin(t)
	s, err := New(DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if s.Options().Tokenizer != Tokenizer(builtinTok) {
		t.Error("nil Tokenizer did not default to the builtin one")
	}
}
