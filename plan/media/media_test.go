package media

import (
	"bytes"
	"errors"
	"image"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func streams(seed uint64) func(string) *rand.Rand {
	return func(c string) *rand.Rand {
		h := uint64(0)
		for _, b := range []byte(c) {
			h = h*131 + uint64(b)
		}
		return rand.New(rand.NewPCG(seed, h))
	}
}

func imageAudio() Options {
	o := DefaultOptions()
	o.Image.WidthMean, o.Image.HeightMean, o.Image.WidthStddev, o.Image.BatchSize = 40, 30, 5, 2
	o.Image.Format = "random"
	o.Audio.LengthMean, o.Audio.Depths, o.Audio.SampleRates = 0.5, []int{8, 16, 24, 32}, []float64{8, 16, 44.1}
	return o
}

// The same seed and key give the same bytes; another key or seed other bytes; every
// item decodes to what the entry says.
func TestGeneratorDeterministic(t *testing.T) {
	g1, err := NewGenerator(imageAudio(), streams(1))
	if err != nil {
		t.Fatal(err)
	}
	g2, _ := NewGenerator(imageAudio(), streams(1))
	g3, _ := NewGenerator(imageAudio(), streams(2))
	for key := range uint64(20) {
		a, err := g1.Turn(key)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := g2.Turn(key)
		c, _ := g3.Turn(key)
		if len(a) != 3 || a[0].Kind != Image || a[1].Kind != Image || a[2].Kind != Audio {
			t.Fatalf("key %d: items %+v", key, a)
		}
		for i := range a {
			if !bytes.Equal(a[i].Data, b[i].Data) {
				t.Fatalf("key %d item %d differs between two generators of one seed", key, i)
			}
			if bytes.Equal(a[i].Data, c[i].Data) {
				t.Fatalf("key %d item %d equal under another seed", key, i)
			}
			info, err := Probe(a[i].Kind, a[i].Data)
			if err != nil {
				t.Fatalf("key %d item %d: %v", key, i, err)
			}
			if info.Format != a[i].Format || info.Width != a[i].Width || info.Height != a[i].Height {
				t.Fatalf("key %d item %d: probe %+v, item %s %dx%d", key, i, info, a[i].Format, a[i].Width, a[i].Height)
			}
			if a[i].Kind == Audio && (info.Seconds != a[i].Seconds || info.Seconds < 0.49 || info.Seconds > 0.51) {
				t.Fatalf("key %d: audio %v s, item says %v", key, info.Seconds, a[i].Seconds)
			}
		}
		if next, _ := g1.Turn(key + 1); bytes.Equal(next[0].Data, a[0].Data) {
			t.Fatalf("keys %d and %d share an image", key, key+1)
		}
	}
}

// Images from a directory are the source files resized and re-encoded; sequential-cycle
// walks them in name order.
func TestImageSourceDirectory(t *testing.T) {
	dir := t.TempDir()
	for i, c := range []byte{10, 200} {
		img := image.NewRGBA(image.Rect(0, 0, 8, 8))
		for p := range img.Pix {
			img.Pix[p] = c
		}
		b, _ := Encode(img, "png", true)
		writeFile(t, filepath.Join(dir, "img"+strconv.Itoa(i)+".png"), b)
	}
	writeFile(t, filepath.Join(dir, "notes.txt"), []byte("not an image"))
	o := DefaultOptions()
	o.Image.WidthMean, o.Image.HeightMean, o.Image.Source, o.Image.Sampling = 4, 2, dir, "sequential-cycle"
	g, err := NewGenerator(o, streams(1))
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range []byte{10, 200, 10} {
		items, err := g.Turn(uint64(key))
		if err != nil {
			t.Fatal(err)
		}
		img, _, err := image.Decode(bytes.NewReader(items[0].Data))
		if err != nil {
			t.Fatal(err)
		}
		r, _, _, _ := img.At(1, 1).RGBA()
		if img.Bounds().Dx() != 4 || img.Bounds().Dy() != 2 || byte(r>>8) != want {
			t.Fatalf("key %d: %v red %d, want 4x2 red %d", key, img.Bounds(), r>>8, want)
		}
	}
	o.Image.Source = t.TempDir()
	if _, err := NewGenerator(o, streams(1)); err == nil || !strings.Contains(err.Error(), "no .png") {
		t.Fatalf("empty source dir: %v", err)
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		edit func(o *Options)
		want string
	}{
		{func(o *Options) { o.Image.Format = "webp" }, "--image-format"},
		{func(o *Options) { o.Image.WidthMean = -1 }, "--image-width-mean"},
		{func(o *Options) { o.Image.Source = "/nonexistent" }, "--image-source"},
		{func(o *Options) { o.Image.Sampling = "x" }, "--image-source-sampling"},
		{func(o *Options) { o.Audio.Depths = []int{12} }, "--audio-depths 12"},
		{func(o *Options) { o.Audio.SampleRates = []float64{0} }, "--audio-sample-rates"},
		{func(o *Options) { o.Audio.NumChannels = 3 }, "--audio-num-channels"},
		{func(o *Options) { o.Audio.Format = "ogg" }, "--audio-format"},
		{func(o *Options) { o.Video.SynthType = "x" }, "--video-synth-type"},
		{func(o *Options) { o.Video.Format = "avi" }, "--video-format"},
		{func(o *Options) { o.Video.Width, o.Video.Height = 33, 32 }, "must be even"},
		{func(o *Options) { o.Image.BatchSize = 65 }, "--image-batch-size"},
	} {
		o := DefaultOptions()
		c.edit(&o)
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want %q, got %v", c.want, err)
		}
	}
	o := DefaultOptions()
	if err := o.Validate(); err != nil || o.Enabled() {
		t.Fatalf("defaults: %v, enabled %v", err, o.Enabled())
	}
}

