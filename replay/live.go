package replay

import (
	"bytes"
	"fmt"

	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/internal/jsonwire"
	"github.com/llmbench/llmbench/mmapds"
)

// Live conversation history (plan --conversation-history live; docs/plan-format.md). A record
// flagged mmapds.FlagLiveHistory holds a body where the assistant messages are the marker
// Meta.LiveHistoryMarker, inside JSON strings. Before sending it, the runner replaces the i-th
// marker (in body order) with the content text (no quotes) of the session's response to turn
// i, escaped by internal/jsonwire's rule like every string the plan's bodies hold. This runs
// only for flagged records, off the common path.

type live struct {
	marker    []byte
	ep        *endpoint.Endpoint
	streaming bool
	sc        endpoint.SSEScanner
	d         endpoint.Delta
}

func (l *live) init(m *mmapds.Meta) error {
	if m.LiveHistoryMarker == "" {
		return nil
	}
	ep, err := endpoint.Lookup(m.Endpoint)
	if err != nil {
		return fmt.Errorf("live history: %w", err)
	}
	if f := m.ResponseField(); f != "" {
		ep.ResponseField = f // raw and template plans: where the output text is, as analyze reads it
	}
	l.marker, l.ep, l.streaming = []byte(m.LiveHistoryMarker), ep, m.Streaming
	return nil
}

func (l *live) enabled() bool { return l.ep != nil }

// fresh returns a live state with l's settings and its own scratch buffers.
func (l *live) fresh() live { return live{marker: l.marker, ep: l.ep, streaming: l.streaming} }

// history is a unit's earlier responses, for the markers of its later live-history turns:
// texts[k] answered turn firstTurn+k.
type history struct {
	texts     [][]byte
	firstTurn uint32
}

// reset empties h (keeping its buffers) for a unit whose first record is turn firstTurn.
func (h *history) reset(firstTurn uint32) {
	h.texts, h.firstTurn = h.texts[:0], firstTurn
}

// add appends the content text of a response body (see live.responseText), into the
// buffer an earlier unit left in that place when there is one.
func (h *history) add(l *live, body []byte) {
	if n := len(h.texts); n < cap(h.texts) {
		h.texts = h.texts[:n+1]
	} else {
		h.texts = append(h.texts, nil)
	}
	t := &h.texts[len(h.texts)-1]
	*t = l.responseText((*t)[:0], body)
}

// splice appends body to dst with its markers replaced by h's texts (see live.splice).
func (h *history) splice(l *live, dst, body []byte) []byte {
	return l.splice(dst, body, h.texts, h.firstTurn)
}

// responseText appends to dst the content text of a response body: the concatenated
// content of its SSE events when streaming, of the whole body otherwise. Events the endpoint
// cannot parse are skipped: the history then lacks their text, as a user would see it.
func (l *live) responseText(dst, body []byte) []byte {
	l.d.Reset()
	if l.streaming && looksLikeSSE(body) {
		l.sc.Reset()
		l.sc.Feed(body, 0)
		for ev, ok := l.sc.Next(); ok; ev, ok = l.sc.Next() {
			l.ep.ParseEvent(ev.Data, &l.d)
		}
		for ev, ok := l.sc.Flush(); ok; ev, ok = l.sc.Flush() {
			l.ep.ParseEvent(ev.Data, &l.d)
		}
	} else {
		l.ep.ParseEvent(body, &l.d)
	}
	return append(dst, l.d.Content...)
}

// looksLikeSSE reports whether b is an event stream, by the rule analysis applies.
func looksLikeSSE(b []byte) bool { return endpoint.DetectFormat("", b) == endpoint.FormatSSE }

// splice appends body to dst with its markers replaced by the escaped texts of hist, the
// session's earlier responses: hist[k] answered turn firstTurn+k. A marker for a turn with no
// response (it failed, or was not in this run) becomes empty text.
func (l *live) splice(dst, body []byte, hist [][]byte, firstTurn uint32) []byte {
	for i := 0; ; i++ {
		j := bytes.Index(body, l.marker)
		if j < 0 {
			return append(dst, body...)
		}
		dst = append(dst, body[:j]...)
		if h := i - int(firstTurn); h >= 0 && h < len(hist) {
			dst = jsonwire.AppendStringBody(dst, hist[h])
		}
		body = body[j+len(l.marker):]
	}
}
