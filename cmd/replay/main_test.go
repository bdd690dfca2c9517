package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/lockbuf"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay"
	"github.com/llmbench/llmbench/replay/probe"
)

// TestMain makes the test binary act as the replay command (and so as its own workers) when
// LLMBENCH_TEST_MAIN=1.
func TestMain(m *testing.M) {
	if os.Getenv("LLMBENCH_TEST_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

func writePlan(t *testing.T, n int, gap time.Duration) string {
	path := filepath.Join(t.TempDir(), "p.plan")
	w, err := mmapds.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		r := mmapds.Record{SendOffsetNs: int64(i) * int64(gap), DelayNs: -1, Session: uint32(i), Phase: mmapds.PhaseProfile}
		if err := w.Add(r, []byte(`{"stream":true}`)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Close(&mmapds.Meta{Endpoint: "chat", Paths: []string{"/v1/chat/completions"}, Method: "POST", Streaming: true}); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestParseErrors(t *testing.T) {
	// Should a case below start a run, its workers run main, not this test binary again.
	t.Setenv("LLMBENCH_TEST_MAIN", "1")
	plan := writePlan(t, 1, 0)
	env := func(string) string { return "" }
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--url", "http://x"}, "--plan is required"},
		{[]string{"--plan", plan}, "--url is required"},
		{[]string{"--plan", plan, "--url", "http://x"}, "--output-dir is required"},
		{[]string{"--plan", plan, "--url", "u", "--output-dir", "d", "--cpus", "1-0"}, "runs backwards"},
		{[]string{"--plan", plan, "--url", "u", "--output-dir", "d", "--request-timeout-seconds", "0"}, "--request-timeout-seconds"},
		{[]string{"--plan", plan, "--url", "u", "--output-dir", "d", "--benchmark-grace-period", "soon"}, "--benchmark-grace-period"},
		{[]string{"--plan", plan, "--url", "u", "--output-dir", "d", "--gpu-sample-interval", "0s"}, "--gpu-sample-interval"},
		{[]string{"--plan", plan, "--url", "u", "--output-dir", "d", "--workers", "-1"}, "--workers"},
		{[]string{"--plan", plan, "--url", "u", "--output-dir", "d", "--max-response-bytes", "0"}, "--max-response-bytes 0: must be between 1 and 1073741824"},
		{[]string{"--plan", plan, "--url", "u", "--output-dir", "d", "--max-response-bytes", "2147483648"}, "--max-response-bytes 2147483648"},
		{[]string{"--plan", plan, "--url", "u", "--output-dir", "d", "extra"}, "unexpected argument"},
		{[]string{"--bogus"}, "unknown flag"},
	} {
		var stderr bytes.Buffer
		_, err := parse(append([]string{"replay"}, c.args...), &stderr, env)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err %v, want %q", c.args, err, c.want)
		}
	}
	// Errors found by the engine are one line too, with exit status 2.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--plan", "/nonexistent.plan", "--url", "http://127.0.0.1:1", "--output-dir", t.TempDir()}, "nonexistent.plan"},
		{[]string{"--plan", plan, "--url", "ftp://127.0.0.1:1", "--output-dir", t.TempDir()}, `--url "ftp://127.0.0.1:1": scheme must be http or https`},
		{[]string{"--plan", plan, "--url", "htp:/bad url", "--output-dir", t.TempDir()}, `--url "htp:/bad url": holds " " at byte 8: a URL has no spaces`},
		{[]string{"--plan", plan, "--url", "http://", "--output-dir", t.TempDir()}, `--url "http://": no host`},
		{[]string{"--plan", plan, "--url", "127.0.0.1:1/v1", "--url", "127.0.0.1:70000", "--output-dir", t.TempDir()}, `--url "127.0.0.1:70000": port "70000"`},
		{[]string{"--plan", plan, "--url", "http://127.0.0.1:1", "--output-dir", t.TempDir(), "--connection-reuse-strategy", "sometimes"}, "connection-reuse-strategy"},
		{[]string{"--plan", plan, "--url", "http://127.0.0.1:1", "--output-dir", t.TempDir(), "-H", "Authorization sk-leak"}, "want 'Name: value'"},
	} {
		var stderr bytes.Buffer
		code := run(append([]string{"replay"}, c.args...), &stderr, env)
		out := stderr.String()
		if code != 2 || !strings.Contains(out, c.want) || strings.Count(strings.TrimSpace(out), "\n") != 0 || strings.Contains(out, "sk-leak") {
			t.Errorf("%v: exit %d, stderr %q, want %q on one line", c.args, code, out, c.want)
		}
	}
}

// Done-when: --cpus naming CPUs this process may not use is bad input: one line naming the
// flag, exit status 2, and no output directory created.
func TestBadCPUList(t *testing.T) {
	plan := writePlan(t, 4, 0)
	env := func(string) string { return "" }
	for _, c := range []struct {
		cpus string
		want string
	}{
		{"99999", `--cpus "99999": CPU 99999 is not available to this process, which may use CPUs `},
		{"0-99999", `--cpus "0-99999": CPUs `},
		{"4090-4095,4097", `--cpus "4090-4095,4097": CPUs 4090-4095,4097 are not available`},
	} {
		dir := filepath.Join(t.TempDir(), "run")
		var stderr bytes.Buffer
		code := run([]string{"replay", "--plan", plan, "--url", "http://127.0.0.1:1", "--output-dir", dir, "--cpus", c.cpus}, &stderr, env)
		out := stderr.String()
		if code != 2 || !strings.HasPrefix(out, "replay: "+c.want) || strings.Count(out, "\n") != 1 {
			t.Errorf("--cpus %s: exit %d, stderr %q, want one line starting %q", c.cpus, code, out, "replay: "+c.want)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("--cpus %s: output dir exists (%v)", c.cpus, err)
		}
	}
}

func TestParseOptions(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "sk-env"}
	o, err := parse([]string{"replay", "--plan", "p", "-u", "http://a", "--url", "http://b", "--output-dir", "d",
		"--cpus", "0-1", "--no-pin", "-H", "X-A: 1", "--benchmark-grace-period", "inf", "--request-timeout-seconds", "2.5",
		"--no-gpu-telemetry", "--connection-reuse-strategy", "never"}, io.Discard, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(o.URLs) != "[http://a http://b]" || fmt.Sprint(o.CPUs) != "[0 1]" || !o.NoPin || o.APIKey != "sk-env" ||
		o.GracePeriod != replay.InfiniteGrace || o.RequestTimeout != 2500*time.Millisecond || o.GPUSampleInterval >= 0 ||
		o.ConnectionReuse != "never" || o.SessionHeader != replay.DefaultSessionHeader || fmt.Sprint(o.Headers) != "[X-A: 1]" {
		t.Fatalf("options %+v", o)
	}
	o, _ = parse([]string{"replay", "--plan", "p", "-u", "a", "--output-dir", "d", "--api-key", "sk-flag"}, io.Discard, func(k string) string { return env[k] })
	if o.APIKey != "sk-flag" || o.GracePeriod != replay.DefaultGracePeriod {
		t.Fatalf("flag key %q grace %v", o.APIKey, o.GracePeriod)
	}
	o, _ = parse([]string{"replay", "--plan", "p", "-u", "a", "--output-dir", "d", "--max-response-bytes", "1048576"}, io.Discard, func(string) string { return "" })
	if o.MaxResponseBytes != 1<<20 {
		t.Fatalf("--max-response-bytes: %d", o.MaxResponseBytes)
	}
	if o, _ = parse([]string{"replay", "--plan", "p", "-u", "a", "--output-dir", "d"}, io.Discard, func(string) string { return "" }); o.MaxResponseBytes != replay.DefaultMaxResponseBytes {
		t.Fatalf("default max response bytes %d", o.MaxResponseBytes)
	}
}

// Done-when: a run killed with SIGINT leaves a readable log and a run.json marked
// interrupted; the command exits 130, with some requests completed and some not sent.
//
// Nothing here depends on how fast the machine is: the signal goes out once the server has
// finished a response (not after a wall-clock offset, which a loaded machine can outlast
// before the first request is even sent), the plan's schedule runs 20 s past that, and the
// grace period lets the in-flight requests, which take 100 ms, end on their own. So at least
// the finished response is completed and nearly all of the plan is not sent, however late
// the run started.
func TestSIGINT(t *testing.T) {
	const planned = 2000
	finished := make(chan struct{}, planned)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < 5; i++ {
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n")
			w.(http.Flusher).Flush()
			time.Sleep(20 * time.Millisecond)
		}
		finished <- struct{}{}
	}))
	defer srv.Close()
	plan := writePlan(t, planned, 10*time.Millisecond)
	dir := filepath.Join(t.TempDir(), "run")
	cmd, exited, stderr := startReplayUntil(t, finished, "--plan", plan, "--url", srv.URL, "--output-dir", dir, "--workers", "1",
		"--benchmark-grace-period", "60", "--api-key", "sk-never-written", "--no-server-metrics")
	cmd.Process.Signal(syscall.SIGINT)
	var err error
	select {
	case err = <-exited:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-exited
		t.Fatalf("replay still running 60 s after SIGINT: %s", stderr.String())
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, stderr %s", err, stderr.String())
	}
	m, err := rawlog.ReadManifest(dir)
	if err != nil || m.Status != rawlog.StatusInterrupted {
		t.Fatalf("run.json %+v %v", m, err)
	}
	c := m.Counts
	if c.Completed == 0 || c.NotSent == 0 || c.Completed+c.Aborted+c.NotSent+c.Failed != planned {
		t.Fatalf("counts %+v", c)
	}
	s, err := rawlog.Summarize(filepath.Join(dir, m.Workers[0].Log))
	if err != nil || s.Requests != planned || s.Footer == nil || s.Footer.Status != rawlog.StatusInterrupted {
		t.Fatalf("log summary %+v %v", s, err)
	}
	if !strings.Contains(stderr.String(), "stopping") || !strings.Contains(stderr.String(), fmt.Sprintf("interrupted: %d planned", planned)) {
		t.Fatalf("stderr %q", stderr.String())
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "run.json"))
	if bytes.Contains(raw, []byte("sk-never-written")) || !bytes.Contains(raw, []byte("REDACTED")) {
		t.Fatalf("run.json leaks or lacks redaction: %s", raw)
	}
}

