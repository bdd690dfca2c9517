package tokenizer

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// expectedText is what decoding must give back for s: added tokens as written, the text
// between them normalized (NFC) segment by segment, as encoding does.
func expectedText(tok *Tokenizer, s string) string {
	if tok.rawAdded == nil {
		return tok.normalizeSegment(s)
	}
	var b strings.Builder
	for _, sp := range tok.rawAdded.appendSpans(nil, s) {
		if sp.tok != nil {
			b.WriteString(sp.tok.content)
		} else {
			b.WriteString(tok.normalizeSegment(s[sp.start:sp.end]))
		}
	}
	return b.String()
}

func (t *Tokenizer) normalizeSegment(s string) string {
	if t.nfc == nil {
		return s
	}
	var sc nfcScratch
	return t.nfc.normalize(s, &sc)
}

// FuzzRoundTrip checks Decode(Encode(s)) == s for the built-in tokenizer (up to NFC, which
// encoding applies), and that Count and AppendEncode agree with Encode.
func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{"Hello world", "it's  \n\n x", "<|im_start|>user\n中文<|im_end|>", "e\u0301\u0958", "😀👍🏽", " \t\r\n\u3000", "\xff\xfe"} {
		f.Add(s)
	}
	tok := builtin(f)
	f.Fuzz(func(t *testing.T, s string) {
		ids := tok.Encode(s)
		want := expectedText(tok, s)
		if utf8.ValidString(s) {
			if got := tok.Decode(ids); got != want {
				t.Fatalf("Decode(Encode(%+q)) = %+q, want %+q", s, got, want)
			}
			if want == s && tok.Decode(ids) != s {
				t.Fatalf("NFC text does not round-trip exactly")
			}
		}
		if got := string(tok.AppendDecode(nil, ids)); got != want {
			t.Fatalf("AppendDecode(Encode(%+q)) = %+q, want %+q", s, got, want)
		}
		if n := tok.Count(s); n != len(ids) {
			t.Fatalf("Count = %d, len(Encode) = %d", n, len(ids))
		}
		for _, id := range ids {
			if id < 0 || id >= tok.VocabSize() {
				t.Fatalf("id %d out of range", id)
			}
		}
	})
}

// FuzzParse feeds arbitrary bytes to Parse: errors are fine, panics and hangs are not,
// and whatever parses must encode and decode without panicking.
func FuzzParse(f *testing.F) {
	f.Add(synth{merges: [][2]string{{"a", "b"}}}.json(f))
	f.Add(synth{added: []map[string]any{addedTok(300, "<m>", map[string]bool{"lstrip": true, "rstrip": true, "single_word": true})},
		preTokenizer: map[string]any{"type": "ByteLevel", "add_prefix_space": true}, normalizer: map[string]any{"type": "NFC"}}.json(f))
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":["a b"]},"pre_tokenizer":{"type":"ByteLevel"},"decoder":null}`))
	f.Add([]byte(`{"model":{"vocab":{"\u0041\ud83d\ude00":0},"merges":[]},"pre_tokenizer":{"type":"ByteLevel"}}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tok, err := Parse(data)
		if err != nil {
			return
		}
		for _, s := range []string{"hello world", "<m> x", "é\xff", ""} {
			ids := tok.Encode(s)
			tok.Decode(ids)
			tok.EncodeWithSpecialTokens(s)
		}
	})
}
