package output

import (
	"strings"
	"testing"

	"github.com/llmbench/llmbench/analyze"
)

// TestErrorMessagesNotCutMidSentence: the console's Errors line shows every message analyze
// writes itself whole (the not_sent reason was cut at "(the worker or the "), and cuts a
// server's long text at a sentence, clause or word boundary, marked with "…".
func TestErrorMessagesNotCutMidSentence(t *testing.T) {
	own := []string{
		"never sent: no record and no Sent record in its worker's log (the worker or the coordinator stopped first)",
		"no record in any log: in flight when its worker died",
		"planned for a worker but missing from its log",
	}
	for _, m := range own {
		s := &analyze.Summary{Counts: analyze.Counts{Errors: 3, Profile: 3}, Errors: []analyze.ErrorCount{{Kind: "not_sent", Message: m, Count: 3}}}
		if line := summaryLines(s, false)[0]; !strings.Contains(line, m) {
			t.Errorf("Errors line %q cuts %q", line, m)
		}
	}
	long := strings.Repeat("word ", 30) + "end. " + strings.Repeat("more words here ", 20)
	for _, c := range []struct{ in, want string }{
		{"short", "short"},
		{"  padded  ", "padded"},
		{long, strings.Repeat("word ", 30) + "end. …"},
		{strings.Repeat("a", 150) + "; " + strings.Repeat("b", 100), strings.Repeat("a", 150) + " …"},
		{strings.Repeat("x ", 150), strings.TrimSpace(strings.Repeat("x ", 100)) + " …"},
		{strings.Repeat("é", 150), strings.Repeat("é", 100) + "…"},
	} {
		got := analyze.ClipWords(c.in, 200)
		if got != c.want {
			t.Errorf("clipWords(%.30q...) = %q; want %q", c.in, got, c.want)
		}
		if len(strings.TrimSuffix(got, "…")) > 200 {
			t.Errorf("clipWords kept %d bytes", len(got))
		}
	}
}
