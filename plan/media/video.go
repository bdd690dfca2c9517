package media

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// lookPath finds a binary on PATH (a variable so tests can hide ffmpeg).
var lookPath = exec.LookPath

// videoItem makes video number key: raw RGB frames of the synth type piped through ffmpeg.
func (g *Generator) videoItem(key uint64) (Item, error) {
	o := &g.o.Video
	r := rand.New(rand.NewPCG(g.video, key))
	frames := max(1, int(math.Round(o.Duration*o.FPS)))
	raw := synthFrames(r, o.SynthType, o.Width, o.Height, frames, o.FPS)
	codec := o.Codec
	if codec == "" {
		codec = map[string]string{"webm": "libvpx-vp9", "mp4": "libx264"}[o.Format]
	}
	args := []string{"-f", "rawvideo", "-pix_fmt", "rgb24", "-s", fmt.Sprintf("%dx%d", o.Width, o.Height),
		"-r", strconv.FormatFloat(o.FPS, 'g', -1, 64), "-i", "pipe:0", "-c:v", codec, "-pix_fmt", "yuv420p"}
	switch codec {
	case "libvpx-vp9", "libvpx":
		args = append(args, "-deadline", "realtime", "-cpu-used", "8", "-b:v", "0", "-crf", "40")
	case "libx264":
		args = append(args, "-preset", "ultrafast")
	}
	data, err := runFFmpeg(g.ffmpeg, raw, o.Format, args...)
	if err != nil {
		return Item{}, fmt.Errorf("video (--video-codec %s, --video-format %s): %w", codec, o.Format, err)
	}
	return Item{Kind: Video, Format: o.Format, MIME: mimeOf(Video, o.Format), Data: data,
		Width: o.Width, Height: o.Height, Seconds: float64(frames) / o.FPS}, nil
}

// synthFrames draws frames w×h RGB24 frames of the synth type.
func synthFrames(r *rand.Rand, kind string, w, h, frames int, fps float64) []byte {
	size := w * h * 3
	out := make([]byte, size*frames)
	switch kind {
	case "noise":
		for i := 0; i < len(out); i += 8 {
			v := r.Uint64()
			for j := 0; j < 8 && i+j < len(out); j++ {
				out[i+j] = byte(v >> (8 * j))
			}
		}
	case "grid_clock":
		for f := range frames {
			p := out[f*size : (f+1)*size]
			cell := max(8, min(w, h)/8)
			for y := range h {
				for x := range w {
					if x%cell == 0 || y%cell == 0 {
						set(p, w, x, y, 200, 200, 200)
					}
				}
			}
			// One hand turning once a minute, and one a second.
			t := float64(f) / fps
			cx, cy, rad := w/2, h/2, float64(min(w, h))/2*0.9
			for _, a := range []float64{t / 60, t} {
				ang := 2 * math.Pi * (a - math.Floor(a))
				for s := 0.0; s < rad; s++ {
					set(p, w, cx+int(s*math.Sin(ang)), cy-int(s*math.Cos(ang)), 255, 64, 64)
				}
			}
		}
	default: // moving_shapes
		type shape struct {
			x, y, vx, vy, s float64
			c               [3]byte
		}
		shapes := make([]shape, 3+r.IntN(3))
		for i := range shapes {
			shapes[i] = shape{x: r.Float64() * float64(w), y: r.Float64() * float64(h),
				vx: (r.Float64() - 0.5) * float64(w) / 2, vy: (r.Float64() - 0.5) * float64(h) / 2,
				s: float64(min(w, h)) * (0.05 + 0.15*r.Float64()), c: [3]byte{byte(r.Uint32()), byte(r.Uint32()), byte(r.Uint32())}}
		}
		for f := range frames {
			p := out[f*size : (f+1)*size]
			t := float64(f) / fps
			for _, s := range shapes {
				x0 := int(mod(s.x+s.vx*t, float64(w)))
				y0 := int(mod(s.y+s.vy*t, float64(h)))
				for y := y0; y < y0+int(s.s); y++ {
					for x := x0; x < x0+int(s.s); x++ {
						set(p, w, x%w, y%h, s.c[0], s.c[1], s.c[2])
					}
				}
			}
		}
	}
	return out
}

func mod(a, m float64) float64 { return a - m*math.Floor(a/m) }

// set paints pixel (x, y) of an RGB24 frame w pixels wide; points outside are dropped.
func set(p []byte, w, x, y int, r, g, b byte) {
	i := (y*w + x) * 3
	if x < 0 || y < 0 || x >= w || i+2 >= len(p) {
		return
	}
	p[i], p[i+1], p[i+2] = r, g, b
}

// runFFmpeg runs ffmpeg on in (stdin) with args, writing format to a temporary file (mp4
// needs a seekable output), and returns the file's bytes. Output flags make the bytes
// depend only on the input and the ffmpeg build: one thread, no metadata, bit-exact muxing.
func runFFmpeg(bin string, in []byte, format string, args ...string) ([]byte, error) {
	if bin == "" {
		var err error
		if bin, err = FFmpeg(); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp("", "llmbench-media-")
	if err != nil {
		return nil, fmt.Errorf("media: %w", err)
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "out."+format)
	full := append([]string{"-hide_banner", "-loglevel", "error", "-y"}, args...)
	full = append(full, "-threads", "1", "-map_metadata", "-1", "-fflags", "+bitexact", "-flags", "+bitexact", "-f", format, out)
	cmd := exec.Command(bin, full...)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
			msg = msg[i+1:]
		}
		return nil, fmt.Errorf("ffmpeg failed (%v): %s", err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return nil, fmt.Errorf("media: %w", err)
	}
	return b, nil
}
