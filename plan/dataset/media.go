package dataset

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/llmbench/llmbench/plan/media"
)

// maxMediaPerTurn bounds the media one record names.
const maxMediaPerTurn = 64

// mediaRefs reads the media members of a custom record, as AIPerf's single_turn and
// multi_turn formats name them: image, audio, video (one string) and images, audios,
// videos (a list of strings, or one string). Each is a local path (read and base64-inlined
// when the plan is compiled) or an http(s) or data URL (passed through). Order: images,
// then audio, then video.
func mediaRefs(rec *turnRecord) ([]MediaRef, error) {
	var out []MediaRef
	for _, m := range []struct {
		name string
		kind media.Kind
		raw  json.RawMessage
	}{{"image", media.Image, rec.Image}, {"images", media.Image, rec.Images},
		{"audio", media.Audio, rec.Audio}, {"audios", media.Audio, rec.Audios},
		{"video", media.Video, rec.Video}, {"videos", media.Video, rec.Videos}} {
		if isNull(m.raw) {
			continue
		}
		var one string
		var many []string
		switch {
		case json.Unmarshal(m.raw, &one) == nil:
			many = []string{one}
		case json.Unmarshal(m.raw, &many) == nil:
		default:
			return nil, fmt.Errorf("%s: want a path or URL, or a list of them", m.name)
		}
		for i, ref := range many {
			if strings.TrimSpace(ref) == "" {
				return nil, fmt.Errorf("%s[%d]: empty path", m.name, i)
			}
			out = append(out, MediaRef{Kind: m.kind, Ref: ref})
		}
	}
	if len(out) > maxMediaPerTurn {
		return nil, fmt.Errorf("%d media in one record: at most %d", len(out), maxMediaPerTurn)
	}
	return out, nil
}

// mediaDir is where relative media paths of the input start: the input file's folder (or
// the input folder itself).
func (l *loader) mediaDir() string {
	if st, err := os.Stat(l.opts.Path); err == nil && st.IsDir() {
		return l.opts.Path
	}
	return filepath.Dir(l.opts.Path)
}
