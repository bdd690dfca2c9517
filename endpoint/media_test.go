package endpoint

import (
	"encoding/json"
	"strings"
	"testing"
)

// Media parts render as each API expects them, after the text, in the last user message.
func TestRenderMedia(t *testing.T) {
	img := Media{Kind: MediaImage, MIME: "image/png", Data: []byte("PNG")}
	url := Media{Kind: MediaImage, URL: "https://x/cat.jpg"}
	wav := Media{Kind: MediaAudio, MIME: "audio/wav", Format: "wav", Data: []byte("WAV")}
	vid := Media{Kind: MediaVideo, MIME: "video/webm", Data: []byte("VID")}
	msgs := []Message{{Role: "system", Content: "s"}, {Role: "user", Content: "a"}, {Role: "assistant", Content: "b"}, {Role: "user", Content: "look"}}
	for _, c := range []struct {
		ep    string
		req   Request
		want  string
		error string
	}{
		{ep: "chat", req: Request{Model: "m", Messages: msgs, Media: []Media{img, url, wav, vid}},
			want: `{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"data:image/png;base64,UE5H"}},{"type":"image_url","image_url":{"url":"https://x/cat.jpg"}},{"type":"input_audio","input_audio":{"data":"V0FW","format":"wav"}},{"type":"video_url","video_url":{"url":"data:video/webm;base64,VklE"}}]}],"stream":false}`},
		{ep: "chat", req: Request{Prompt: "p", Media: []Media{img}},
			want: `{"messages":[{"role":"user","content":[{"type":"text","text":"p"},{"type":"image_url","image_url":{"url":"data:image/png;base64,UE5H"}}]}],"stream":false}`},
		{ep: "responses", req: Request{Messages: msgs[:2], Media: []Media{img, wav}},
			want: `{"instructions":"s","input":[{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_image","image_url":"data:image/png;base64,UE5H"},{"type":"input_audio","input_audio":{"data":"V0FW","format":"wav"}}]}],"stream":false}`},
		{ep: "chat_embeddings", req: Request{Messages: msgs[1:2], Media: []Media{img}},
			want: `{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"data:image/png;base64,UE5H"}}]}]}`},
		{ep: "nim_embeddings", req: Request{Texts: []string{"t1", "t2"}, Media: []Media{img, url}},
			want: `{"input":["t1","t2","data:image/png;base64,UE5H","https://x/cat.jpg"],"input_type":"query"}`},
		{ep: "responses", req: Request{Prompt: "p", Media: []Media{vid}}, error: "endpoint responses: video inputs are not supported"},
		{ep: "completions", req: Request{Prompt: "p", Media: []Media{img}}, error: "endpoint completions: image inputs are not supported"},
		{ep: "embeddings", req: Request{Prompt: "p", Media: []Media{img}}, error: "image inputs are not supported"},
		{ep: "nim_embeddings", req: Request{Prompt: "p", Media: []Media{wav}}, error: "audio inputs are not supported"},
		{ep: "anthropic_messages", req: Request{Prompt: "p", MaxTokens: 5, Media: []Media{img}}, error: "image inputs are not supported"},
	} {
		e, _ := Lookup(c.ep)
		got, err := e.Render(nil, &c.req)
		if c.error != "" {
			if err == nil || !strings.Contains(err.Error(), c.error) {
				t.Errorf("%s: got %v, want error %q", c.ep, err, c.error)
			}
			continue
		}
		if err != nil || string(got) != c.want || !json.Valid(got) {
			t.Errorf("%s:\n got %s (%v)\nwant %s", c.ep, got, err, c.want)
		}
	}
}

// Rendering a 1 MiB image writes its base64 once, straight into the body.
func TestRenderMediaAllocs(t *testing.T) {
	e, _ := Lookup("chat")
	r := Request{Prompt: "p", Media: []Media{{Kind: MediaImage, MIME: "image/png", Data: make([]byte, 1<<20)}}}
	dst := make([]byte, 0, 2<<20)
	allocs := testing.AllocsPerRun(5, func() {
		if _, err := e.Render(dst[:0], &r); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 2 {
		t.Fatalf("Render allocates %v times per call", allocs)
	}
}

// Usage audio fields come from the prompt and completion details objects.
func TestParseUsageAudio(t *testing.T) {
	e, _ := Lookup("chat")
	var d Delta
	body := `{"object":"chat.completion","choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":300,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":4,"audio_tokens":25},"completion_tokens_details":{"reasoning_tokens":1,"audio_tokens":7}}}`
	if err := e.ParseEvent([]byte(body), &d); err != nil {
		t.Fatal(err)
	}
	u := d.Usage
	if u.PromptAudioTokens != 25 || u.CompletionAudioTokens != 7 || u.CachedPromptTokens != 4 || u.ReasoningTokens != 1 ||
		u.Has&UsagePromptAudio == 0 || u.Has&UsageCompletionAudio == 0 {
		t.Fatalf("%+v", u)
	}
}
