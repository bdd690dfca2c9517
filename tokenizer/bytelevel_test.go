package tokenizer

import "testing"

func TestByteAlphabet(t *testing.T) {
	if byteToRune[' '] != 'Ġ' || byteToRune['\n'] != 'Ċ' || byteToRune['a'] != 'a' || byteToRune[0xE9] != 'é' {
		t.Errorf("byte alphabet differs from GPT-2's bytes_to_unicode")
	}
	seen := map[rune]bool{}
	for b, r := range byteToRune {
		if seen[r] {
			t.Fatalf("rune %q used twice", r)
		}
		seen[r] = true
		if got, ok := byteLevelDecode(nil, string(r)); !ok || len(got) != 1 || got[0] != byte(b) {
			t.Fatalf("byte %#x does not round-trip", b)
		}
	}
	if got := byteLevelString("a b\n"); got != "aĠbĊ" {
		t.Errorf("byteLevelString = %q", got)
	}
	if got, ok := byteLevelDecode(nil, "<|x y|>"); ok || string(got) != "<|x y|>" {
		t.Errorf("a token outside the alphabet decodes to its own text, got %q %v", got, ok)
	}
}

// Rust's from_utf8_lossy replaces each maximal ill-formed subsequence with one U+FFFD.
func TestAppendLossy(t *testing.T) {
	tests := []struct{ in, want string }{
		{"ok €", "ok €"},
		{"\xe2\x82", "\ufffd"},
		{"\xe2\x82A", "\ufffdA"},
		{"\xf0\x80\x80", "\ufffd\ufffd\ufffd"},
		{"\xed\xa0\x80", "\ufffd\ufffd\ufffd"},
		{"\xc0\xaf", "\ufffd\ufffd"},
		{"\xf4\x90\x80\x80", "\ufffd\ufffd\ufffd\ufffd"},
		{"\xf0\x9f\x98", "\ufffd"},
		{"a\xffb", "a\ufffdb"},
	}
	for _, tt := range tests {
		if got := string(appendLossy(nil, []byte(tt.in))); got != tt.want {
			t.Errorf("appendLossy(%+q) = %+q, want %+q", tt.in, got, tt.want)
		}
	}
}
