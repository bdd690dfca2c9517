// Package media synthesizes and encodes the images, audio clips and videos of multimodal
// requests, deterministically: the same options, seed and key give the same bytes on any
// machine. Images are encoded with the standard library (image/png, image/jpeg), WAV by
// hand; video and MP3 go through the ffmpeg binary (Debian package "ffmpeg"), at plan time
// only. Probe and ParseDataURL check media bytes that arrive from outside (mockllm, dataset
// files).
package media

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Kind says what a medium is.
type Kind uint8

// The kinds of media.
const (
	Image Kind = iota + 1
	Audio
	Video
)

// String returns "image", "audio" or "video".
func (k Kind) String() string {
	switch k {
	case Image:
		return "image"
	case Audio:
		return "audio"
	case Video:
		return "video"
	}
	return "media?"
}

// Item is one encoded medium of a request.
type Item struct {
	Kind Kind
	// Format is the encoding: png, jpeg, wav, mp3, webm, mp4 (for a file, from its name).
	Format string
	// MIME is the media type of a data URL, e.g. image/png.
	MIME string
	// Data holds the encoded bytes; nil when URL is set.
	Data []byte
	// URL is a remote medium passed through unchanged (dataset inputs naming URLs).
	URL string
	// Width and Height are the pixel size of an image or video frame; 0 when unknown.
	Width, Height int
	// Seconds is the duration of an audio clip or video; 0 when unknown.
	Seconds float64
}

// ImageOptions shape synthetic images (AIPerf's --image-* flags). No image is made while
// WidthMean or HeightMean is 0.
type ImageOptions struct {
	WidthMean, WidthStddev   float64
	HeightMean, HeightStddev float64
	// BatchSize is the number of images per request.
	BatchSize int
	// Format is png, jpeg, or random (png or jpeg, drawn per image).
	Format string
	// Source is noise (random pixels, incompressible) or a directory of images, each
	// resized to the drawn size and re-encoded.
	Source string
	// Sampling picks source files: random-with-replacement, shuffle-cycle or sequential-cycle.
	Sampling string
}

// AudioOptions shape synthetic audio clips (AIPerf's --audio-* flags). No clip is made while
// LengthMean is 0.
type AudioOptions struct {
	// LengthMean and LengthStddev are the clip duration in seconds.
	LengthMean, LengthStddev float64
	// Format is wav or mp3 (mp3 needs ffmpeg with libmp3lame).
	Format string
	// Depths are the bit depths drawn from (8, 16, 24, 32).
	Depths []int
	// SampleRates are the sample rates drawn from, in kHz.
	SampleRates []float64
	// NumChannels is 1 or 2.
	NumChannels int
	// BatchSize is the number of clips per request.
	BatchSize int
}

// VideoOptions shape synthetic videos (AIPerf's --video-* flags). No video is made while
// Width or Height is 0.
type VideoOptions struct {
	Width, Height int
	FPS           float64
	// Duration is the length in seconds.
	Duration float64
	// SynthType is moving_shapes, grid_clock or noise.
	SynthType string
	// Format is webm or mp4.
	Format string
	// Codec is the ffmpeg encoder; "" picks libvpx-vp9 for webm, libx264 for mp4.
	Codec string
	// BatchSize is the number of videos per request.
	BatchSize int
}

// Options are all three.
type Options struct {
	Image ImageOptions
	Audio AudioOptions
	Video VideoOptions
}

// DefaultOptions returns AIPerf's defaults: every kind off, one per request when on, PNG
// noise images, 16-bit 16 kHz mono WAV, 4 fps 5 s WebM (VP9) videos of moving shapes.
func DefaultOptions() Options {
	return Options{
		Image: ImageOptions{BatchSize: 1, Format: "png", Source: "noise", Sampling: "random-with-replacement"},
		Audio: AudioOptions{Format: "wav", Depths: []int{16}, SampleRates: []float64{16}, NumChannels: 1, BatchSize: 1},
		Video: VideoOptions{FPS: 4, Duration: 5, SynthType: "moving_shapes", Format: "webm", BatchSize: 1},
	}
}

// Limits that keep one typo from asking for terabytes.
const (
	maxSide     = 16384
	maxSeconds  = 3600
	maxBatch    = 64
	maxRateKHz  = 384
	maxVideoFPS = 240
)

