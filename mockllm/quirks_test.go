package mockllm

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawExchange writes one HTTP/1.1 request on a fresh connection, reads its response with
// net/http's parser, then reads on: closed says the server closed the connection right after
// the response (EOF within a second) rather than keeping it open.
func rawExchange(t *testing.T, base, body string) (resp *http.Response, payload string, closed bool) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
		itoa(len(body)) + "\r\n\r\n" + body
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("body: %v", err)
	}
	c.SetReadDeadline(time.Now().Add(time.Second))
	_, err = br.ReadByte()
	return resp, string(b), err == io.EOF
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestQuirkCloseAfterResponse: with CloseAfterResponse every inference response is whole
// (the final chunk, or its Content-Length body) and announces Keep-Alive, and the server
// closes the connection right after it; without it the connection stays open.
func TestQuirkCloseAfterResponse(t *testing.T) {
	for _, tc := range []struct {
		name   string
		quirk  bool
		stream bool
	}{{"stream", true, true}, {"unary", true, false}, {"off stream", false, true}, {"off unary", false, false}} {
		t.Run(tc.name, func(t *testing.T) {
			o := testOptions()
			o.Quirks.CloseAfterResponse = tc.quirk
			base := startServer(t, o)
			body := `{"messages":[{"role":"user","content":"hi"}],"max_tokens":3,"ignore_eos":true,"stream":` + map[bool]string{true: "true", false: "false"}[tc.stream] + `}`
			resp, payload, closed := rawExchange(t, base, body)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, payload)
			}
			if tc.stream && !strings.HasSuffix(payload, "data: [DONE]\n\n") {
				t.Errorf("stream cut short: %q", payload)
			}
			if !tc.stream && !strings.Contains(payload, `"completion_tokens":3`) {
				t.Errorf("body cut short: %q", payload)
			}
			if closed != tc.quirk {
				t.Errorf("connection closed after the response: %v, want %v", closed, tc.quirk)
			}
			if ka := resp.Header.Get("Keep-Alive"); tc.quirk && ka != keepAliveHeader {
				t.Errorf("Keep-Alive header %q, want %q", ka, keepAliveHeader)
			}
			if resp.Close {
				t.Error("the response says Connection: close; the quirk is that it does not")
			}
		})
	}
}

// TestQuirkIgnoreMaxCompletionTokens: the chat limit in max_completion_tokens is dropped
// (the natural length comes out), max_tokens still holds.
func TestQuirkIgnoreMaxCompletionTokens(t *testing.T) {
	o := testOptions()
	o.NaturalTokens = 40 // natural lengths 20..60
	o.Quirks.IgnoreMaxCompletionTokens = true
	base := startServer(t, o)
	usage := func(field string) float64 {
		resp := post(t, base+"/v1/chat/completions", map[string]any{"messages": []map[string]string{{"role": "user", "content": "hi"}}, field: 2})
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		n, _ := path(jsonOf(t, string(b)), "usage.completion_tokens").(float64)
		return n
	}
	if n := usage("max_tokens"); n != 2 {
		t.Errorf("max_tokens 2: %v completion tokens", n)
	}
	if n := usage("max_completion_tokens"); n < 20 {
		t.Errorf("max_completion_tokens 2 with the quirk: %v completion tokens, want the natural length (20 or more)", n)
	}
}

// TestQuirkNoMetrics: /metrics answers 501 with a JSON error whose message says how to get
// metrics; the inference routes still serve.
func TestQuirkNoMetrics(t *testing.T) {
	o := testOptions()
	o.Quirks.NoMetrics = true
	base := startServer(t, o)
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotImplemented {
		t.Fatalf("status %d, want 501", resp.StatusCode)
	}
	if msg, _ := path(jsonOf(t, string(b)), "error.message").(string); !strings.Contains(msg, "without --no-metrics") {
		t.Errorf("message %q lacks the hint", msg)
	}
	textAPIs[0].call(t, base, true, map[string]any{"max": 2, "ignore_eos": true})
}

// TestQuirkContextTokens: a stream that would run past the context ends, once it is full,
// with llama.cpp's error event and no [DONE]; a non-streamed request gets a 500 with it; a
// request that fits is served whole.
func TestQuirkContextTokens(t *testing.T) {
	o := testOptions()
	o.NaturalTokens = 40 // 20..60 output tokens
	o.Quirks.ContextTokens = 12
	base := startServer(t, o)
	msg := map[string]string{"role": "user", "content": "hi"} // 1 prompt token
	resp := post(t, base+"/v1/chat/completions", map[string]any{"messages": []any{msg}, "stream": true})
	evs, err := readSSE(resp.Body)
	resp.Body.Close()
	if err != nil || len(evs) == 0 {
		t.Fatalf("events %v, %v", evs, err)
	}
	content := 0
	for _, e := range evs {
		if strings.Contains(e.data, `"content":"`) {
			content++
		}
	}
	last := evs[len(evs)-1].data
	if content != 11 || last != contextExceededError || strings.Contains(evs[len(evs)-2].data, "[DONE]") {
		t.Errorf("%d content events (want 11: the 12-token context less the prompt), last %q", content, last)
	}
	resp = post(t, base+"/v1/chat/completions", map[string]any{"messages": []any{msg}})
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 500 || string(b) != contextExceededError {
		t.Errorf("non-streamed: %d %s", resp.StatusCode, b)
	}
	resp = post(t, base+"/v1/chat/completions", map[string]any{"messages": []any{msg}, "stream": true, "max_tokens": 5})
	evs, _ = readSSE(resp.Body)
	resp.Body.Close()
	if len(evs) == 0 || evs[len(evs)-1].data != "[DONE]" {
		t.Errorf("a request that fits: %v", evs)
	}
}