// Off a terminal, progress is one whole line every 10 s on stderr (--ui-type simple, the
// default, or dashboard, which says it is simple here); --ui-type none shows none; any other
// value is bad input naming the flag.
func TestUIType(t *testing.T) {
	env := func(string) string { return "" }
	for _, c := range []struct {
		ui       []string
		progress bool
		notice   string
		err      string
	}{
		{nil, true, "", ""},
		{[]string{"--ui-type", "simple"}, true, "", ""},
		{[]string{"--ui", "dashboard"}, true, "replay: --ui-type dashboard: there is no dashboard here; showing the simple progress\n", ""},
		{[]string{"--ui-type", "none"}, false, "", ""},
		{[]string{"--ui-type", "tui"}, false, "", `--ui-type "tui": want none, simple or dashboard`},
	} {
		var stderr bytes.Buffer
		o, err := parse(append([]string{"replay", "--plan", "p", "-u", "http://a", "--output-dir", "d"}, c.ui...), &stderr, env)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%v: err %v, want %q", c.ui, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", c.ui, err)
		}
		if got := o.Progress != nil; got != c.progress || (c.progress && o.ProgressEvery != replay.DefaultProgressEvery) {
			t.Errorf("%v: progress %v every %v", c.ui, o.Progress, o.ProgressEvery)
		}
		if stderr.String() != c.notice {
			t.Errorf("%v: stderr %q, want %q", c.ui, stderr.String(), c.notice)
		}
		// The progress goes to stderr (through the lock it shares with the notices).
		if c.progress {
			stderr.Reset()
			fmt.Fprint(o.Progress, "progress line\n")
			if stderr.String() != "progress line\n" {
				t.Errorf("%v: the progress wrote %q to stderr", c.ui, stderr.String())
			}
		}
	}
}