// Enabled reports whether any kind of media is made.
func (o *Options) Enabled() bool { return o.images() || o.audio() || o.video() }

func (o *Options) images() bool { return o.Image.WidthMean > 0 && o.Image.HeightMean > 0 }
func (o *Options) audio() bool  { return o.Audio.LengthMean > 0 }
func (o *Options) video() bool  { return o.Video.Width > 0 && o.Video.Height > 0 }

// Validate checks the options, naming the flag at fault.
func (o *Options) Validate() error {
	im, au, vi := &o.Image, &o.Audio, &o.Video
	for _, c := range []struct {
		flag string
		v    float64
		max  float64
	}{
		{"image-width-mean", im.WidthMean, maxSide}, {"image-width-stddev", im.WidthStddev, maxSide},
		{"image-height-mean", im.HeightMean, maxSide}, {"image-height-stddev", im.HeightStddev, maxSide},
		{"audio-length-mean", au.LengthMean, maxSeconds}, {"audio-length-stddev", au.LengthStddev, maxSeconds},
		{"video-width", float64(vi.Width), maxSide}, {"video-height", float64(vi.Height), maxSide},
		{"video-duration", vi.Duration, maxSeconds}, {"video-fps", vi.FPS, maxVideoFPS},
	} {
		if math.IsNaN(c.v) || c.v < 0 || c.v > c.max {
			return fmt.Errorf("--%s must be in [0,%g] (got %g)", c.flag, c.max, c.v)
		}
	}
	for _, c := range []struct {
		flag string
		v    int
	}{{"image-batch-size", im.BatchSize}, {"audio-batch-size", au.BatchSize}, {"video-batch-size", vi.BatchSize}} {
		if c.v < 0 || c.v > maxBatch {
			return fmt.Errorf("--%s must be in [0,%d] (got %d)", c.flag, maxBatch, c.v)
		}
	}
	if !slices.Contains([]string{"png", "jpeg", "random"}, im.Format) {
		return fmt.Errorf("--image-format %q: want png, jpeg or random", im.Format)
	}
	if !slices.Contains([]string{"random-with-replacement", "shuffle-cycle", "sequential-cycle"}, im.Sampling) {
		return fmt.Errorf("--image-source-sampling %q: want random-with-replacement, shuffle-cycle or sequential-cycle", im.Sampling)
	}
	if im.Source != "noise" {
		if st, err := os.Stat(im.Source); err != nil || !st.IsDir() {
			return fmt.Errorf("--image-source %q: want noise or a directory of images", im.Source)
		}
	}
	if au.Format != "wav" && au.Format != "mp3" {
		return fmt.Errorf("--audio-format %q: want wav or mp3", au.Format)
	}
	if len(au.Depths) == 0 {
		return errors.New("--audio-depths: want at least one bit depth")
	}
	for _, d := range au.Depths {
		if d != 8 && d != 16 && d != 24 && d != 32 {
			return fmt.Errorf("--audio-depths %d: want 8, 16, 24 or 32", d)
		}
	}
	if len(au.SampleRates) == 0 {
		return errors.New("--audio-sample-rates: want at least one rate (kHz)")
	}
	for _, r := range au.SampleRates {
		if !(r >= 1 && r <= maxRateKHz) || math.Round(r*1000) != r*1000 {
			return fmt.Errorf("--audio-sample-rates %g: want kHz in [1,%d] with a whole number of Hz", r, maxRateKHz)
		}
	}
	if au.NumChannels != 1 && au.NumChannels != 2 {
		return fmt.Errorf("--audio-num-channels %d: want 1 or 2", au.NumChannels)
	}
	if !slices.Contains([]string{"moving_shapes", "grid_clock", "noise"}, vi.SynthType) {
		return fmt.Errorf("--video-synth-type %q: want moving_shapes, grid_clock or noise", vi.SynthType)
	}
	if vi.Format != "webm" && vi.Format != "mp4" {
		return fmt.Errorf("--video-format %q: want webm or mp4", vi.Format)
	}
	if o.video() {
		if vi.FPS <= 0 || vi.Duration <= 0 {
			return fmt.Errorf("--video-fps and --video-duration must be positive (got %g, %g)", vi.FPS, vi.Duration)
		}
		if vi.Width%2 != 0 || vi.Height%2 != 0 {
			return fmt.Errorf("--video-width and --video-height must be even (yuv420p), got %dx%d", vi.Width, vi.Height)
		}
	}
	return nil
}

