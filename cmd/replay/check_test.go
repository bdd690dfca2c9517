package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestBadFlagsSendNothing (issue 24 defects 5, 10, 12): a bad replay flag is one line
// naming it, exit 2, no run directory and no request, also with --validate (whose mock
// replay writes into the run directory: before the fix it ran, and wrote there, before a
// bad header or URL was refused) and for one shard flag without the other (before the fix
// --shard-index 0 alone replayed the whole plan, --shard-count alone shard 0).
func TestBadFlagsSendNothing(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		http.Error(w, "counted", http.StatusTeapot)
	}))
	defer srv.Close()
	t.Setenv("LLMBENCH_TEST_MAIN", "1")
	plan := writePlan(t, 4, time.Millisecond)
	env := func(string) string { return "" }
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"shard index alone", []string{"--shard-index", "1"}, "--shard-index 1 without a shard count"},
		{"shard index 0 alone", []string{"--shard-index", "0"}, "--shard-index 0 without a shard count"},
		{"shard count alone", []string{"--shard-count", "2"}, "--shard-count 2 without a shard index"},
		{"timeout huge", []string{"--request-timeout-seconds", "1e300"}, "--request-timeout-seconds 1e+300: want seconds in (0, 31536000]"},
		{"timeout inf", []string{"--request-timeout-seconds", "inf"}, "--request-timeout-seconds +Inf"},
		{"grace nan", []string{"--benchmark-grace-period", "nan"}, "--benchmark-grace-period NaN"},
		{"grace huge", []string{"--benchmark-grace-period", "1e20"}, "--benchmark-grace-period 1e+20"},
		{"wait interval", []string{"--wait-for-model-interval", "-1"}, "--wait-for-model-interval -1"},
		{"validation bound", []string{"--validate", "--validate-ttft", "-1s"}, "--validate-ttft -1s: must not be negative"},
		{"validation then bad header", []string{"--validate", "-H", "no colon"}, "want 'Name: value'"},
		{"validation then bad url", []string{"--validate", "--url", "ftp://x"}, "scheme must be http or https"},
		{"validation then too many workers", []string{"--validate", "--workers", "100000"}, "workers 100000: each worker needs its own CPU"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			args := append([]string{"replay", "--plan", plan, "--url", srv.URL, "--output-dir", dir, "--ui-type", "none"}, c.args...)
			var stderr bytes.Buffer
			code := run(args, &stderr, env)
			out := stderr.String()
			if code != 2 || strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, "replay: ") || !strings.Contains(out, c.want) {
				t.Fatalf("exit %d, stderr %q; want exit 2 and one line containing %q", code, out, c.want)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("the run directory exists (%v)", err)
			}
			if n := hits.Load(); n != 0 {
				t.Fatalf("the server got %d requests", n)
			}
		})
	}
}
