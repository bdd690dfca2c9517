package cli

import (
	"strings"
	"testing"

	"github.com/llmbench/llmbench/rawlog"
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
