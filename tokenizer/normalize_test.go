package tokenizer

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

func nfc(s string) string {
	var sc nfcScratch
	return nfcData().normalize(s, &sc)
}

// The expected forms follow the Unicode 15 data; the whole table was also checked against
// Python's unicodedata on 400,000 random strings of combining characters when written.
func TestNFC(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"plain ascii", "plain ascii"},
		{"e\u0301", "\u00e9"},             // composition
		{"\u00e9", "\u00e9"},              // already composed
		{"\u212b", "\u00c5"},              // singleton (ANGSTROM SIGN)
		{"\u0958", "\u0915\u093c"},        // composition exclusion stays decomposed
		{"\u0344", "\u0308\u0301"},        // non-starter decomposition
		{"a\u0307\u0323", "\u1ea1\u0307"}, // canonical reordering, then composition
		{"a\u0323\u0307", "\u1ea1\u0307"}, // same result from the other order
		{"\u1100\u1161\u11a8", "\uac01"},  // Hangul L+V+T
		{"\uac00\u11a8", "\uac01"},        // Hangul LV+T
		{"\u1100\u11a8", "\u1100\u11a8"},  // L+T do not compose
		{"\u0301e", "\u0301e"},            // leading mark blocks nothing after it
		{"o\u0308\u0301x\u0301", "\u00f6\u0301x\u0301"},
		{"\u05d0\u05bc\u05b7", "\u05d0\u05b7\u05bc"},           // Hebrew points reorder by class
		{"\u0b47\u0b3e", "\u0b4b"},                             // two starters compose
		{"i\U00011930\u1037\u0340", "i\U00011930\u1037\u0300"}, // a starter blocks; 0340 → 0300
		{"x\xffe\u0301", "x\xff\u00e9"},                        // invalid bytes pass through
		{"\xff\u0301", "\xff\u0301"},
		{"naïve café 中文 😀", "naïve café 中文 😀"},
	}
	for _, tt := range tests {
		if got := nfc(tt.in); got != tt.want {
			t.Errorf("NFC(%+q) = %+q, want %+q", tt.in, got, tt.want)
		}
	}
}

func TestNFCNoAllocWhenNormal(t *testing.T) {
	var sc nfcScratch
	tab := nfcData()
	for _, s := range []string{"plain", "naïve café", "Hindi: नमस्ते दुनिया", "한국어 텍스트", "עִבְרִית"} {
		if n := testing.AllocsPerRun(50, func() { tab.normalize(s, &sc) }); n != 0 {
			t.Errorf("normalize(%q) allocates %v times", s, n)
		}
	}
}

func FuzzNFC(f *testing.F) {
	for _, s := range []string{"e\u0301", "\u1100\u1161\u11a8", "a\u0307\u0323", "\u0958\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := nfc(s)
		if again := nfc(n); again != n {
			t.Fatalf("not idempotent: %+q → %+q → %+q", s, n, again)
		}
		if utf8.ValidString(s) != utf8.ValidString(n) {
			t.Fatalf("validity changed: %+q → %+q", s, n)
		}
		if strings.Count(s, "\xff") != strings.Count(n, "\xff") {
			t.Fatalf("invalid bytes not preserved: %+q → %+q", s, n)
		}
	})
}

// nfcCases are inputs that exercise every path of the normalizer: compositions, exclusions,
// singletons, reordering, Hangul, blocked marks and invalid bytes.
var nfcCases = []string{
	"", "plain", "e\u0301", "\u00e9", "\u212b", "\u0958", "\u0344", "a\u0307\u0323", "a\u0323\u0307",
	"\u1100\u1161\u11a8", "\uac00\u11a8", "\u1100\u11a8", "\u0301e", "o\u0308\u0301x\u0301",
	"\u05d0\u05bc\u05b7", "\u0b47\u0b3e", "i\U00011930\u1037\u0340", "x\xffe\u0301", "\xff\u0301",
	"naïve café 中文 😀", "Hindi: नमस्ते दुनिया", "\u0041\u030a\u0301\u0327", "\u1e9b\u0323",
	"\u0f73\u0f75\u0f81", "\U0001d15e\U0001d165", "\u0300\u0300\u0300", "e\xcc", "\xe0\xa4",
}

// TestNFCMatchesNorm compares the normalizer with golang.org/x/text/unicode/norm on every
// code point NFC can change (and every 97th other) alone and after a starter, and on random
// runs of the code points NFC can change, drawn from a fixed seed.
func TestNFCMatchesNorm(t *testing.T) {
	if norm.Version != nfcUnicodeVersion {
		t.Skipf("x/text's norm implements Unicode %s and the tables %s: compare once they agree", norm.Version, nfcUnicodeVersion)
	}
	check := func(s string) {
		t.Helper()
		if got, want := nfc(s), norm.NFC.String(s); got != want {
			t.Fatalf("NFC(%+q) = %+q, x/text's norm %+q", s, got, want)
		}
	}
	for _, s := range nfcCases {
		check(s)
	}
	tab := nfcData()
	var active []rune // code points with a combining class, a quick check other than Yes, or a decomposition
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		if !tab.stable(r) || tab.info(r)&nfcHasDecomp != 0 {
			active = append(active, r)
		}
		if r%97 == 0 || tab.info(r) != 0 {
			check(string(r))
			check("a" + string(r))
		}
	}
	active = append(active, 'a', 'e', 'o', 'A', 0x1100, 0x1161, 0x11A8, 0xAC00, 0x0915)
	rng := rand.New(rand.NewPCG(15, 0))
	n := 50_000
	if testing.Short() {
		n = 5_000
	}
	buf := make([]rune, 0, 8)
	for range n {
		buf = buf[:0]
		for range 1 + rng.IntN(7) {
			buf = append(buf, active[rng.IntN(len(active))])
		}
		check(string(buf))
	}
}

// FuzzNFCMatchesNorm compares the normalizer with golang.org/x/text/unicode/norm on any
// input, invalid UTF-8 included.
func FuzzNFCMatchesNorm(f *testing.F) {
	for _, s := range nfcCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if norm.Version != nfcUnicodeVersion {
			t.Skipf("x/text's norm implements Unicode %s and the tables %s", norm.Version, nfcUnicodeVersion)
		}
		if got, want := nfc(s), norm.NFC.String(s); got != want {
			t.Fatalf("NFC(%+q) = %+q, x/text's norm %+q", s, got, want)
		}
	})
}
