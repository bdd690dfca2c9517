package replay

import (
	"bytes"
	"fmt"
	"unicode/utf8"

	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/mmapds"
)

// Live conversation history (plan --conversation-history live; docs/plan-format.md). A record
// flagged mmapds.FlagLiveHistory holds a body where the assistant messages are the marker
// Meta.LiveHistoryMarker, inside JSON strings. Before sending it, the runner replaces the i-th
// marker (in body order) with the JSON-string-escaped content text (no quotes) of the
// session's response to turn i. This runs only for flagged records, off the common path.

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
	l.marker, l.ep, l.streaming = []byte(m.LiveHistoryMarker), ep, m.Streaming
	return nil
}

func (l *live) enabled() bool { return l.ep != nil }

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
			dst = appendJSONEscaped(dst, hist[h])
		}
		body = body[j+len(l.marker):]
	}
}

// appendJSONEscaped appends s escaped for the inside of a JSON string; invalid UTF-8 becomes
// U+FFFD so the body stays valid JSON.
func appendJSONEscaped(dst, s []byte) []byte {
	const hex = "0123456789abcdef"
	for len(s) > 0 {
		c := s[0]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
			default:
				dst = append(dst, c)
			}
			s = s[1:]
			continue
		}
		r, n := utf8.DecodeRune(s)
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, `\ufffd`...)
		} else if r == '\u2028' || r == '\u2029' {
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&15])
		} else {
			dst = append(dst, s[:n]...)
		}
		s = s[n:]
	}
	return dst
}
