package helptext

import (
	"os"
	"testing"
)

// TestWidth: $COLUMNS when it is a positive number (at least MinWidth), else the terminal's
// width, else 80.
func TestWidth(t *testing.T) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	fd := int(devnull.Fd()) // not a terminal
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "COLUMNS" {
				return v
			}
			return ""
		}
	}
	cases := []struct {
		columns string
		want    int
	}{{"", 80}, {"132", 132}, {"abc", 80}, {"-3", 80}, {"10", MinWidth}}
	for _, c := range cases {
		if got := Width(env(c.columns), fd); got != c.want {
			t.Errorf("COLUMNS=%q: width %d, want %d", c.columns, got, c.want)
		}
	}
}

// TestWords: lines within the width, each begun with the indent; a longer word alone.
func TestWords(t *testing.T) {
	cases := []struct {
		text, indent string
		width        int
		want         string
	}{
		{"one two three", "", 7, "one two\nthree\n"},
		{"one two three", "  ", 9, "  one two\n  three\n"},
		{"a verylongword b", "", 4, "a\nverylongword\nb\n"},
		{"", "  ", 10, ""},
	}
	for _, c := range cases {
		if got := Words(c.text, c.width, c.indent); got != c.want {
			t.Errorf("Words(%q, %d, %q) = %q, want %q", c.text, c.width, c.indent, got, c.want)
		}
	}
}

// TestOf: the essentials first, then Table, else GroupOther.
func TestOf(t *testing.T) {
	for name, want := range map[string]string{"model": GroupEssentials, "tokenizer": GroupInput, "shard-index": GroupDistributed, "no-such-flag": GroupOther} {
		if got := Of(name); got != want {
			t.Errorf("Of(%q) = %q, want %q", name, got, want)
		}
	}
}
