package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench/llmbench/mockllm"
	"github.com/llmbench/llmbench/rawlog"
)

// walkthrough is the first command of NVIDIA's AIPerf walkthrough (Qwen3-0.6B on vLLM), as
// its users type it, but for the URL. Its --extra-inputs min_tokens:128 is bound to the
// output limit: vLLM, and mockllm as it, refuses min_tokens above max_tokens.
func walkthrough(url string) []string {
	return []string{"profile", "--model", "Qwen/Qwen3-0.6B", "--endpoint-type", "chat", "--streaming", "--url", url,
		"--synthetic-input-tokens-mean", "128", "--synthetic-input-tokens-stddev", "0", "--output-tokens-mean", "128",
		"--output-tokens-stddev", "0", "--extra-inputs", "min_tokens:128", "--extra-inputs", "ignore_eos:true"}
}

// documented is the artifact directory the walkthrough's run takes (README, docs/profile.md).
const documented = "artifacts/Qwen_Qwen3-0.6B-openai-chat-concurrency1"

// startMock starts mockllm on loopback with short timing and returns its host:port, as
// users write --url.
func startMock(t *testing.T) string {
	t.Helper()
	o := mockllm.DefaultOptions()
	o.TTFT, o.ITL = time.Millisecond, 0
	url, stop, err := mockllm.Start("127.0.0.1:0", o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return strings.TrimPrefix(url, "http://")
}

// deadAddr is a loopback host:port nothing listens on.
func deadAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// runIn runs profile with argv in the current directory.
func runIn(argv ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(argv, &out, &errb, func(string) string { return "" })
	return code, out.String(), errb.String()
}

// checkRun says whether dir holds a complete run of n requests, every one completed with 128
// output tokens asked.
func checkRun(t *testing.T, dir string) {
	t.Helper()
	m, err := rawlog.ReadManifest(dir)
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	if m.Status != rawlog.StatusComplete || m.Counts.Planned == 0 || m.Counts.Completed != m.Counts.Planned || m.Preflight == nil {
		t.Errorf("%s: status %s, counts %+v, preflight %+v", dir, m.Status, m.Counts, m.Preflight)
	}
}

// The walkthrough command, verbatim, against mockllm: the preflight keeps its body valid
// (min_tokens lowered with the limit), every request completes, and the run lands in the
// documented directory. The same with the base URL an OpenAI SDK takes (.../v1).
func TestWalkthroughVerbatim(t *testing.T) {
	addr := startMock(t)
	for _, url := range []string{addr, "http://" + addr + "/v1"} {
		t.Run(url, func(t *testing.T) {
			t.Chdir(t.TempDir())
			code, _, stderr := runIn(walkthrough(url)...)
			if code != 0 || strings.Contains(stderr, "preflight") {
				t.Fatalf("exit %d:\n%s", code, stderr)
			}
			checkRun(t, documented)
		})
	}
}

// A run that sends nothing leaves nothing: the server down, a preflight the server refuses
// (here a key it wants), a sweep or repeats that never sent; the next good run then takes the
// documented name, not ...-concurrency1-2.
func TestNothingSentLeavesNothing(t *testing.T) {
	o := mockllm.DefaultOptions()
	o.TTFT, o.ITL, o.APIKey = time.Millisecond, 0, "k"
	keyed, stop, err := mockllm.Start("127.0.0.1:0", o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	dead := deadAddr(t)
	for _, c := range []struct {
		name string
		argv []string
		want string
	}{
		{"server down", walkthrough(dead), "the server cannot be reached"},
		{"refused", walkthrough(keyed), "HTTP 401"},
		{"repeats, server down", append(walkthrough(dead), "--num-profile-runs", "2"), "the server cannot be reached"},
		{"sweep, server down", append(walkthrough(dead), "--concurrency", "1,2"), "the server cannot be reached"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			code, _, stderr := runIn(c.argv...)
			if code == 0 || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "nothing was sent") {
				t.Fatalf("exit %d, want non-zero saying %q:\n%s", code, c.want, stderr)
			}
			if _, err := os.Stat("artifacts"); !os.IsNotExist(err) {
				left, _ := filepath.Glob("artifacts/*/*")
				t.Fatalf("a run that sent nothing left artifacts: %v %v", err, left)
			}
			// The next run, against a server that answers, takes the documented name.
			code, _, stderr = runIn(walkthrough(startMock(t))...)
			if code != 0 {
				t.Fatalf("exit %d:\n%s", code, stderr)
			}
			checkRun(t, documented)
		})
	}
}
