package plan

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/plan/dataset"
	"github.com/llmbench/llmbench/plan/media"
)

// chatMedia returns the media of the last user message of a chat body: (part type, URL or data).
func chatMedia(t *testing.T, body []byte) [][2]string {
	t.Helper()
	var b struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatal(err)
	}
	var parts []struct {
		Type     string `json:"type"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
		InputAudio struct {
			Data string `json:"data"`
		} `json:"input_audio"`
	}
	if err := json.Unmarshal(b.Messages[len(b.Messages)-1].Content, &parts); err != nil {
		t.Fatalf("last message content is not a part list: %v", err)
	}
	var out [][2]string
	for _, p := range parts[1:] {
		out = append(out, [2]string{p.Type, p.ImageURL.URL + p.InputAudio.Data})
	}
	return out
}

func mediaOptions(t testing.TB) Options {
	o := testOptions(t)
	o.RequestCount = 30
	o.NumDatasetEntries = 10
	o.Media.Image.WidthMean, o.Media.Image.HeightMean, o.Media.Image.WidthStddev, o.Media.Image.BatchSize = 32, 24, 4, 2
	o.Media.Image.Format = "random"
	o.Media.Audio.LengthMean, o.Media.Audio.BatchSize = 0.25, 1
	return o
}

// Two compiles with one seed give byte-identical files, at any worker count; another seed
// other media. Every request records its media, which the body carries, and ISL counts the
// text only.
func TestCompileMediaDeterministic(t *testing.T) {
	var files [][]byte
	for _, workers := range []int{1, 4} {
		o := mediaOptions(t)
		o.Workers = workers
		p, _ := compileOpen(t, o)
		b, err := os.ReadFile(o.Output)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, b)
		if len(p.Meta().Media) != 10 {
			t.Fatalf("%d media entries, want one per dataset entry (10)", len(p.Meta().Media))
		}
		for i := range p.Len() {
			r, body, _ := p.Record(i)
			e := p.Meta().MediaOf(&r)
			if e == nil || e.Images != 2 || e.Audios != 1 || len(e.Items) != 3 || e.AudioSeconds != 0.25 {
				t.Fatalf("record %d media %+v", i, e)
			}
			parts := chatMedia(t, body)
			if len(parts) != 3 || parts[0][0] != "image_url" || parts[2][0] != "input_audio" {
				t.Fatalf("record %d parts %v", i, parts)
			}
			var sum int64
			for j, it := range e.Items {
				data := parts[j][1]
				if it.Kind == "image" {
					var ok bool
					if data, ok = strings.CutPrefix(data, "data:image/"+it.Format+";base64,"); !ok {
						t.Fatalf("record %d image %d: %.40s is not a %s data URL", i, j, parts[j][1], it.Format)
					}
				}
				raw, err := base64.StdEncoding.DecodeString(data)
				if err != nil || len(raw) != it.Bytes {
					t.Fatalf("record %d item %d: %d bytes, entry says %d (%v)", i, j, len(raw), it.Bytes, err)
				}
				k := map[string]media.Kind{"image": media.Image, "audio": media.Audio}[it.Kind]
				if _, err := media.Probe(k, raw); err != nil {
					t.Fatalf("record %d item %d: %v", i, j, err)
				}
				sum += int64(it.Bytes)
			}
			if sum != e.Bytes {
				t.Fatalf("record %d: bytes %d, items sum %d", i, e.Bytes, sum)
			}
		}
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Fatal("two compiles with one seed differ")
	}
	o := mediaOptions(t)
	o.Seed = 9
	if _, err := Compile(o); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(o.Output); bytes.Equal(b, files[0]) {
		t.Fatal("another seed gave the same plan")
	}
	// ISL is the text's: the same as a plan without media.
	text := testOptions(t)
	text.RequestCount, text.NumDatasetEntries = 30, 10
	pt, _ := compileOpen(t, text)
	pm2, _ := compileOpen(t, mediaOptions(t))
	for i := range pt.Len() {
		a, _, _ := pt.Record(i)
		b, _, _ := pm2.Record(i)
		if a.ISL != b.ISL || b.Media == 0 || a.Media != 0 {
			t.Fatalf("record %d: text-only ISL %d media %d, with media ISL %d media %d", i, a.ISL, a.Media, b.ISL, b.Media)
		}
	}
}

// Media an API cannot carry, or broken media flags, are usage errors naming the flag or API.
func TestCompileMediaRefused(t *testing.T) {
	o := mediaOptions(t)
	o.EndpointType = "completions"
	if _, err := Compile(o); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "image inputs are not supported") {
		t.Fatalf("completions with images: %v", err)
	}
	o = mediaOptions(t)
	o.Media.Image.Format = "bmp"
	if _, err := Compile(o); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "--image-format") {
		t.Fatalf("bad format: %v", err)
	}
}

// A custom dataset's media: local paths (relative to the input) are inlined, URLs passed
// through; a missing file names itself.
func TestCompileMediaFromFile(t *testing.T) {
	dir := t.TempDir()
	wav := media.WAV(rand.New(rand.NewPCG(1, 1)), 800, 8000, 16, 1)
	if err := os.WriteFile(filepath.Join(dir, "a.wav"), wav, 0o644); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in.jsonl")
	lines := `{"text": "hear this", "audio": "a.wav", "images": ["https://example.com/cat.png"]}` + "\n"
	if err := os.WriteFile(in, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	o := testOptions(t)
	ds, err := dataset.LoadFile(dataset.FileOptions{Path: in, Type: dataset.TypeSingleTurn, Tokenizer: o.Tokenizer})
	if err != nil {
		t.Fatal(err)
	}
	o.Dataset = ds
	p, _ := compileOpen(t, o)
	r, body, _ := p.Record(0)
	e := p.Meta().MediaOf(&r)
	if e == nil || e.Images != 1 || e.Audios != 1 || e.Items[0].Format != "url" || e.Items[1].Format != "wav" || e.Items[1].Seconds != 0.1 || e.Bytes != int64(len(wav)) {
		t.Fatalf("entry %+v", e)
	}
	parts := chatMedia(t, body)
	if parts[0] != [2]string{"image_url", "https://example.com/cat.png"} || parts[1] != [2]string{"input_audio", base64.StdEncoding.EncodeToString(wav)} {
		t.Fatalf("parts %.200v", parts)
	}
	if err := os.WriteFile(in, []byte(`{"text": "x", "image": "missing.png"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o.Dataset, err = dataset.LoadFile(dataset.FileOptions{Path: in, Type: dataset.TypeSingleTurn, Tokenizer: o.Tokenizer})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Compile(o); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), `image "missing.png"`) {
		t.Fatalf("missing file: %v", err)
	}
}

