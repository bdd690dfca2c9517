package media

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"strings"
)

// ErrMalformed is wrapped by every error about media bytes or data URLs that do not decode.
var ErrMalformed = errors.New("malformed media")

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// AppendDataURL appends "data:MIME;base64,<data>" to dst.
func AppendDataURL(dst []byte, mime string, data []byte) []byte {
	dst = append(dst, "data:"...)
	dst = append(dst, mime...)
	dst = append(dst, ";base64,"...)
	return base64.StdEncoding.AppendEncode(dst, data)
}

// ParseDataURL splits a base64 data URL ("data:image/png;base64,....") into its media type
// and decoded bytes.
func ParseDataURL(s string) (mime string, data []byte, err error) {
	rest, ok := strings.CutPrefix(s, "data:")
	if !ok {
		return "", nil, malformed("not a data URL (want data:<type>;base64,...)")
	}
	head, payload, ok := strings.Cut(rest, ",")
	if !ok {
		return "", nil, malformed("data URL has no comma")
	}
	mime, ok = strings.CutSuffix(head, ";base64")
	if !ok {
		return "", nil, malformed("data URL is not base64")
	}
	if data, err = base64.StdEncoding.DecodeString(payload); err != nil {
		return "", nil, malformed("data URL payload: %v", err)
	}
	return mime, data, nil
}

// maxProbePixels bounds the images Probe decodes (an 8192×8192 image), so a small file
// declaring a huge size cannot make it allocate gigabytes.
const maxProbePixels = 1 << 26

// Info is what Probe learned about media bytes.
type Info struct {
	Format        string
	Width, Height int
	// Seconds is the duration of WAV audio (exact) or MP3 (estimated from the first frame's
	// bit rate); 0 for video.
	Seconds float64
}

// Probe checks that data is a medium of kind k that decodes: a PNG, JPEG or GIF image
// (fully decoded), a PCM WAV or MP3 clip, a WebM or MP4 video (container signature). Errors
// wrap ErrMalformed.
func Probe(k Kind, data []byte) (Info, error) {
	switch k {
	case Image:
		cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
		if err != nil {
			return Info{}, malformed("image does not decode: %v", err)
		}
		if int64(cfg.Width)*int64(cfg.Height) > maxProbePixels {
			return Info{}, malformed("image is %dx%d: over the %d-pixel limit", cfg.Width, cfg.Height, maxProbePixels)
		}
		img, format, err := image.Decode(bytes.NewReader(data))
		if err != nil {
			return Info{}, malformed("image does not decode: %v", err)
		}
		b := img.Bounds()
		return Info{Format: format, Width: b.Dx(), Height: b.Dy()}, nil
	case Audio:
		if bytes.HasPrefix(data, []byte("RIFF")) {
			return probeWAV(data)
		}
		return probeMP3(data)
	case Video:
		switch {
		case len(data) >= 4 && bytes.Equal(data[:4], []byte{0x1a, 0x45, 0xdf, 0xa3}):
			return Info{Format: "webm"}, nil
		case len(data) >= 12 && string(data[4:8]) == "ftyp":
			return Info{Format: "mp4"}, nil
		}
		return Info{}, malformed("video is neither WebM (EBML) nor MP4 (ftyp)")
	}
	return Info{}, malformed("unknown media kind %d", k)
}