// AIPerf's readiness probe and Content-Type flags reach replay.Options; bad values are one
// line naming the flag.
func TestWaitAndContentTypeFlags(t *testing.T) {
	env := func(string) string { return "" }
	base := []string{"replay", "--plan", "p", "-u", "http://a", "--output-dir", "d"}
	o, err := parse(append(base, "--wait-for-model-timeout", "30", "--wait-for-model-mode", "both", "--wait-for-model-interval", "0.5",
		"--request-content-type", "application/json; charset=utf-8", "-H", "X-A: 1"), io.Discard, env)
	if err != nil {
		t.Fatal(err)
	}
	if o.WaitForModel != 30*time.Second || o.WaitForModelMode != probe.WaitBoth || o.WaitForModelInterval != 500*time.Millisecond ||
		fmt.Sprint(o.Headers) != "[Content-Type: application/json; charset=utf-8 X-A: 1]" {
		t.Fatalf("options %+v", o)
	}
	o, err = parse(base, io.Discard, env)
	if err != nil || o.WaitForModel != 0 || len(o.Headers) != 0 {
		t.Fatalf("defaults: %v %+v", err, o)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--wait-for-model-timeout", "-1"}, "--wait-for-model-timeout -1: want seconds in [0, 31536000] (365 days)"},
		{[]string{"--wait-for-model-interval", "NaN"}, "--wait-for-model-interval NaN: want seconds in [0, 31536000] (365 days)"},
		{[]string{"--wait-for-model-mode", "ping"}, `--wait-for-model-mode "ping": want models, inference or both`},
		{[]string{"--request-content-type", "multipart/form-data"}, `--request-content-type "multipart/form-data": the plan's bodies are JSON; multipart bodies are not supported`},
	} {
		if _, err := parse(append(base, c.args...), io.Discard, env); err == nil || err.Error() != c.want {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}

// startReplayUntil starts this binary as replay with args and returns once the server has
// finished a response (finished), failing the test when replay exits first or none
// finishes within 60 s; exited receives replay's exit.
func startReplayUntil(t *testing.T, finished <-chan struct{}, args ...string) (*exec.Cmd, <-chan error, *lockbuf.Buffer) {
	t.Helper()
	// --no-preflight: the response awaited is the run's, not the preflight's (on by default).
	cmd := exec.Command(os.Args[0], append([]string{"--no-preflight"}, args...)...)
	cmd.Env = append(os.Environ(), "LLMBENCH_TEST_MAIN=1")
	stderr := &lockbuf.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-finished:
	case err := <-exited:
		t.Fatalf("replay exited (%v) before the server finished a response: %s", err, stderr.String())
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-exited
		t.Fatalf("the server finished no response within 60 s: %s", stderr.String())
	}
	return cmd, exited, stderr
}
