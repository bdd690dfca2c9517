package mockllm

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"image"
	"image/png"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/plan/media"
)

func testPNG(t testing.TB) []byte {
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 3, 2))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// serve renders r for API ep, posts it to s and returns the status and body.
func serve(t *testing.T, s *Server, ep string, r *endpoint.Request) (int, map[string]any) {
	t.Helper()
	e, _ := endpoint.Lookup(ep)
	body, err := e.Render(nil, r)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, e.Path, bytes.NewReader(body))
	w := httptest.NewRecorder()
	s.ServeHTTP(w, req)
	var out map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
		t.Fatalf("%s: %v: %s", ep, err, w.Body)
	}
	return w.Code, out
}

// Media parts decode or get a 400 naming the part; decoded ones cost their documented
// prompt tokens: per image, per second of audio (rounded up per clip), per video.
func TestMediaParts(t *testing.T) {
	o := testOptions()
	o.Media = MediaCost{ImageTokens: 100, AudioTokensPerSecond: 10, VideoTokens: 1000}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	img := endpoint.Media{Kind: endpoint.MediaImage, MIME: "image/png", Data: testPNG(t)}
	wav := endpoint.Media{Kind: endpoint.MediaAudio, MIME: "audio/wav", Format: "wav",
		Data: media.WAV(rand.New(rand.NewPCG(1, 1)), 8000*3/2, 8000, 16, 1)} // 1.5 s: 15 tokens
	vid := endpoint.Media{Kind: endpoint.MediaVideo, MIME: "video/webm", Data: []byte{0x1a, 0x45, 0xdf, 0xa3, 0, 0, 0, 0}}
	bad := endpoint.Media{Kind: endpoint.MediaImage, MIME: "image/png", Data: []byte("not a png")}
	text := o.Tokenizer.Count("look at this")
	msgs := []endpoint.Message{{Role: "user", Content: "look at this"}}
	for _, c := range []struct {
		name   string
		ep     string
		media  []endpoint.Media
		status int
		prompt int
		audio  int
		err    string
	}{
		{"chat images audio video", "chat", []endpoint.Media{img, img, wav, vid}, 200, text + 200 + 15 + 1000, 15, ""},
		{"chat url", "chat", []endpoint.Media{{Kind: endpoint.MediaImage, URL: "https://example.com/x.png"}}, 200, text + 100, 0, ""},
		{"responses", "responses", []endpoint.Media{img, wav}, 200, text + 100 + 15, 0, ""},
		{"malformed image", "chat", []endpoint.Media{img, bad}, 400, 0, 0, "messages[0].content[2]: image: malformed media: image does not decode"},
		{"malformed audio", "chat", []endpoint.Media{{Kind: endpoint.MediaAudio, Format: "wav", Data: []byte("RIFF....WAVE")}}, 400, 0, 0, "input_audio: malformed media"},
		{"wrong audio format", "chat", []endpoint.Media{{Kind: endpoint.MediaAudio, Format: "mp3", Data: wav.Data}}, 400, 0, 0, `input_audio.format is "mp3" but the data is wav`},
		{"malformed video", "chat", []endpoint.Media{{Kind: endpoint.MediaVideo, MIME: "video/mp4", Data: []byte("xx")}}, 400, 0, 0, "video_url: malformed media"},
	} {
		code, out := serve(t, s, c.ep, &endpoint.Request{Model: "m", Messages: msgs, MaxTokens: 2, Media: c.media})
		if code != c.status {
			t.Errorf("%s: status %d, want %d: %v", c.name, code, c.status, out)
			continue
		}
		if c.status != 200 {
			if msg := str(path(out, "error.message")); !strings.Contains(msg, c.err) {
				t.Errorf("%s: error %q, want %q", c.name, msg, c.err)
			}
			continue
		}
		key := "usage.prompt_tokens"
		if c.ep == "responses" {
			key = "usage.input_tokens"
		}
		if got := num(path(out, key)); got != c.prompt {
			t.Errorf("%s: prompt tokens %d, want %d", c.name, got, c.prompt)
		}
		if c.audio > 0 {
			if got := num(path(out, "usage.prompt_tokens_details.audio_tokens")); got != c.audio {
				t.Errorf("%s: audio tokens %d, want %d", c.name, got, c.audio)
			}
		}
	}
	// NIM embeddings carry images in the input list: checked, and counted per image.
	code, out := serve(t, s, "nim_embeddings", &endpoint.Request{Model: "m", Texts: []string{"look at this"}, Media: []endpoint.Media{img}})
	if code != 200 || num(path(out, "usage.prompt_tokens")) != text+100 {
		t.Fatalf("nim_embeddings: %d %v", code, out["usage"])
	}
	code, _ = serve(t, s, "nim_embeddings", &endpoint.Request{Model: "m", Texts: []string{"x"}, Media: []endpoint.Media{bad}})
	if code != 400 {
		t.Fatalf("nim_embeddings with a broken image: %d", code)
	}
}

// FuzzMediaParts feeds arbitrary content parts (data URLs, audio data) to the part parser:
// it accepts or refuses with a badRequest, never panics, and counts nothing negative.
func FuzzMediaParts(f *testing.F) {
	png64 := base64.StdEncoding.EncodeToString(testPNG(f))
	wav64 := base64.StdEncoding.EncodeToString(media.WAV(rand.New(rand.NewPCG(1, 1)), 10, 8000, 8, 1))
	f.Add(`[{"type":"text","text":"x"},{"type":"image_url","image_url":{"url":"data:image/png;base64,` + png64 + `"}}]`)
	f.Add(`[{"type":"input_image","image_url":"data:image/png;base64,` + png64 + `"}]`)
	f.Add(`[{"type":"input_audio","input_audio":{"data":"` + wav64 + `","format":"wav"}}]`)
	f.Add(`[{"type":"video_url","video_url":{"url":"data:video/webm;base64,GkXfowAA"}}]`)
	f.Add(`[{"type":"image_url","image_url":{"url":"https://x"}}]`)
	cost := DefaultMediaCost()
	f.Fuzz(func(t *testing.T, content string) {
		if len(content) > 1<<16 {
			return
		}
		var mu mediaUse
		_, err := textOf(json.RawMessage(content), "content", &mu, &cost)
		var br *badRequest
		if err != nil && !errors.As(err, &br) {
			t.Fatalf("%q: error %v is not a bad request", content, err)
		}
		if mu.images < 0 || mu.audioTokens < 0 || cost.tokens(&mu) < 0 {
			t.Fatalf("negative counts %+v", mu)
		}
	})
}
