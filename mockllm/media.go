package mockllm

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"strings"

	"github.com/llmbench/llmbench/plan/media"
)

// Media parts: mockllm accepts the content parts that carry images, audio and video (chat
// image_url, input_audio, video_url; Responses input_image, input_audio; image data URLs in
// an embeddings input list), checks that each decodes (plan/media.Probe: a malformed one is
// a 400 naming the part), and counts prompt tokens for them at MediaCost, so a multimodal
// run has known server-side token counts (docs/mockllm.md "Media").

// MediaCost is the prompt tokens counted per medium on top of the text's tokens.
type MediaCost struct {
	// ImageTokens is counted per image (--image-tokens).
	ImageTokens int
	// AudioTokensPerSecond is counted per second of audio, rounded up per clip
	// (--audio-tokens-per-second); a clip given by URL counts one second.
	AudioTokensPerSecond float64
	// VideoTokens is counted per video (--video-tokens).
	VideoTokens int
}

// DefaultMediaCost is the cost mockllm uses unless told otherwise: 256 tokens per image
// (a 448×448 image in Qwen2-VL), 25 per second of audio (Qwen2-Audio), 1024 per video.
func DefaultMediaCost() MediaCost {
	return MediaCost{ImageTokens: 256, AudioTokensPerSecond: 25, VideoTokens: 1024}
}

// mediaUse counts the media of one request.
type mediaUse struct {
	images, audios, videos int
	audioTokens            int
}

// tokens returns the prompt tokens of u's images and videos (audio is counted per clip as
// it is seen, in audioTokens).
func (c MediaCost) tokens(u *mediaUse) int {
	return u.images*c.ImageTokens + u.videos*c.VideoTokens + u.audioTokens
}

// contentPart is one element of a content array, with every media member any API uses.
type contentPart struct {
	Type       string          `json:"type"`
	Text       *string         `json:"text"`
	ImageURL   json.RawMessage `json:"image_url"` // chat: {"url": ...}; Responses: "..."
	InputAudio *struct {
		Data   string `json:"data"`
		Format string `json:"format"`
	} `json:"input_audio"`
	VideoURL *struct {
		URL string `json:"url"`
	} `json:"video_url"`
}

// add checks the medium of part p (nothing for a text part) and counts it into u.
func (u *mediaUse) add(p *contentPart, field string, cost *MediaCost) error {
	switch {
	case p.ImageURL != nil:
		url, err := imageURLOf(p.ImageURL)
		if err != nil {
			return badf("%s: image_url: %v", field, err)
		}
		if err := checkURL(media.Image, url); err != nil {
			return badf("%s: image: %v", field, err)
		}
		u.images++
	case p.InputAudio != nil:
		data, err := base64.StdEncoding.DecodeString(p.InputAudio.Data)
		if err != nil {
			if strings.HasPrefix(p.InputAudio.Data, "http") { // a URL: not fetched
				u.audios++
				u.audioTokens += int(math.Ceil(cost.AudioTokensPerSecond))
				return nil
			}
			return badf("%s: input_audio.data: not base64: %v", field, err)
		}
		info, err := media.Probe(media.Audio, data)
		if err != nil {
			return badf("%s: input_audio: %v", field, err)
		}
		if f := p.InputAudio.Format; f != "" && f != info.Format {
			return badf("%s: input_audio.format is %q but the data is %s", field, f, info.Format)
		}
		u.audios++
		u.audioTokens += int(math.Ceil(info.Seconds * cost.AudioTokensPerSecond))
	case p.VideoURL != nil:
		if err := checkURL(media.Video, p.VideoURL.URL); err != nil {
			return badf("%s: video_url: %v", field, err)
		}
		u.videos++
	}
	return nil
}

// imageURLOf reads an image_url member: {"url": "..."} (chat) or a string (Responses).
func imageURLOf(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	var s string
	if len(raw) > 0 && raw[0] == '"' {
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var o struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		return "", err
	}
	return o.URL, nil
}

// checkURL accepts an http(s) URL as is (the mock fetches nothing) and a data URL whose
// bytes decode as kind.
func checkURL(k media.Kind, url string) error {
	if strings.HasPrefix(url, "http://") || strings.HasPrefix(url, "https://") {
		return nil
	}
	_, data, err := media.ParseDataURL(url)
	if err != nil {
		return err
	}
	_, err = media.Probe(k, data)
	return err
}

// isImageDataURL reports whether an embeddings input string is an image (NIM embeddings
// put them in the input list), not text to count.
func isImageDataURL(s string) bool { return strings.HasPrefix(s, "data:image/") }
