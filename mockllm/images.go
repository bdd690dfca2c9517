package mockllm

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/llmbench/llmbench/internal/jsonwire"
)

// imageContentPrefix is the path under which url-format image answers are served.
const imageContentPrefix = "/v1/images/content/"

// maxImageSide caps generated images: they stand in for real ones, and
// small PNGs keep responses and CPU use small.
const maxImageSide = 64

// images serves OpenAI image generation (b64_json or url; streaming
// with partial images).
func (s *Server) images(r *http.Request, body []byte, h uint64) (*prerendered, error) {
	var b struct {
		Prompt         *string     `json:"prompt"`
		N              json.Number `json:"n"`
		Size           string      `json:"size"`
		ResponseFormat string      `json:"response_format"`
		Stream         bool        `json:"stream"`
		PartialImages  json.Number `json:"partial_images"`
		Quality        string      `json:"quality"`
		Background     string      `json:"background"`
		OutputFormat   string      `json:"output_format"`
	}
	if err := decodeJSON("images", body, &b); err != nil {
		return nil, err
	}
	if b.Prompt == nil {
		return nil, badf("images: prompt: required")
	}
	n, err := optInt(b.N, "images: n", 1)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		n = 1
	}
	if n > 10 {
		return nil, badf("images: n: at most 10")
	}
	partials, err := optInt(b.PartialImages, "images: partial_images", 0)
	if err != nil || partials > 3 {
		return nil, badf("images: partial_images: want 0 to 3")
	}
	w, hgt, err := parseImageSize(b.Size)
	if err != nil {
		return nil, err
	}
	switch b.ResponseFormat {
	case "", "b64_json", "url":
	default:
		return nil, badf("images: response_format: want \"b64_json\" or \"url\", got %q", b.ResponseFormat)
	}
	switch b.OutputFormat {
	case "", "png":
	default:
		return nil, badf("images: output_format: only \"png\" is served, got %q", b.OutputFormat)
	}
	if b.Stream && b.ResponseFormat == "url" {
		return nil, badf("images: streaming returns b64_json only")
	}
	tokens := s.opts.Tokenizer.Count(*b.Prompt)
	outTokens := w * hgt / 16 // stand-in for image tokens
	size := b.Size
	if size == "" {
		size = "auto"
	}
	usage := func(out []byte, images int) []byte {
		out = append(out, `"usage":{"total_tokens":`...)
		out = strconv.AppendInt(out, int64(tokens+images*outTokens), 10)
		out = append(out, `,"input_tokens":`...)
		out = strconv.AppendInt(out, int64(tokens), 10)
		out = append(out, `,"output_tokens":`...)
		out = strconv.AppendInt(out, int64(images*outTokens), 10)
		out = append(out, `,"input_tokens_details":{"text_tokens":`...)
		out = strconv.AppendInt(out, int64(tokens), 10)
		return append(out, `,"image_tokens":0}}`...)
	}
	created := time.Now().Unix()
	if b.Stream {
		var events [][]byte
		for i := range n {
			key := mix(s.opts.Seed, h, uint64(i))
			for p := range partials {
				ev := []byte("event: image_generation.partial_image\ndata: ")
				ev = append(ev, `{"type":"image_generation.partial_image","b64_json":"`...)
				ev = base64.StdEncoding.AppendEncode(ev, renderPNG(key, w, hgt, p+1, partials+1))
				ev = append(ev, `","created_at":`...)
				ev = strconv.AppendInt(ev, created, 10)
				ev = append(ev, `,"size":`...)
				ev = jsonwire.AppendString(ev, size)
				ev = append(ev, `,"output_format":"png","partial_image_index":`...)
				ev = strconv.AppendInt(ev, int64(p), 10)
				ev = append(ev, "}\n\n"...)
				events = append(events, ev)
			}
			ev := []byte("event: image_generation.completed\ndata: ")
			ev = append(ev, `{"type":"image_generation.completed","b64_json":"`...)
			ev = base64.StdEncoding.AppendEncode(ev, renderPNG(key, w, hgt, 1, 1))
			ev = append(ev, `","created_at":`...)
			ev = strconv.AppendInt(ev, created, 10)
			ev = append(ev, `,"size":`...)
			ev = jsonwire.AppendString(ev, size)
			ev = append(ev, `,"output_format":"png",`...)
			ev = usage(ev, 1)
			ev = append(ev, "}\n\n"...)
			events = append(events, ev)
		}
		return &prerendered{events: events, tokens: tokens}, nil
	}
	out := []byte(`{"created":`)
	out = strconv.AppendInt(out, created, 10)
	out = append(out, `,"data":[`...)
	for i := range n {
		key := mix(s.opts.Seed, h, uint64(i))
		if i > 0 {
			out = append(out, ',')
		}
		if b.ResponseFormat == "url" {
			out = append(out, `{"url":"http://`...)
			out = jsonwire.AppendStringBody(out, r.Host)
			out = append(out, imageContentPrefix...)
			out = appendHex(out, key)
			out = append(out, '-')
			out = strconv.AppendInt(out, int64(w), 10)
			out = append(out, 'x')
			out = strconv.AppendInt(out, int64(hgt), 10)
			out = append(out, `.png"`...)
		} else {
			out = append(out, `{"b64_json":"`...)
			out = base64.StdEncoding.AppendEncode(out, renderPNG(key, w, hgt, 1, 1))
			out = append(out, '"')
		}
		out = append(out, `,"revised_prompt":`...)
		out = jsonwire.AppendString(out, *b.Prompt)
		out = append(out, '}')
	}
	out = append(out, `],`...)
	out = usage(out, n)
	out = append(out, '}')
	return &prerendered{body: out, tokens: tokens}, nil
}

