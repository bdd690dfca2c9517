package errline

import (
	"errors"
	"testing"
)

func TestFormat(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"profile", errors.New("--plan: missing"), "profile: --plan: missing"},
		{"profile", errors.New("profile: already prefixed"), "profile: already prefixed"},
		{"analyze", errors.New("two\nlines"), "analyze: two lines"},
		{"analyze compare", errors.New("analyze compare: x"), "analyze compare: x"},
	}
	for _, c := range cases {
		if got := Format(c.name, c.err); got != c.want {
			t.Errorf("Format(%q, %q) = %q, want %q", c.name, c.err, got, c.want)
		}
	}
}