// BenchmarkCompileMedia compiles 1,000 requests each with its own 512×512 PNG (about
// 1 MiB): compile time per request with media, for docs and the closing note.
func BenchmarkCompileMedia(b *testing.B) {
	for b.Loop() {
		o := testOptions(b)
		o.RequestCount, o.NumDatasetEntries = 1000, 1000
		o.Media.Image.WidthMean, o.Media.Image.HeightMean = 512, 512
		if _, err := Compile(o); err != nil {
			b.Fatal(err)
		}
	}
}

// plan inspect shows each request's media and elides the base64 in the text view.
func TestInspectMedia(t *testing.T) {
	o := mediaOptions(t)
	p, _ := compileOpen(t, o)
	s, err := Summarize(p, 1)
	if err != nil {
		t.Fatal(err)
	}
	if s.Media == nil || s.Media.Requests != 30 || s.Media.Images != 60 || s.Media.Audios != 30 || s.Media.Entries != 10 ||
		s.Requests[0].Media == nil || len(s.Requests[0].Media.Items) != 3 {
		t.Fatalf("summary media %+v, request %+v", s.Media, s.Requests[0].Media)
	}
	var buf bytes.Buffer
	if err := s.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	if !strings.Contains(text, "media      30 profile requests send 60 images, 30 audio clips (7.5 s), 0 videos") ||
		!strings.Contains(text, "base64 chars)") || len(text) > 20000 {
		t.Fatalf("inspect text (%d bytes):\n%.3000s", len(text), text)
	}
	if got := string(elideBase64([]byte(`{"u":"data:x;base64,abc","a":{"input_audio":{"data":"` + strings.Repeat("A", 40) + `"}}`))); got != `{"u":"data:x;base64,abc","a":{"input_audio":{"data":"AAAAAAAAAAAAAAAA…(40 base64 chars)"}}` {
		t.Fatalf("elide: %s", got)
	}
}