// Without ffmpeg, video and mp3 fail with one line naming the Debian package.
func TestFFmpegMissing(t *testing.T) {
	old := lookPath
	lookPath = func(string) (string, error) { return "", exec.ErrNotFound }
	defer func() { lookPath = old }()
	o := DefaultOptions()
	o.Video.Width, o.Video.Height = 32, 32
	_, err := NewGenerator(o, streams(1))
	if err == nil || !strings.Contains(err.Error(), "apt-get install ffmpeg") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("got %v", err)
	}
}

func needFFmpeg(t *testing.T, encoder string) {
	t.Helper()
	p, err := FFmpeg()
	if err != nil {
		t.Skip("ffmpeg is not installed (apt-get install ffmpeg): skipping the ffmpeg-encoded media test")
	}
	out, err := exec.Command(p, "-hide_banner", "-encoders").Output()
	if err != nil || !bytes.Contains(out, []byte(" "+encoder+" ")) {
		t.Skipf("this ffmpeg has no %s encoder: skipping", encoder)
	}
}

// Videos of each synth type and format come out of ffmpeg as the container asked for,
// byte-identical for one seed.
func TestVideo(t *testing.T) {
	for _, c := range []struct{ synth, format, encoder string }{
		{"moving_shapes", "webm", "libvpx-vp9"}, {"grid_clock", "mp4", "libx264"}, {"noise", "webm", "libvpx-vp9"},
	} {
		t.Run(c.synth+"/"+c.format, func(t *testing.T) {
			needFFmpeg(t, c.encoder)
			o := DefaultOptions()
			o.Video.Width, o.Video.Height, o.Video.Duration, o.Video.FPS = 32, 24, 1, 4
			o.Video.SynthType, o.Video.Format = c.synth, c.format
			var first []byte
			for range 2 {
				g, err := NewGenerator(o, streams(7))
				if err != nil {
					t.Fatal(err)
				}
				items, err := g.Turn(3)
				if err != nil {
					t.Fatal(err)
				}
				it := items[0]
				if info, err := Probe(Video, it.Data); err != nil || info.Format != c.format || it.Seconds != 1 || it.MIME != "video/"+c.format {
					t.Fatalf("%+v %v", info, err)
				}
				if first != nil && !bytes.Equal(first, it.Data) {
					t.Fatal("two encodes of one seed differ")
				}
				first = it.Data
			}
		})
	}
}

