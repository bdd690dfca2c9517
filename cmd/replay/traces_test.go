package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTraceReceiverFlags: bad trace flags and a receiver port already taken are one line
// naming the flag, exit status 2, nothing sent and no run directory.
func TestTraceReceiverFlags(t *testing.T) {
	t.Setenv("LLMBENCH_TEST_MAIN", "1")
	plan := writePlan(t, 1, 0)
	env := func(string) string { return "" }
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := l.Addr().String()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--traceparent", "always"}, `--traceparent "always": want auto, on or off`},
		{[]string{"--trace-receiver", "4317"}, `--trace-receiver "4317": want HOST:PORT`},
		{[]string{"--trace-receiver-http", "127.0.0.1:0"}, "--trace-receiver-http 127.0.0.1:0: needs --trace-receiver"},
		{[]string{"--trace-receiver", "127.0.0.1:0", "--trace-receiver-grace", "-1s"}, "--trace-receiver-grace -1s"},
		{[]string{"--trace-receiver", taken, "--trace-receiver-http", "127.0.0.1:0"}, "--trace-receiver " + taken + " (OTLP/HTTP 127.0.0.1:0): trace receiver: listen tcp " + taken},
		{[]string{"--trace-receiver", "127.0.0.1:0", "--trace-receiver-http", taken}, "(OTLP/HTTP " + taken + "): trace receiver: listen tcp " + taken},
	} {
		dir := filepath.Join(t.TempDir(), "run")
		var stderr bytes.Buffer
		code := run(append([]string{"replay", "--plan", plan, "--url", "http://127.0.0.1:1", "--output-dir", dir, "--no-preflight"}, c.args...), &stderr, env)
		out := stderr.String()
		if code != 2 || !strings.Contains(out, c.want) || !strings.HasPrefix(lastLine(out), "replay: ") || !strings.Contains(lastLine(out), c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, out, c.want)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%v: run directory left (%v)", c.args, err)
		}
	}
}

// lastLine is the last line of out.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1]
}
