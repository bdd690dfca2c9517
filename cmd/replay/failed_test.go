package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/llmbench/llmbench/replay/probe"
)

// A replay that can measure nothing says so. Against a server that is down, the preflight
// (on by default, as in profile; --preflight still accepted) refuses the run: exit 2, one
// line, no run directory. With --no-preflight every request is sent and fails: the last line
// says so and the exit status is 1 (docs: 1 failed), not 0.
func TestServerDownSaysSo(t *testing.T) {
	t.Setenv("LLMBENCH_TEST_MAIN", "1")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	plan := writePlan(t, 3, 0)
	env := func(string) string { return "" }
	for _, c := range []struct {
		name  string
		flags []string
		code  int
		last  string
		dir   bool
	}{
		{"preflight by default", nil, 2, "the server cannot be reached, so every request of the run would fail; nothing of the plan was sent", false},
		{"--preflight", []string{"--preflight"}, 2, "the server cannot be reached", false},
		{"--no-preflight", []string{"--no-preflight"}, 1, "replay: FAILED: every request sent failed (3 failed, none completed, of 3 planned)", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			var stderr bytes.Buffer
			code := run(append([]string{"replay", "--plan", plan, "--url", dead, "--output-dir", dir, "--ui-type", "none", "--no-gpu-telemetry",
				"--no-server-metrics", "--workers", "1", "--no-pin"}, c.flags...), &stderr, env)
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			if code != c.code || !strings.Contains(lines[len(lines)-1], c.last) {
				t.Fatalf("exit %d, want %d and a last line with %q:\n%s", code, c.code, c.last, stderr.String())
			}
			if _, err := os.Stat(dir); os.IsNotExist(err) == c.dir {
				t.Errorf("run directory: %v, want one: %v", err, c.dir)
			}
		})
	}
}

// A base URL ending in /v1, as OpenAI SDKs take it, sends to /v1/chat/completions (not
// /v1/v1/...), with the preflight and the run alike.
func TestBaseURLEndingInV1(t *testing.T) {
	t.Setenv("LLMBENCH_TEST_MAIN", "1")
	var wrong, right, preflight atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path != "/v1/chat/completions" {
			if r.Method == http.MethodPost {
				wrong.Add(1)
			}
			http.NotFound(w, r)
			return
		}
		if strings.HasSuffix(r.UserAgent(), probe.PreflightUserAgentSuffix) {
			preflight.Add(1)
		} else {
			right.Add(1)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	plan := writePlan(t, 3, 0)
	for _, url := range []string{srv.URL + "/v1", strings.TrimPrefix(srv.URL, "http://") + "/v1/"} {
		right.Store(0)
		var stderr bytes.Buffer
		code := run([]string{"replay", "--plan", plan, "--url", url, "--output-dir", filepath.Join(t.TempDir(), "run"), "--ui-type", "none",
			"--no-gpu-telemetry", "--no-server-metrics", "--workers", "1", "--no-pin"}, &stderr, func(string) string { return "" })
		if code != 0 || right.Load() != 3 || preflight.Load() == 0 {
			t.Errorf("--url %s: exit %d, %d requests to /v1/chat/completions, %d preflight:\n%s", url, code, right.Load(), preflight.Load(), stderr.String())
		}
	}
	if n := wrong.Load(); n != 0 {
		t.Errorf("%d requests to another path than /v1/chat/completions", n)
	}
}
