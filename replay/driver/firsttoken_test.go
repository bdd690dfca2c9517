package driver

import (
	"testing"

	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/mmapds"
)

// TestFirstToken: the first event with output text ends prefill, whatever the reads' cut; a
// role-only chunk, comments, usage and a non-stream body do not.
func TestFirstToken(t *testing.T) {
	role := `data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}` + "\n\n"
	tok := `data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"}}]}` + "\n\n"
	reason := `data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"reasoning_content":"hm"}}]}` + "\n\n"
	usage := `data: {"object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1}}` + "\n\n"
	ep, err := endpoint.Lookup("chat")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		reads []string
		at    int // index of the read that brings it, -1: never
	}{
		{"role first", []string{role, tok}, 1},
		{"in one read", []string{role + tok}, 0},
		{"split mid-event", []string{role + tok[:20], tok[20:]}, 1},
		{"tiny first read", []string{"da", "ta: " + tok[6:]}, 1},
		{"reasoning counts", []string{": keep-alive\n\n", reason}, 1},
		{"usage only", []string{usage, "data: [DONE]\n\n"}, -1},
		{"error event", []string{"event: error\ndata: {\"error\":{\"message\":\"x\"}}\n\n"}, -1},
		{"not a stream", []string{`{"choices":[{"message":{"content":"Hi"}}]}`}, -1},
	} {
		var f FirstToken
		f.Reset(ep)
		var body []byte
		got := -1
		for i, r := range c.reads {
			body = append(body, r...)
			if f.Feed(body) {
				got = i
				break
			}
		}
		if got != c.at {
			t.Errorf("%s: first token in read %d, want %d", c.name, got, c.at)
		}
	}
	// A retry's body starts over.
	var f FirstToken
	f.Reset(ep)
	f.Feed([]byte(role))
	if !f.Feed([]byte(tok)) {
		t.Error("after a retry (shorter body), the new body's first token is missed")
	}
}

// BenchmarkFirstToken: finding the first token allocates nothing once the buffers grew.
func BenchmarkFirstToken(b *testing.B) {
	ep, _ := endpoint.Lookup("chat")
	body := []byte(`data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}` + "\n\n" +
		`data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"}}]}` + "\n\n")
	var f FirstToken
	b.ReportAllocs()
	for b.Loop() {
		f.Reset(ep)
		if !f.Feed(body[:40]) && !f.Feed(body) {
			b.Fatal("no first token")
		}
	}
}

// TestLiveHistoryResponseField: a raw plan's --response-field tells live history where the
// output text is, as it tells analyze: a shape the endpoint cannot detect still gives the
// history its text (and the prefill cap its first token).
func TestLiveHistoryResponseField(t *testing.T) {
	m := &mmapds.Meta{Endpoint: "raw", LiveHistoryMarker: "@@M@@", Streaming: true, Spec: map[string]any{"response-field": "result.answer"}}
	var l Live
	if err := l.Init(m); err != nil {
		t.Fatal(err)
	}
	body := []byte("data: {\"result\":{\"answer\":\"Paris\"}}\n\ndata: {\"result\":{\"answer\":\" is the capital\"}}\n\n")
	if got := string(l.responseText(nil, body)); got != "Paris is the capital" {
		t.Errorf("history text %q, want the response field's text", got)
	}
	var f FirstToken
	f.Reset(l.ep)
	if !f.Feed(body) {
		t.Error("no first token found through the response field")
	}
}
