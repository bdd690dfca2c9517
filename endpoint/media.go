package endpoint

import (
	"encoding/base64"
	"fmt"
	"github.com/llmbench/llmbench/internal/jsonwire"
)

// Media content parts: images, audio clips and videos attached to a request's last user
// message, rendered as each API expects (docs/endpoints.md "Media"):
//
//	chat, chat_embeddings  {"type":"image_url","image_url":{"url":...}}
//	                       {"type":"input_audio","input_audio":{"data":<base64>,"format":"wav"}}
//	                       {"type":"video_url","video_url":{"url":...}}
//	responses              {"type":"input_image","image_url":...}
//	                       {"type":"input_audio","input_audio":{"data":<base64>,"format":"wav"}}
//	nim_embeddings         image data URLs in the input list, after the texts
//
// Encoded bytes are written as data URLs ("data:image/png;base64,..."), base64 straight into
// the body; a URL is written as given.

// MediaKind says what a Media is.
type MediaKind uint8

// The media kinds.
const (
	MediaImage MediaKind = iota + 1
	MediaAudio
	MediaVideo
)

// Media is one medium of a request.
type Media struct {
	Kind MediaKind
	// MIME is the data URL's media type (image/png, audio/wav, video/webm).
	MIME string
	// Format is the input_audio format (wav, mp3).
	Format string
	// Data is the encoded medium; URL replaces it when set.
	Data []byte
	URL  string
}

var mediaNames = [...]string{"", "image", "audio", "video"}

// appendURL writes the medium as a JSON string: its URL, or a data URL of its bytes.
func (m *Media) appendURL(dst []byte) []byte {
	if m.URL != "" {
		return jsonwire.AppendString(dst, m.URL)
	}
	dst = append(dst, `"data:`...)
	dst = jsonwire.AppendStringBody(dst, m.MIME)
	dst = append(dst, ";base64,"...)
	dst = base64.StdEncoding.AppendEncode(dst, m.Data)
	return append(dst, '"')
}

// appendAudioObject writes {"data":<base64>,"format":...}; an audio URL has no raw bytes,
// so it goes as the data member as given.
func (m *Media) appendAudioObject(dst []byte) []byte {
	dst = append(dst, `{"data":`...)
	if m.URL != "" {
		dst = jsonwire.AppendString(dst, m.URL)
	} else {
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, m.Data)
		dst = append(dst, '"')
	}
	dst = append(dst, `,"format":`...)
	return append(jsonwire.AppendString(dst, m.Format), '}')
}

// partStyle selects the content-part dialect.
type partStyle uint8

const (
	partsChat partStyle = iota
	partsResponses
)

// appendParts writes a content array: the text part, then one part per medium.
func appendParts(dst []byte, text string, media []Media, style partStyle) []byte {
	textType, imageType := `{"type":"text","text":`, `{"type":"image_url","image_url":{"url":`
	if style == partsResponses {
		textType, imageType = `{"type":"input_text","text":`, `{"type":"input_image","image_url":`
	}
	dst = append(dst, '[')
	dst = append(dst, textType...)
	dst = jsonwire.AppendString(dst, text)
	dst = append(dst, '}')
	for i := range media {
		m := &media[i]
		dst = append(dst, ',')
		switch m.Kind {
		case MediaImage:
			dst = append(dst, imageType...)
			dst = m.appendURL(dst)
			if style == partsChat {
				dst = append(dst, '}')
			}
		case MediaAudio:
			dst = append(dst, `{"type":"input_audio","input_audio":`...)
			dst = m.appendAudioObject(dst)
		case MediaVideo:
			dst = append(dst, `{"type":"video_url","video_url":{"url":`...)
			dst = m.appendURL(dst)
			dst = append(dst, '}')
		}
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// mediaTarget returns the index of the message that carries r.Media: the last user
// message, or -1 when there is none (a Prompt-only request).
func mediaTarget(r *Request) int {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return i
		}
	}
	return -1
}

// checkMedia refuses media an API type cannot carry, naming the first such medium.
func (e *Endpoint) checkMedia(r *Request) error {
	for i := range r.Media {
		k := r.Media[i].Kind
		ok := false
		switch e.kind {
		case kindChat:
			ok = k >= MediaImage && k <= MediaVideo
		case kindResponses:
			ok = k == MediaImage || k == MediaAudio
		case kindChatEmbeddings, kindNIMEmbeddings:
			ok = k == MediaImage
		}
		if !ok {
			name := "?"
			if int(k) < len(mediaNames) {
				name = mediaNames[k]
			}
			return fmt.Errorf("%s inputs are not supported by this API type (chat takes images, audio and video; responses images and audio; chat_embeddings and nim_embeddings images)", name)
		}
	}
	return nil
}

// appendNIMImages appends the images' data URLs to an input list that ends with ']'.
func appendNIMImages(dst []byte, media []Media) []byte {
	if len(media) == 0 {
		return dst
	}
	dst = dst[:len(dst)-1]
	for i := range media {
		dst = append(dst, ',')
		dst = media[i].appendURL(dst)
	}
	return append(dst, ']')
}