// parseImageSize reads "WxH" (or "auto"/"") and scales it down so that
// neither side exceeds maxImageSide, keeping the aspect ratio.
func parseImageSize(size string) (int, int, error) {
	if size == "" || size == "auto" {
		return maxImageSide, maxImageSide, nil
	}
	ws, hs, ok := strings.Cut(size, "x")
	w, err1 := strconv.Atoi(ws)
	h, err2 := strconv.Atoi(hs)
	if !ok || err1 != nil || err2 != nil || w < 1 || h < 1 || w > 16384 || h > 16384 {
		return 0, 0, badf("images: size: want \"WIDTHxHEIGHT\" (e.g. 1024x1024) or \"auto\", got %q", size)
	}
	if w > maxImageSide || h > maxImageSide {
		scale := float64(maxImageSide) / float64(max(w, h))
		w = max(1, int(float64(w)*scale))
		h = max(1, int(float64(h)*scale))
	}
	return w, h, nil
}

// renderPNG draws a deterministic gradient picture for key; step/of
// fades it in for partial images.
func renderPNG(key uint64, w, h, step, of int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	r0, g0, b0 := uint8(key), uint8(key>>8), uint8(key>>16)
	r1, g1, b1 := uint8(key>>24), uint8(key>>32), uint8(key>>40)
	for y := range h {
		for x := range w {
			fx := float64(x) / float64(max(w-1, 1))
			fy := float64(y) / float64(max(h-1, 1))
			lerp := func(a, b uint8, f float64) uint8 { return uint8(float64(a)*(1-f) + float64(b)*f) }
			img.SetNRGBA(x, y, color.NRGBA{lerp(r0, r1, fx), lerp(g0, g1, fy), lerp(b0, b1, (fx+fy)/2), uint8(255 * step / of)})
		}
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	_ = enc.Encode(&buf, img) // cannot fail on a bytes.Buffer
	return buf.Bytes()
}

// serveImageContent serves the PNG a "url" response points to; the name
// encodes everything needed to draw it again.
func (s *Server) serveImageContent(w http.ResponseWriter, r *http.Request, _ apiKind, _ int64) {
	name := strings.TrimPrefix(r.URL.Path, imageContentPrefix)
	var key uint64
	var iw, ih int
	if n, err := fmt.Sscanf(name, "%16x-%dx%d.png", &key, &iw, &ih); err != nil || n != 3 ||
		iw < 1 || ih < 1 || iw > maxImageSide || ih > maxImageSide {
		writeError(w, styleOpenAI, http.StatusNotFound, "not_found_error", "mockllm: no image "+name)
		return
	}
	png := renderPNG(key, iw, ih, 1, 1)
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Content-Length", strconv.Itoa(len(png)))
	if r.Method != http.MethodHead {
		_, _ = w.Write(png)
	}
}
