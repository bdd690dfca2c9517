package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// usageServer streams eight content events of " the" (32 bytes of text) to every chat
// request, then a usage chunk with the given counts and [DONE].
func usageServer(t *testing.T, usage string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(`data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}` + "\n\n"))
		for i := 0; i < 8; i++ {
			w.Write([]byte(`data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" the"}}]}` + "\n\n"))
			w.(http.Flusher).Flush()
		}
		w.Write([]byte(`data: {"id":"x","object":"chat.completion.chunk","choices":[],"usage":` + usage + "}\n\ndata: [DONE]\n\n"))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestImpossibleServerCounts: negative and absurd usage counts never give a negative or
// absurd throughput silently (#38 item 4). A negative count is treated as absent and noted;
// a completion count beyond what the text could encode is noted; a run whose counts come
// from the server (--use-server-token-count) and holds either exits 1 naming them.
func TestImpossibleServerCounts(t *testing.T) {
	for _, c := range []struct {
		name, usage string
		server      bool
		code        int
		says        string // in stdout or stderr
	}{
		{"negative, server counts", `{"prompt_tokens":-5,"completion_tokens":-7,"total_tokens":-12}`, true, 1,
			"INVALID TOKEN COUNTS: 6 responses had negative token counts in their usage (treated as absent)"},
		{"negative prompt only", `{"prompt_tokens":-5,"completion_tokens":8,"total_tokens":3}`, true, 1, "6 responses had negative token counts"},
		{"absurd completion, server counts", `{"prompt_tokens":16,"completion_tokens":1000000000,"total_tokens":1000000016}`, true, 1,
			"INVALID TOKEN COUNTS: 6 responses claimed more completion tokens than their text could encode"},
		{"just past the bound", `{"prompt_tokens":16,"completion_tokens":57,"total_tokens":73}`, true, 1, "claimed more completion tokens"},
		{"at the bound", `{"prompt_tokens":16,"completion_tokens":56,"total_tokens":72}`, true, 0, "Output Token Throughput"},
		{"hidden reasoning is no text", `{"prompt_tokens":16,"completion_tokens":5008,"total_tokens":5024,"completion_tokens_details":{"reasoning_tokens":5000}}`, true, 0, "Output Token Throughput"},
		{"sane", `{"prompt_tokens":16,"completion_tokens":8,"total_tokens":24}`, true, 0, "Output Token Throughput"},
		{"negative, tokenizer counts", `{"prompt_tokens":-5,"completion_tokens":-7,"total_tokens":-12}`, false, 0,
			"Note: server token counts: 6 responses had negative token counts in their usage (treated as absent)"},
		{"absurd, tokenizer counts", `{"prompt_tokens":16,"completion_tokens":1000000000,"total_tokens":1000000016}`, false, 0,
			"Note: server token counts: 6 responses claimed more completion tokens"},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := usageServer(t, c.usage)
			args := []string{"--model", "m", "--tokenizer", "builtin", "--endpoint-type", "chat", "--streaming", "--url", url,
				"--synthetic-input-tokens-mean", "16", "--output-tokens-mean", "8", "--ui-type", "none", "--max-schedule-lag", "10s",
				"--max-worker-cpu", "100000", "--workers", "1", "--no-pin", "--request-count", "6", "--concurrency", "2"}
			if c.server {
				args = append(args, "--use-server-token-count")
			}
			r := profileArgs(t, nil, args...)
			out := r.stdout + r.stderr
			if r.code != c.code || !strings.Contains(out, c.says) {
				t.Fatalf("exit %d (want %d), want %q in\n%s", r.code, c.code, c.says, out)
			}
			// No throughput is negative.
			for _, l := range strings.Split(r.stdout, "\n") {
				if !strings.Contains(l, "Throughput") {
					continue
				}
				f := strings.Fields(l)
				var v float64
				if _, err := fmt.Sscan(strings.ReplaceAll(f[len(f)-7], ",", ""), &v); err == nil && v < 0 {
					t.Errorf("throughput line %q", l)
				}
			}
		})
	}
}
