package tokenizer

import (
	"math/rand"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

const (
	qwenPattern   = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	llama3Pattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	tekkenPattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	o200kPattern  = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

var allPatterns = []string{qwenPattern, llama3Pattern, gpt2Pattern, tekkenPattern, o200kPattern}

// refSplitter is an independent, slow model of Oniguruma running a split pattern: at each
// position it tries each alternative, anchored, with Go's regexp, whose leftmost-first
// semantics pick the same match a backtracking engine does. \s is spelled out as
// Oniguruma's Unicode set (Go's is ASCII), and the look-ahead alternative, which Go lacks,
// is emulated by giving back characters.
type refSplitter struct {
	alts  []*regexp.Regexp // nil for \s+(?!\S)
	wsRun *regexp.Regexp
}

const refSpace = `\t-\r\x{85}\p{Z}`

func newRefSplitter(t testing.TB, pattern string) *refSplitter {
	t.Helper()
	alts, err := splitAlternatives(pattern)
	if err != nil {
		t.Fatal(err)
	}
	r := &refSplitter{wsRun: regexp.MustCompile(`^[` + refSpace + `]+`)}
	for _, a := range alts {
		if a == `\s+(?!\S)` {
			r.alts = append(r.alts, nil)
			continue
		}
		a = strings.ReplaceAll(a, `[^\s`, `[^`+refSpace)
		a = strings.ReplaceAll(a, `\s`, `[`+refSpace+`]`)
		r.alts = append(r.alts, regexp.MustCompile(`^(?:`+a+`)`))
	}
	return r
}

func (r *refSplitter) matchAt(s string, i int) int {
	for _, re := range r.alts {
		if re == nil {
			loc := r.wsRun.FindStringIndex(s[i:])
			if loc == nil {
				continue
			}
			end := i + loc[1]
			if end == len(s) {
				return end
			}
			if utf8.RuneCountInString(s[i:end]) >= 2 {
				_, n := utf8.DecodeLastRuneInString(s[i:end])
				return end - n
			}
			continue
		}
		if loc := re.FindStringIndex(s[i:]); loc != nil {
			return i + loc[1]
		}
	}
	return -1
}

func (r *refSplitter) split(s string) []string {
	var out []string
	gap := 0
	for i := 0; i < len(s); {
		end := r.matchAt(s, i)
		if end <= i {
			_, n := utf8.DecodeRuneInString(s[i:])
			i += n
			continue
		}
		if gap < i {
			out = append(out, s[gap:i])
		}
		out = append(out, s[i:end])
		i, gap = end, end
	}
	if gap < len(s) {
		out = append(out, s[gap:])
	}
	return out
}

func scannerSplit(t testing.TB, pattern, s string) []string {
	t.Helper()
	sp, err := newSplitter(pattern)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := 0; i < len(s); {
		j := sp.next(s, i)
		if j <= i {
			t.Fatalf("pattern %q: no progress at %d in %+q", pattern, i, s)
		}
		out = append(out, s[i:j])
		i = j
	}
	return out
}

func TestSplitExamples(t *testing.T) {
	tests := []struct {
		pattern, in string
		want        []string
	}{
		{qwenPattern, "Hello world", []string{"Hello", " world"}},
		{qwenPattern, "  x", []string{" ", " x"}},
		{qwenPattern, "a  \n\n b", []string{"a", "  \n\n", " b"}},
		{qwenPattern, "x   ", []string{"x", "   "}},
		{qwenPattern, "x \u3000y", []string{"x", " ", "\u3000y"}},
		{qwenPattern, "it's IT'S he'LL", []string{"it", "'s", " IT", "'S", " he", "'LL"}},
		{qwenPattern, "'ſ", []string{"'ſ"}},
		{qwenPattern, "12345", []string{"1", "2", "3", "4", "5"}},
		{qwenPattern, "\t\tfoo", []string{"\t", "\tfoo"}},
		{qwenPattern, "a...\n\nb", []string{"a", "...\n\n", "b"}},
		{qwenPattern, " ...", []string{" ..."}},
		{qwenPattern, "x\r\n", []string{"x", "\r\n"}},
		{qwenPattern, "naïve café", []string{"naïve", " café"}},
		{llama3Pattern, "12345", []string{"123", "45"}},
		{gpt2Pattern, "it's 12345  x", []string{"it", "'s", " 12345", " ", " x"}},
		{gpt2Pattern, "IT'S", []string{"IT", "'", "S"}},
		{tekkenPattern, "HelloWorld HTTPServer", []string{"Hello", "World", " HTTPServer"}},
		{tekkenPattern, "a/b\n/c a!!\n/\nb", []string{"a", "/b", "\n", "/c", " a", "!!\n/\n", "b"}},
		{o200kPattern, "don't DON'T", []string{"don't", " DON'T"}},
	}
	for _, tt := range tests {
		got := scannerSplit(t, tt.pattern, tt.in)
		if !slices.Equal(got, tt.want) {
			t.Errorf("%.20s… %+q: got %+q, want %+q", tt.pattern, tt.in, got, tt.want)
		}
		if ref := newRefSplitter(t, tt.pattern).split(tt.in); !slices.Equal(ref, tt.want) {
			t.Errorf("reference disagrees with the table: %.20s… %+q: %+q", tt.pattern, tt.in, ref)
		}
	}
}

// splitAlphabet mixes every class the patterns distinguish, so that random strings over it
// exercise each alternative and the give-back paths.
var splitAlphabet = []string{
	" ", " ", " ", "\t", "\n", "\r", "\v", "\u00a0", "\u3000", "\u2028", "\u0085", "\u200b",
	"a", "b", "s", "t", "r", "e", "v", "m", "l", "d", "S", "T", "R", "E", "V", "M", "L", "D",
	"ſ", "é", "É", "ǅ", "ʰ", "中", "א", "ß", "Ω", "ω", "\u0301", "\u093c", "\u0e31", "\u20dd",
	"0", "7", "٣", "Ⅻ", "½", "'", "'", ".", "/", "!", "\"", "-", "_", "😀", "\ufffd", "\xff", "\xe2\x82",
}

func randomSplitText(rng *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(splitAlphabet[rng.Intn(len(splitAlphabet))])
	}
	return b.String()
}

// TestSplitMatchesReference compares the scanner with the regexp model on random text.
func TestSplitMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, p := range allPatterns {
		ref := newRefSplitter(t, p)
		for range 1000 {
			s := randomSplitText(rng, 1+rng.Intn(24))
			if got, want := scannerSplit(t, p, s), ref.split(s); !slices.Equal(got, want) {
				t.Fatalf("pattern %q\ntext %+q\n got  %+q\n want %+q", p, s, got, want)
			}
		}
	}
}

func FuzzSplit(f *testing.F) {
	for _, s := range []string{"Hello world", "it's  \n\n x", "ABCdef GHI's 123456", "\xff\u0301a"} {
		f.Add(s)
	}
	refs := make([]*refSplitter, len(allPatterns))
	for i, p := range allPatterns {
		refs[i] = newRefSplitter(f, p)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for i, p := range allPatterns {
			got := scannerSplit(t, p, s)
			if want := refs[i].split(s); !slices.Equal(got, want) {
				t.Fatalf("pattern %q\ntext %+q\n got  %+q\n want %+q", p, s, got, want)
			}
			if strings.Join(got, "") != s {
				t.Fatalf("pieces do not cover the text")
			}
		}
	})
}

func TestUnsupportedPattern(t *testing.T) {
	for _, p := range []string{`\p{N}+|[一-龥]+`, `(a|b`, `a||b`, `[\p{P}]+`} {
		if _, err := newSplitter(p); err == nil {
			t.Errorf("pattern %q: no error", p)
		} else if !strings.Contains(err.Error(), "split regex") {
			t.Errorf("pattern %q: error does not name the regex: %v", p, err)
		}
	}
}