// probeWAV walks the RIFF chunks of a WAV file: a PCM fmt chunk, then a data chunk whose
// length is a whole number of frames.
func probeWAV(b []byte) (Info, error) {
	le := binary.LittleEndian
	if len(b) < 12 || string(b[8:12]) != "WAVE" {
		return Info{}, malformed("RIFF file is not WAVE")
	}
	var rate, align uint32
	haveFmt := false
	for p := 12; p+8 <= len(b); {
		id, n := string(b[p:p+4]), int(le.Uint32(b[p+4:]))
		body := b[p+8:]
		if n < 0 || n > len(body) {
			return Info{}, malformed("WAV chunk %q runs past the end", id)
		}
		body = body[:n]
		switch id {
		case "fmt ":
			if n < 16 {
				return Info{}, malformed("WAV fmt chunk too short")
			}
			if tag := le.Uint16(body); tag != 1 && tag != 3 && tag != 0xfffe {
				return Info{}, malformed("WAV format tag %d is not PCM", tag)
			}
			ch, depth := le.Uint16(body[2:]), le.Uint16(body[14:])
			rate, align = le.Uint32(body[4:]), uint32(le.Uint16(body[12:]))
			if ch == 0 || rate == 0 || depth == 0 || align != uint32(ch)*uint32((depth+7)/8) {
				return Info{}, malformed("WAV fmt chunk is inconsistent (channels %d, rate %d, depth %d, align %d)", ch, rate, depth, align)
			}
			haveFmt = true
		case "data":
			if !haveFmt {
				return Info{}, malformed("WAV data chunk before its fmt chunk")
			}
			if uint32(n)%align != 0 {
				return Info{}, malformed("WAV data is not a whole number of frames")
			}
			return Info{Format: "wav", Seconds: float64(uint32(n)/align) / float64(rate)}, nil
		}
		p += 8 + n + n%2
	}
	return Info{}, malformed("WAV file has no data chunk")
}

// mp3Rates are the bit rates (kbit/s) of MPEG-1 Layer III, by header index.
var mp3Rates = [16]int{0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 0}

// mp3RatesV2 are the bit rates of MPEG-2 and 2.5 Layer III.
var mp3RatesV2 = [16]int{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, 0}

// probeMP3 finds the first MPEG audio frame header (after an ID3v2 tag) and estimates the
// duration from its bit rate.
func probeMP3(b []byte) (Info, error) {
	p := 0
	if len(b) >= 10 && string(b[:3]) == "ID3" {
		p = 10 + (int(b[6]&0x7f)<<21 | int(b[7]&0x7f)<<14 | int(b[8]&0x7f)<<7 | int(b[9]&0x7f))
	}
	if p+4 > len(b) || b[p] != 0xff || b[p+1]&0xe0 != 0xe0 {
		return Info{}, malformed("audio is neither WAV (RIFF) nor MP3 (frame sync)")
	}
	kbps := mp3Rates[b[p+2]>>4]
	if b[p+1]>>3&3 != 3 { // MPEG-2 and 2.5 (sample rates up to 24 kHz)
		kbps = mp3RatesV2[b[p+2]>>4]
	}
	if kbps == 0 {
		return Info{}, malformed("MP3 frame header has an invalid bit rate")
	}
	return Info{Format: "mp3", Seconds: float64(len(b)-p) * 8 / float64(kbps*1000)}, nil
}

// IsURL reports whether an input's media reference is passed through as a URL (http,
// https or data) rather than read from a file.
func IsURL(ref string) bool {
	return strings.HasPrefix(ref, "http://") || strings.HasPrefix(ref, "https://") || strings.HasPrefix(ref, "data:")
}

// Load reads a medium a dataset names: a URL (http, https or data) is passed through
// unchanged, a local path is read and checked with Probe (base64-inlined when rendered).
// Relative paths are taken from dir.
func Load(k Kind, ref, dir string) (Item, error) {
	if IsURL(ref) {
		return Item{Kind: k, URL: ref}, nil
	}
	path := ref
	if !filepath.IsAbs(path) && dir != "" {
		path = filepath.Join(dir, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Item{}, fmt.Errorf("%s %q: %w", k, ref, err)
	}
	info, err := Probe(k, data)
	if err != nil {
		return Item{}, fmt.Errorf("%s %s: %w", k, path, err)
	}
	return Item{Kind: k, Format: info.Format, MIME: mimeOf(k, info.Format), Data: data,
		Width: info.Width, Height: info.Height, Seconds: info.Seconds}, nil
}
