package driver

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
// i, escaped by internal/jsonwire's rule like every string the plan's bodies hold. In a plan
// with a graph section (agentic workloads: FORK children inherit their parent's conversation)
// the i-th marker is instead filled by the reply of the record the body's i-th reply source
// names (mmapds.EdgeReply). This runs only for flagged records, off the common path.

// Live is the live-history settings of a plan, with the scratch buffers of the one that
// splices (Fresh gives each its own).
type Live struct {
	marker    []byte
	ep        *endpoint.Endpoint
	streaming bool
	// graph is the plan when it has a graph section: markers follow each record's sources.
	graph *mmapds.Plan
	sc    endpoint.SSEScanner
	d     endpoint.Delta
}

// Init reads the live-history settings of a plan with meta m; without a marker, l stays
// disabled.
func (l *Live) Init(m *mmapds.Meta) error {
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

// FollowGraph makes markers follow each record's reply sources in p's graph section.
func (l *Live) FollowGraph(p *mmapds.Plan) { l.graph = p }

// Enabled says the plan has live history.
func (l *Live) Enabled() bool { return l.ep != nil }

// Fresh returns a live state with l's settings and its own scratch buffers.
func (l *Live) Fresh() Live {
	return Live{marker: l.marker, ep: l.ep, streaming: l.streaming, graph: l.graph}
}

// History is a unit's earlier responses, for the markers of its later live-history turns:
// texts[k] answered turn firstTurn+k, or, in a graph plan, record recs[k].
type History struct {
	texts     [][]byte
	recs      []uint32
	firstTurn uint32
}

// Reset empties h (keeping its buffers) for a unit whose first record is turn firstTurn.
func (h *History) Reset(firstTurn uint32) {
	h.texts, h.recs, h.firstTurn = h.texts[:0], h.recs[:0], firstTurn
}

// Add appends the content text of the response body of record rec (see live.responseText),
// into the buffer an earlier unit left in that place when there is one.
func (h *History) Add(l *Live, rec uint32, body []byte) {
	if n := len(h.texts); n < cap(h.texts) {
		h.texts = h.texts[:n+1]
	} else {
		h.texts = append(h.texts, nil)
	}
	t := &h.texts[len(h.texts)-1]
	*t = l.responseText((*t)[:0], body)
	h.recs = append(h.recs[:len(h.texts)-1], rec)
}

// Splice appends body, record rec's, to dst with its markers replaced by h's texts (see
// live.splice and live.spliceSources).
func (h *History) Splice(l *Live, dst, body []byte, rec uint32) []byte {
	if l.graph != nil {
		return l.spliceSources(dst, body, h, rec)
	}
	return l.splice(dst, body, h.texts, h.firstTurn)
}

// spliceSources is splice for a graph plan: the i-th marker of record rec's body takes the
// reply of its i-th reply source; a source with no reply in h (it failed, or it was not sent)
// and a marker past the sources become empty text.
func (l *Live) spliceSources(dst, body []byte, h *History, rec uint32) []byte {
	n := l.graph.GraphNode(int(rec))
	first := n.EdgeFirst + uint32(n.Parents)
	for i := uint32(0); ; i++ {
		j := bytes.Index(body, l.marker)
		if j < 0 {
			return append(dst, body...)
		}
		dst = append(dst, body[:j]...)
		if i < uint32(n.Sources) {
			src := l.graph.Edge(first + i).Record
			for k, r := range h.recs {
				if r == src {
					dst = jsonwire.AppendStringBody(dst, h.texts[k])
					break
				}
			}
		}
		body = body[j+len(l.marker):]
	}
}

// responseText appends to dst the content text of a response body: the concatenated
// content of its SSE events when streaming, of the whole body otherwise. Events the endpoint
// cannot parse are skipped: the history then lacks their text, as a user would see it.
func (l *Live) responseText(dst, body []byte) []byte {
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

// Splice appends body to dst with its markers replaced by the escaped texts of hist, the
// session's earlier responses: hist[k] answered turn firstTurn+k. A marker for a turn with no
// response (it failed, or was not in this run) becomes empty text.
func (l *Live) splice(dst, body []byte, hist [][]byte, firstTurn uint32) []byte {
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
