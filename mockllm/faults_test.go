package mockllm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestErrorRate: with rate 1 every API answers 500 with its error shape.
func TestErrorRate(t *testing.T) {
	o := testOptions()
	o.ErrorRate = 1
	base := startServer(t, o)
	errPaths := map[string]string{"chat": "error.message", "completions": "error.message", "responses": "error.message",
		"anthropic": "error.message", "tgi": "error"}
	for _, api := range textAPIs {
		for _, stream := range []bool{true, false} {
			resp := post(t, api.url(base, stream), api.body(stream, nil), api.hdr...)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 500 || str(path(jsonOf(t, string(b)), errPaths[api.api])) == "" {
				t.Errorf("%s stream=%v: %d %s", api.api, stream, resp.StatusCode, b)
			}
		}
	}
	resp := post(t, base+"/v1/embeddings", `{"input":"x"}`)
	resp.Body.Close()
	if resp.StatusCode != 500 {
		t.Errorf("embeddings: %d", resp.StatusCode)
	}
}

// TestFaultRateFractions: a fractional rate hits that fraction of requests
// (within 2), the same requests for the same seed.
func TestFaultRateFractions(t *testing.T) {
	statuses := func(seed uint64) []int {
		o := testOptions()
		o.Seed = seed
		o.ErrorRate = 0.3
		base := startServer(t, o)
		var out []int
		for range 200 {
			resp := post(t, base+"/v1/completions", `{"prompt":"x","max_tokens":1}`)
			_, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			out = append(out, resp.StatusCode)
		}
		return out
	}
	a, b, c := statuses(1), statuses(1), statuses(2)
	n500 := 0
	for _, s := range a {
		if s == 500 {
			n500++
		}
	}
	if n500 < 58 || n500 > 62 {
		t.Errorf("%d of 200 requests failed, want 60 ± 2", n500)
	}
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Error("same seed gave different fault sequences")
	}
	if fmt.Sprint(a) == fmt.Sprint(c) {
		t.Error("seeds 1 and 2 gave the same fault sequence")
	}
}

// TestStreamErrorRate: the error arrives as an event inside a 200
// stream, after some tokens, and the stream ends without its end marker.
func TestStreamErrorRate(t *testing.T) {
	o := testOptions()
	o.StreamErrorRate = 1
	base := startServer(t, o)
	for _, api := range textAPIs {
		t.Run(api.api, func(t *testing.T) {
			r, evs := api.call(t, base, true, map[string]any{"max": 10, "ignore_eos": true})
			if !r.errorEvent || r.done {
				t.Fatalf("error event %v, done %v", r.errorEvent, r.done)
			}
			last := evs[len(evs)-1]
			if last.name != "error" {
				t.Errorf("last event is %q, not the error", last.name)
			}
			if !json.Valid([]byte(last.data)) {
				t.Errorf("error data %q is not JSON", last.data)
			}
			if r.tokenEvents < 1 || r.tokenEvents > 9 {
				t.Errorf("error after %d token events, want mid-stream", r.tokenEvents)
			}
		})
	}
	// Non-streaming requests have no stream to carry it: served normally.
	resp := post(t, base+"/v1/completions", `{"prompt":"x","max_tokens":3}`)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("non-streaming: %d", resp.StatusCode)
	}
}

