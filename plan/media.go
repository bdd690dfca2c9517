package plan

import (
	"fmt"

	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/plan/dataset"
	"github.com/llmbench/llmbench/plan/media"
)

// mediaRenderBatch is how many planned requests a round renders when requests carry
// media: each new body holds its media base64-encoded, so a round holds at most this many
// of them (a 1 MiB image per request: about 90 MB), however many requests the plan has.
const mediaRenderBatch = 64

// mediaState is the renderer's media bookkeeping: the synthetic generator, and the entries
// describing each dataset turn's media, written into Meta.Media in order of first use.
type mediaState struct {
	gen     *media.Generator    // nil: no synthetic media
	files   bool                // the input names media
	idx     []uint32            // dataset turn → 1-based Meta.Media index, 0 = none
	entries []mmapds.MediaEntry // Meta.Media
}

// newMediaState sets up media for the dataset: synthetic media only for synthetic plans
// (files name their own, as in AIPerf).
func newMediaState(o *Options, ds *dataset.Dataset, turns int) (mediaState, error) {
	var m mediaState
	if o.Dataset == nil && o.Media.Enabled() {
		g, err := media.NewGenerator(o.Media, Streams(o.Seed))
		if err != nil {
			return m, usagef("plan: %v", err)
		}
		m.gen = g
	}
	for _, c := range ds.Conversations {
		for _, t := range c.Turns {
			if len(t.Media) > 0 {
				m.files = true
				break
			}
		}
		if m.files {
			break
		}
	}
	if m.on() {
		m.idx = make([]uint32, turns)
	}
	return m, nil
}

func (m *mediaState) on() bool { return m.gen != nil || m.files }

// turnMedia returns the media of one dataset turn: the input's (paths read now, URLs
// passed through) or synthetic ones from the turn's key, its index among dataset turns.
func (r *renderer) turnMedia(conv, turn int) ([]media.Item, error) {
	t := &r.ds.Conversations[conv].Turns[turn]
	if len(t.Media) > 0 {
		items := make([]media.Item, len(t.Media))
		for i, ref := range t.Media {
			it, err := media.Load(ref.Kind, ref.Ref, ref.Dir)
			if err != nil {
				return nil, usagef("plan: conversation %d turn %d: %v", conv, turn, err)
			}
			items[i] = it
		}
		return items, nil
	}
	if r.media.gen == nil {
		return nil, nil
	}
	items, err := r.media.gen.Turn(uint64(r.base[conv] + turn))
	if err != nil {
		return nil, fmt.Errorf("plan: conversation %d turn %d: %w", conv, turn, err)
	}
	return items, nil
}

// endpointMedia converts items into the endpoint's parts; the bytes are shared, not copied.
func endpointMedia(items []media.Item) []endpoint.Media {
	if len(items) == 0 {
		return nil
	}
	out := make([]endpoint.Media, len(items))
	for i, it := range items {
		out[i] = endpoint.Media{Kind: endpoint.MediaKind(it.Kind), MIME: it.MIME, Format: it.Format, Data: it.Data, URL: it.URL}
	}
	return out
}

// mediaEntry describes items for Meta.Media.
func mediaEntry(items []media.Item) mmapds.MediaEntry {
	e := mmapds.MediaEntry{Items: make([]mmapds.MediaItem, len(items))}
	for i, it := range items {
		switch it.Kind {
		case media.Image:
			e.Images++
		case media.Audio:
			e.Audios++
			e.AudioSeconds += it.Seconds
		case media.Video:
			e.Videos++
		}
		format := it.Format
		if it.URL != "" {
			format = "url"
		}
		e.Bytes += int64(len(it.Data))
		e.Items[i] = mmapds.MediaItem{Kind: it.Kind.String(), Format: format, Bytes: len(it.Data),
			Width: it.Width, Height: it.Height, Seconds: it.Seconds}
	}
	return e
}
