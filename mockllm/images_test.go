package mockllm

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"testing"
	"time"
)

func TestImages(t *testing.T) {
	o := testOptions()
	o.ITL = 3 * time.Millisecond
	base := startServer(t, o)
	decode := func(t *testing.T, b []byte) (int, int) {
		t.Helper()
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("not a PNG: %v", err)
		}
		return img.Bounds().Dx(), img.Bounds().Dy()
	}
	m := postJSON(t, base+"/v1/images/generations", `{"prompt":"a cat","n":2,"size":"1024x512","response_format":"b64_json"}`)
	data := m["data"].([]any)
	if len(data) != 2 || num(path(m, "usage.input_tokens")) != fakeTok.Count("a cat") {
		t.Fatalf("data %d, usage %v", len(data), m["usage"])
	}
	var first []byte
	for i, d := range data {
		b, err := base64.StdEncoding.DecodeString(str(path(d, "b64_json")))
		if err != nil {
			t.Fatal(err)
		}
		if w, h := decode(t, b); w != 64 || h != 32 {
			t.Errorf("image %d is %dx%d, want 64x32 (1024x512 scaled)", i, w, h)
		}
		if i == 0 {
			first = b
		} else if bytes.Equal(first, b) {
			t.Error("two images of one request are identical")
		}
	}
	m2 := postJSON(t, base+"/v1/images/generations", `{"prompt":"a cat","n":2,"size":"1024x512","response_format":"b64_json"}`)
	if path(m2, "data.0.b64_json") != path(m, "data.0.b64_json") {
		t.Error("same request, different image")
	}
	u := postJSON(t, base+"/v1/images/generations", `{"prompt":"a dog","response_format":"url","size":"256x256"}`)
	url := str(path(u, "data.0.url"))
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	if w, h := decode(t, b); w != 64 || h != 64 {
		t.Errorf("url image %dx%d", w, h)
	}
	// Streaming: partial images, then the completed one, ITL apart.
	retryTiming(t, func() error {
		t0 := time.Now()
		resp = post(t, base+"/v1/images/generations", `{"prompt":"p","stream":true,"partial_images":2}`)
		evs, err := readSSE(resp.Body)
		resp.Body.Close()
		if err != nil || len(evs) != 3 {
			t.Fatalf("%d events, err %v", len(evs), err)
		}
		for i, want := range []string{"image_generation.partial_image", "image_generation.partial_image", "image_generation.completed"} {
			if evs[i].name != want || str(jsonOf(t, evs[i].data)["type"]) != want {
				t.Errorf("event %d: %q", i, evs[i].name)
			}
			raw, _ := base64.StdEncoding.DecodeString(str(jsonOf(t, evs[i].data)["b64_json"]))
			decode(t, raw)
		}
		// A late client can only see events later: the last one
		// arriving 2 ITL after the request shows the server spaced them.
		if d := evs[2].at.Sub(t0); d < 2*o.ITL {
			return fmt.Errorf("last image event after %v, want at least 2 ITL (%v)", d, 2*o.ITL)
		}
		return nil
	})
}