// TestDisconnectRate: the connection drops mid-stream (the client sees
// the body cut short) or, non-streaming, instead of the response.
func TestDisconnectRate(t *testing.T) {
	o := testOptions()
	o.DisconnectRate = 1
	o.ITL = time.Millisecond
	base := startServer(t, o)
	for _, api := range textAPIs {
		t.Run(api.api, func(t *testing.T) {
			resp := post(t, api.url(base, true), api.body(true, map[string]any{"max": 10, "ignore_eos": true}), api.hdr...)
			evs, err := readSSE(resp.Body)
			resp.Body.Close()
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("read error %v, want unexpected EOF", err)
			}
			r := collectStream(t, api.api, evs)
			if r.done || r.tokenEvents < 1 || r.tokenEvents > 9 {
				t.Errorf("done %v after %d token events, want a mid-stream drop", r.done, r.tokenEvents)
			}
			req, _ := http.NewRequest("POST", api.url(base, false), strings.NewReader(mustJSON(api.body(false, nil))))
			for i := 0; i+1 < len(api.hdr); i += 2 {
				req.Header.Set(api.hdr[i], api.hdr[i+1])
			}
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
				t.Errorf("non-streaming: got status %d, want a dropped connection", resp.StatusCode)
			}
		})
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestStallRate: a stall with a duration pauses mid-stream and shifts
// the rest (the schedule log shows exactly one gap of ITL + the stall, and
// the client reads nothing before its instant); a stall without one holds
// until the client gives up.
func TestStallRate(t *testing.T) {
	o := testOptions()
	o.StallRate = 1
	o.StallDuration = 80 * time.Millisecond
	o.ITL = time.Millisecond
	sl := &scheduleBuf{}
	o.ScheduleLog = sl
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + serveOn(t, s)
	seen := 0
	for _, api := range textAPIs {
		r, evs := api.call(t, base, true, map[string]any{"max": 10, "ignore_eos": true})
		if !r.done || r.tokenEvents != 10 {
			t.Fatalf("%s: done %v, %d token events", api.api, r.done, r.tokenEvents)
		}
		rec := sl.last(t, &seen)
		var stalls []int
		for j := 1; j < len(rec.DueNs); j++ {
			switch rec.DueNs[j] - rec.DueNs[j-1] {
			case int64(o.ITL):
			case int64(o.ITL + o.StallDuration):
				stalls = append(stalls, j)
			default:
				t.Errorf("%s: gap before event %d is %v", api.api, j, time.Duration(rec.DueNs[j]-rec.DueNs[j-1]))
			}
		}
		if len(stalls) != 1 || rec.Fault != "stall" {
			t.Errorf("%s: stalls before events %v (fault %s), want one of %v", api.api, stalls, rec.Fault, o.StallDuration)
		}
		checkReceivedAfter(t, rec, evs, r.eventTimes)
	}
	t0 := time.Now()
	resp := post(t, base+"/v1/completions", `{"prompt":"x","max_tokens":2}`)
	resp.Body.Close()
	if d := time.Since(t0); d < o.StallDuration {
		t.Errorf("non-streaming stall answered after %v", d)
	}

	o.StallDuration = 0
	s2, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	base2 := "http://" + serveOn(t, s2)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", base2+"/v1/chat/completions",
		strings.NewReader(`{"messages":[{"role":"user","content":"x"}],"stream":true,"max_tokens":10,"ignore_eos":true}`))
	resp, err = http.DefaultClient.Do(req)
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("stall without duration: err %v, want the client's deadline", err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for s2.Stats().ClientGone == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if st := s2.Stats(); st.ClientGone != 1 || st.Faults["stall"] != 1 || st.Running != 0 {
		t.Errorf("after the client left: %+v", st)
	}
}

