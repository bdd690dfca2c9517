package replay

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/redact"
)

// A run whose requests failed on the client's own side says so in its last line, with the
// counts, and exits 1; a run without such failures adds no line.
func TestClientFailedLine(t *testing.T) {
	if got := clientFailedLine(rawlog.Counts{Planned: 10, Completed: 3, Failed: 7}); got != "" {
		t.Errorf("no client failures: %q", got)
	}
	got := clientFailedLine(rawlog.Counts{Planned: 100000, Completed: 2585, Failed: 97415, ClientFailed: 97415})
	if !strings.HasPrefix(got, "replay: 97415 of the 97415 failed requests failed on the client's side, not the server's") || !strings.HasSuffix(got, "exit 1") {
		t.Errorf("client failures: %q", got)
	}
}

func TestParseStartAt(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Time
		err  bool
	}{
		{in: "+30s", want: now.Add(30 * time.Second)},
		{in: "2026-12-01T14:00:00.123456789Z", want: time.Date(2026, 12, 1, 14, 0, 0, 123456789, time.UTC)},
		{in: "2026-12-01T15:00:00+01:00", want: time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC)},
		{in: "2026-12-01 14:00:00", err: true},
		{in: "+-3s", err: true},
		{in: "tomorrow", err: true},
	} {
		got, err := ParseStartAt(tc.in, now)
		if (err != nil) != tc.err || (!tc.err && !got.Equal(tc.want)) {
			t.Errorf("%q: %v %v, want %v (error %v)", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// The terminal check sees os.Stderr through the redacting writer the commands wrap it in.
func TestIsStderrThroughRedact(t *testing.T) {
	if !isStderr(os.Stderr) || !isStderr(redact.NewWriter(os.Stderr)) || isStderr(redact.NewWriter(&bytes.Buffer{})) || isStderr(&bytes.Buffer{}) {
		t.Error("isStderr does not tell os.Stderr through a redact.Writer")
	}
}
