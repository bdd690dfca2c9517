package jsonwire

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// stdNoHTML is encoding/json's encoding of s with HTML escaping off: what the escaping rule
// says our bytes equal.
func stdNoHTML(t testing.TB, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// checkEscape holds AppendString to the package's escaping rule for one input.
func checkEscape(t *testing.T, s string) {
	t.Helper()
	got := AppendString(nil, s)

	// 1. Byte for byte what encoding/json writes with HTML escaping off.
	if want := stdNoHTML(t, s); !bytes.Equal(got, want) {
		t.Fatalf("%q: got %s, encoding/json (HTML escaping off) %s", s, got, want)
	}
	// 2. json.Marshal (HTML escaping on) differs exactly where s has '<', '>' or '&': undo its
	// three escapes and the bytes are equal.
	marshalled, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	html := strings.ContainsAny(s, "<>&")
	if !html && !bytes.Equal(got, marshalled) {
		t.Fatalf("%q: got %s, json.Marshal %s (no <, > or &: must be equal)", s, got, marshalled)
	}
	unHTML := strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(marshalled))
	if unHTML != string(got) {
		t.Fatalf("%q: got %s, json.Marshal %s differs beyond its HTML escapes", s, got, marshalled)
	}
	// 3. The decoded value round-trips: encoding/json reads back s with each invalid byte as
	// U+FFFD (what []rune conversion does), as from its own encoding, and so does our scanner.
	var back, stdBack string
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatalf("%q: encoding/json cannot read %s: %v", s, got, err)
	}
	if err := json.Unmarshal(marshalled, &stdBack); err != nil {
		t.Fatal(err)
	}
	if want := string([]rune(s)); back != want || stdBack != want {
		t.Fatalf("%q: decodes to %q, encoding/json's own encoding to %q, want %q", s, back, stdBack, want)
	}
	sc := NewScanner(got)
	ours, ok := sc.Str(nil)
	if sc.End(); !ok || sc.Err() != nil || string(ours) != back {
		t.Fatalf("%q: our scanner reads %s as %q (ok %v, err %v), want %q", s, got, ours, ok, sc.Err(), back)
	}
	// 4. The []byte form and the body form write the same bytes.
	if b := AppendString(nil, []byte(s)); !bytes.Equal(b, got) {
		t.Fatalf("%q: []byte form %s, string form %s", s, b, got)
	}
	if b := AppendStringBody([]byte("x"), s); string(b) != "x"+string(got[1:len(got)-1]) {
		t.Fatalf("%q: body form %s, string form %s", s, b, got)
	}
}

var escapeCases = []string{
	"", "plain", "q\"b\\", "\x00\x1f\x7f", "\b\f\n\r\t\v", "<>&", "a<b&&c>d", "\u2028\u2029", "x\u2028y",
	"\xff", "\xff\xfe", "\xe2\x80", "\xe2\x80\xa8", "\xed\xa0\x80", "é😀", "日本語", "\uFFFD",
	strings.Repeat("abcdefgh", 5) + "\n", strings.Repeat("é", 9) + "\x01",
}

func TestAppendStringRule(t *testing.T) {
	for _, s := range escapeCases {
		checkEscape(t, s)
	}
}

// FuzzAppendString checks the escaper against encoding/json: the same bytes as encoding/json
// with HTML escaping off, the same bytes as json.Marshal but for its \u003c \u003e \u0026, and
// the same decoded value through encoding/json and through our scanner.
func FuzzAppendString(f *testing.F) {
	for _, c := range escapeCases {
		f.Add(c)
	}
	f.Fuzz(checkEscape)
}

func TestAppendStringLong(t *testing.T) {
	// Every byte value at every alignment of the eight-byte fast path.
	for off := range 9 {
		for c := range 256 {
			s := strings.Repeat("a", off) + string([]byte{byte(c)}) + strings.Repeat("b", 9)
			if got, want := AppendString(nil, s), stdNoHTML(t, s); !bytes.Equal(got, want) {
				t.Fatalf("off %d byte %#x: got %s want %s", off, c, got, want)
			}
		}
	}
}

// The escapers this package replaced disagreed with encoding/json on these inputs (mockllm's
// and analyze's wrote \u0008 and \u000c and left U+2028 raw; replay's live history wrote
// \u0008 and \u000c): one writer now gives encoding/json's bytes for all of them.
func TestAppendStringFormerDisagreements(t *testing.T) {
	for s, want := range map[string]string{
		"\b":       `"\b"`,
		"\f":       `"\f"`,
		"a\u2028b": `"a\u2028b"`,
		"\u2029":   `"\u2029"`,
		"\x7f":     "\"\x7f\"",
		"<&>":      `"<&>"`,
	} {
		if got := string(AppendString(nil, s)); got != want {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
	}
}

func TestAppendStringNoAlloc(t *testing.T) {
	dst := make([]byte, 0, 256)
	s := "prompt with \"quotes\", é, \u2028 and \xff"
	b := []byte(s)
	if n := testing.AllocsPerRun(100, func() { dst = AppendString(dst[:0], s) }); n != 0 {
		t.Errorf("AppendString(string) allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { dst = AppendString(dst[:0], b) }); n != 0 {
		t.Errorf("AppendString([]byte) allocates %v times", n)
	}
}