func TestAPIKey(t *testing.T) {
	o := testOptions()
	o.APIKey = "sekrit"
	base := startServer(t, o)
	cases := []struct {
		name, path string
		body       string
		hdr        []string
		code       int
	}{
		{"chat no key", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"max_tokens":1}`, nil, 401},
		{"chat wrong key", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"max_tokens":1}`, []string{"Authorization", "Bearer nope"}, 401},
		{"chat key", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"max_tokens":1}`, []string{"Authorization", "Bearer sekrit"}, 200},
		{"anthropic bearer", "/v1/messages", `{"messages":[{"role":"user","content":"x"}],"max_tokens":1}`, []string{"Authorization", "Bearer sekrit", "anthropic-version", "2023-06-01"}, 401},
		{"anthropic x-api-key", "/v1/messages", `{"messages":[{"role":"user","content":"x"}],"max_tokens":1}`, []string{"x-api-key", "sekrit", "anthropic-version", "2023-06-01"}, 200},
		{"tgi key", "/generate", `{"inputs":"x","parameters":{"max_new_tokens":1}}`, []string{"Authorization", "Bearer sekrit"}, 200},
		{"embeddings no key", "/v1/embeddings", `{"input":"x"}`, nil, 401},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := post(t, base+tc.path, tc.body, tc.hdr...)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.code {
				t.Errorf("status %d, want %d: %s", resp.StatusCode, tc.code, b)
			}
			if tc.code == 401 && !json.Valid(b) {
				t.Errorf("401 body %q is not JSON", b)
			}
		})
	}
	for _, p := range []string{"/health", "/metrics"} {
		resp, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s needs no key, got %d", p, resp.StatusCode)
		}
	}
	resp, err := http.Get(base + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("/v1/models without key: %d", resp.StatusCode)
	}
}

// TestToolCalls: with rate 1, chat, responses and messages answer with
// a function call whose name is the request's first tool; the name and
// arguments re-tokenize to the reported count.
func TestToolCalls(t *testing.T) {
	o := testOptions()
	o.ToolCallRate = 1
	o.ReasoningTokens = 2
	base := startServer(t, o)
	tools := map[string]any{
		"chat":      []map[string]any{{"type": "function", "function": map[string]any{"name": "lookup", "parameters": map[string]any{}}}},
		"responses": []map[string]any{{"type": "function", "name": "lookup", "parameters": map[string]any{}}},
		"anthropic": []map[string]any{{"name": "lookup", "input_schema": map[string]any{}}},
	}
	finish := map[string]string{"chat": "tool_calls", "responses": "completed", "anthropic": "tool_use"}
	for _, api := range textAPIs {
		if tools[api.api] == nil {
			continue
		}
		for _, stream := range []bool{true, false} {
			for _, withTools := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/stream=%v/tools=%v", api.api, stream, withTools), func(t *testing.T) {
					x := map[string]any{}
					wantName := defaultToolName
					if withTools {
						x["tools"] = tools[api.api]
						wantName = "lookup"
					}
					r, _ := api.call(t, base, stream, x)
					if r.toolName != wantName || r.content != "" {
						t.Fatalf("tool %q, content %q", r.toolName, r.content)
					}
					var args map[string]any
					if err := json.Unmarshal([]byte(r.toolArgs), &args); err != nil || args["query"] == nil {
						t.Errorf("arguments %q: %v", r.toolArgs, err)
					}
					got := fakeTok.Count(r.reasoning) + fakeTok.Count(r.toolName) + fakeTok.Count(r.toolArgs)
					if api.api == "anthropic" && !stream {
						got = r.completion // input is re-marshalled JSON: only check it parses
					}
					if got != r.completion || fakeTok.Count(r.reasoning) != 2 {
						t.Errorf("tool call is %d tokens, usage says %d", got, r.completion)
					}
					if r.finish != finish[api.api] {
						t.Errorf("finish %q, want %q", r.finish, finish[api.api])
					}
				})
			}
		}
	}
	// Completions and TGI cannot carry tool calls: text as usual.
	r, _ := textAPIs[1].call(t, base, true, map[string]any{"max": 3, "ignore_eos": true})
	if r.content == "" {
		t.Error("completions produced no text with tool-call-rate 1")
	}
	// A budget too small for the call cuts it short, with finish "length".
	r, _ = textAPIs[0].call(t, base, true, map[string]any{"max": 8, "ignore_eos": true})
	if r.completion != 8 || r.finish != "length" || r.toolName == "" {
		t.Errorf("short budget: %d tokens, finish %q, tool %q", r.completion, r.finish, r.toolName)
	}
}

// TestToolCallRateFraction: a fractional rate splits by request content.
func TestToolCallRateFraction(t *testing.T) {
	o := testOptions()
	o.ToolCallRate = 0.5
	base := startServer(t, o)
	tools := 0
	for i := range 60 {
		body := map[string]any{"messages": []map[string]any{{"role": "user", "content": fmt.Sprint("q", i)}}, "max_tokens": 30}
		resp := post(t, base+"/v1/chat/completions", body)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(b), `"tool_calls":[`) {
			tools++
		}
	}
	if tools < 18 || tools > 42 {
		t.Errorf("%d of 60 requests got a tool call, want about 30", tools)
	}
}

// TestFaultRatesOverAnyRun: over any run of N consecutive arrivals, each
// fault kind strikes within 2 of N × its rate, whatever the seed. (With
// independent draws, 16 arrivals at 0.25/0.25/0.125 once gave 3 errors, 4
// stream errors and 5 disconnects.)
func TestFaultRatesOverAnyRun(t *testing.T) {
	o := testOptions()
	o.ErrorRate, o.StreamErrorRate, o.DisconnectRate, o.StallRate = 0.25, 0.25, 0.125, 0.05
	rates := [numFaults]float64{faultError: 0.25, faultStreamError: 0.25, faultDisconnect: 0.125, faultStall: 0.05}
	for seed := uint64(0); seed < 16; seed++ {
		o.Seed = seed
		srv, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		srv.Close()
		kinds := make([]faultKind, 600)
		for n := range kinds {
			kinds[n], _ = srv.drawFault(uint64(n + 1))
		}
		for _, size := range []int{4, 16, 100, 600} {
			for start := 0; start+size <= len(kinds); start++ {
				var count [numFaults]int
				for _, k := range kinds[start : start+size] {
					count[k]++
				}
				for k := faultError; k < numFaults; k++ {
					if d := math.Abs(float64(count[k]) - float64(size)*rates[k]); d > 2 {
						t.Fatalf("seed %d, arrivals %d..%d: %d %s faults, want %v ± 2",
							seed, start+1, start+size, count[k], faultNames[k], float64(size)*rates[k])
					}
				}
			}
		}
	}
}