// Generator makes the synthetic media of requests. Each call is independent of every
// other (its randomness comes from its key), so turns may be generated in any order and in
// parallel. It is safe for concurrent use.
type Generator struct {
	o                           Options
	imageSeed, audioSeed, video uint64
	files                       []string // --image-source directory, sorted
	permSeed                    uint64   // shuffle-cycle: each cycle's permutation is drawn from it
	ffmpeg                      string
}

// NewGenerator returns a generator drawing from the streams of stream (the plan's
// per-component streams: media.image, media.audio, media.video). It checks for ffmpeg when
// videos or MP3 clips are asked for.
func NewGenerator(o Options, stream func(component string) *rand.Rand) (*Generator, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	g := &Generator{o: o,
		imageSeed: stream("media.image").Uint64(), audioSeed: stream("media.audio").Uint64(),
		video: stream("media.video").Uint64(), permSeed: stream("media.image.sampling").Uint64()}
	if (o.video() && o.Video.BatchSize > 0) || (o.audio() && o.Audio.BatchSize > 0 && o.Audio.Format == "mp3") {
		var err error
		if g.ffmpeg, err = FFmpeg(); err != nil {
			return nil, err
		}
	}
	if o.images() && o.Image.Source != "noise" {
		ents, err := os.ReadDir(o.Image.Source)
		if err != nil {
			return nil, fmt.Errorf("--image-source: %w", err)
		}
		for _, e := range ents {
			if e.Type().IsRegular() && imageExt(e.Name()) != "" {
				g.files = append(g.files, filepath.Join(o.Image.Source, e.Name()))
			}
		}
		if len(g.files) == 0 {
			return nil, fmt.Errorf("--image-source %s: no .png, .jpg, .jpeg or .gif file in it", o.Image.Source)
		}
		slices.Sort(g.files)
	}
	return g, nil
}

// PerRequest returns how many images, clips and videos each request gets.
func (g *Generator) PerRequest() (images, audios, videos int) {
	if g.o.images() {
		images = g.o.Image.BatchSize
	}
	if g.o.audio() {
		audios = g.o.Audio.BatchSize
	}
	if g.o.video() {
		videos = g.o.Video.BatchSize
	}
	return images, audios, videos
}

// Turn returns the media of the request with the given key (the dataset turn's index):
// images first, then audio clips, then videos.
func (g *Generator) Turn(key uint64) ([]Item, error) {
	ni, na, nv := g.PerRequest()
	if ni+na+nv == 0 {
		return nil, nil
	}
	// Item j of a kind is that kind's number key·batch+j: unique, and consecutive across
	// turns, which the cycling --image-source-sampling modes walk.
	out := make([]Item, 0, ni+na+nv)
	for j := range ni {
		it, err := g.image(key*uint64(ni) + uint64(j))
		if err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	for j := range na {
		it, err := g.audio(key*uint64(na) + uint64(j))
		if err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	for j := range nv {
		it, err := g.videoItem(key*uint64(nv) + uint64(j))
		if err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, nil
}

// normalInt draws round(N(mean, stddev)) floored at 1.
func normalInt(r *rand.Rand, mean, stddev float64) int {
	v := mean
	if stddev > 0 {
		v += r.NormFloat64() * stddev
	}
	return max(1, int(math.Round(v)))
}

// FFmpeg returns the path of the ffmpeg binary, or a one-line error naming the Debian
// package to install.
func FFmpeg() (string, error) {
	p, err := lookPath("ffmpeg")
	if err != nil {
		return "", errors.New("media: video and mp3 need the ffmpeg binary, which is not on PATH: install it (Debian/Ubuntu: apt-get install ffmpeg)")
	}
	return p, nil
}

// mimeOf returns the media type of a format.
func mimeOf(k Kind, format string) string {
	switch format {
	case "jpeg", "jpg":
		return "image/jpeg"
	case "mp3":
		return "audio/mpeg"
	}
	return k.String() + "/" + format
}

// imageExt returns the format of an image file name, "" when it is not one.
func imageExt(name string) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".png":
		return "png"
	case ".jpg", ".jpeg":
		return "jpeg"
	case ".gif":
		return "gif"
	}
	return ""
}