func TestMP3(t *testing.T) {
	needFFmpeg(t, "libmp3lame")
	o := DefaultOptions()
	o.Audio.LengthMean, o.Audio.Format = 1, "mp3"
	g, err := NewGenerator(o, streams(1))
	if err != nil {
		t.Fatal(err)
	}
	items, err := g.Turn(0)
	if err != nil {
		t.Fatal(err)
	}
	info, err := Probe(Audio, items[0].Data)
	if err != nil || info.Format != "mp3" || info.Seconds < 0.8 || info.Seconds > 1.3 {
		t.Fatalf("%+v %v", info, err)
	}
}

func TestProbeRejects(t *testing.T) {
	wav := WAV(rand.New(rand.NewPCG(1, 2)), 100, 8000, 16, 1)
	for _, c := range []struct {
		name string
		kind Kind
		data []byte
		want string
	}{
		{"image garbage", Image, []byte("not a png"), "image does not decode"},
		{"truncated png", Image, pngBytes(t)[:40], "image does not decode"},
		{"wav no data", Audio, wav[:36], "no data chunk"},
		{"wav short data", Audio, wav[:len(wav)-1], "runs past the end"},
		{"wav odd frames", Audio, oddFrames(wav), "whole number of frames"},
		{"audio garbage", Audio, []byte("hello world"), "neither WAV"},
		{"video garbage", Video, []byte("hello world!"), "neither WebM"},
	} {
		_, err := Probe(c.kind, c.data)
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if info, err := Probe(Audio, wav); err != nil || info.Seconds != 100.0/8000 {
		t.Fatalf("%+v %v", info, err)
	}
}

func TestDataURLRoundTrip(t *testing.T) {
	b := pngBytes(t)
	u := string(AppendDataURL(nil, "image/png", b))
	mime, data, err := ParseDataURL(u)
	if err != nil || mime != "image/png" || !bytes.Equal(data, b) {
		t.Fatalf("%q %v", mime, err)
	}
	for _, bad := range []string{"http://x", "data:image/png,abc", "data:image/png;base64", "data:image/png;base64,!!!"} {
		if _, _, err := ParseDataURL(bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func pngBytes(t testing.TB) []byte {
	b, err := Encode(noiseImage(rand.New(rand.NewPCG(1, 1)), 7, 3), "png", false)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func oddFrames(wav []byte) []byte {
	b := bytes.Clone(wav[:len(wav)-1])
	b[40]-- // data length one byte shorter: half a frame
	return b
}

func FuzzParseDataURL(f *testing.F) {
	f.Add("data:image/png;base64,iVBORw0KGgo=")
	f.Add("data:;base64,")
	f.Add("data:audio/wav;base64,UklGRg==")
	f.Fuzz(func(t *testing.T, s string) {
		mime, data, err := ParseDataURL(s)
		if err != nil {
			return
		}
		if back := string(AppendDataURL(nil, mime, data)); back != s {
			// Non-canonical base64 (padding variants) may decode; the re-encoding is canonical.
			if _, d2, err := ParseDataURL(back); err != nil || !bytes.Equal(d2, data) {
				t.Fatalf("round trip of %q failed", s)
			}
		}
	})
}

func FuzzProbe(f *testing.F) {
	f.Add(uint8(1), pngBytes(f))
	f.Add(uint8(2), WAV(rand.New(rand.NewPCG(1, 2)), 10, 8000, 8, 2))
	f.Add(uint8(2), []byte{0xff, 0xfb, 0x90, 0x00, 1, 2, 3})
	f.Add(uint8(3), []byte{0x1a, 0x45, 0xdf, 0xa3, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, k uint8, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		info, err := Probe(Kind(k%4), data)
		if err == nil && (info.Seconds < 0 || info.Width < 0) {
			t.Fatalf("%+v", info)
		}
	})
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
