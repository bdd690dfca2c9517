package e2e_test

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The paths the docs describe that need a server acting as vLLM does: a model the server does
// not serve (--served-model-name), and prompt tokens served from its prefix cache
// (--enable-prompt-tokens-details), which chat shows as its Cache line (docs/chat.md).

// A profile naming a model the server does not serve fails before the run, with the
// server's words naming the model; the model it serves runs.
func TestProfileModelNotServed(t *testing.T) {
	mock := startMock(t, "--served-model-name", "Qwen/Qwen3-0.6B", "--strict", "--ttft", "1ms", "--itl", "1ms")
	dir := t.TempDir()
	args := []string{"--url", mock.URL, "--streaming", "--request-count", "4", "--output-tokens-mean", "8",
		"--no-gpu-telemetry", "--no-pin"}
	r := command(t, bin.profile, append([]string{"--model", "Qwen/Qwen3-8B", "--artifact-dir", filepath.Join(dir, "wrong")}, args...)...)
	if r.code == 0 {
		t.Fatalf("profile of a model the server does not serve exited 0:\n%s", r.stderr)
	}
	if want := "The model `Qwen/Qwen3-8B` does not exist."; !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "404") {
		t.Errorf("profile's error does not name the model with the server's 404 (%q):\n%s", want, r.stderr)
	}
	if !strings.Contains(r.stderr, "check --model") {
		t.Errorf("profile's error does not point at --model:\n%s", r.stderr)
	}
	if n := mock.requestsTotal(t); n > 1 {
		t.Errorf("the server got %d requests for a model it does not serve; want the preflight's one at most", n)
	}
	r = command(t, bin.profile, append([]string{"--model", "Qwen/Qwen3-0.6B", "--artifact-dir", filepath.Join(dir, "right")}, args...)...)
	if r.code != 0 {
		t.Fatalf("profile of the served model: exit %d:\n%s", r.code, r.stderr)
	}
}

var cacheLineRE = regexp.MustCompile(`(?m)^Cache: (\d+)/(\d+) prompt tokens cached \(`)

// chat's second turn carries the first (message and reply) as its prefix: with the server
// reporting cached prompt tokens, it shows the Cache line with whole prefix-cache blocks;
// without, it shows none.
func TestChatCacheLine(t *testing.T) {
	conversation := "Tell me everything you know about the history of the printing press in Europe and in Asia, in detail please\nand then?\n"
	for _, report := range []bool{true, false} {
		args := []string{"--ttft", "1ms", "--itl", "1ms"}
		if report {
			args = append(args, "--enable-prompt-tokens-details")
		}
		mock := startMock(t, args...)
		ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
		cmd := exec.CommandContext(ctx, bin.chat, "--model", "Qwen/Qwen3-0.6B", "--url", mock.URL, "--osl", "8")
		cmd.Stdin = strings.NewReader(conversation)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		cancel()
		if err != nil {
			t.Fatalf("chat: %v\n%s", err, errb.String())
		}
		m := cacheLineRE.FindAllStringSubmatch(out.String(), -1)
		if !report {
			if len(m) != 0 {
				t.Errorf("a server that reports no cached tokens: chat shows %q", m)
			}
			continue
		}
		if len(m) != 1 {
			t.Fatalf("want one Cache line (the second turn's), got %d:\n%s", len(m), out.String())
		}
		cached, _ := strconv.Atoi(m[0][1])
		prompt, _ := strconv.Atoi(m[0][2])
		if cached <= 0 || cached%16 != 0 || cached >= prompt {
			t.Errorf("Cache line %q: want whole 16-token blocks of the first turn, fewer than the prompt's %d", m[0][0], prompt)
		}
	}
}
