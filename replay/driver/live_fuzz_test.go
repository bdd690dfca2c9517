package driver

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/llmbench/llmbench/internal/jsonwire"
	"github.com/llmbench/llmbench/mmapds"
)

// FuzzSplice: live history splicing over any body, marker and responses. The result is the
// body with the i-th marker replaced by response i-firstTurn escaped (or nothing), appended
// to what dst held; every replacement is the inside of a JSON string that decodes to the
// response text (invalid UTF-8 as U+FFFD, byte by byte).
func FuzzSplice(f *testing.F) {
	f.Add([]byte(`{"messages":[{"role":"assistant","content":"@@"},{"role":"user","content":"q"}]}`), []byte("@@"), []byte("hi \"there\"\n"), []byte("\x00\xff\u2028"), uint8(0))
	f.Add([]byte(`@@@@@`), []byte("@@"), []byte(`@@`), []byte(""), uint8(1))
	f.Add([]byte(`no marker`), []byte("<<LIVE>>"), []byte("x"), []byte("y"), uint8(3))
	f.Add([]byte(`a<<LIVE>>b<<LIVE>>c`), []byte("<<LIVE>>"), []byte("\\"), []byte("\t\r"), uint8(0))
	f.Add([]byte(`{"content":"@@"}`), []byte("@@"), []byte("\b\f<&>"), []byte("\u2029"), uint8(0))
	f.Fuzz(func(t *testing.T, body, marker, h0, h1 []byte, firstTurn uint8) {
		if len(marker) == 0 {
			return // init never sets an empty marker
		}
		l := Live{marker: marker}
		hist := [][]byte{h0, h1}
		prefix := []byte("prefix:")
		got := l.splice(append([]byte(nil), prefix...), body, hist, uint32(firstTurn))
		if !bytes.HasPrefix(got, prefix) {
			t.Fatalf("splice lost dst: %q", got)
		}
		parts := bytes.Split(body, marker)
		want := append([]byte(nil), prefix...)
		for i, p := range parts {
			if i > 0 {
				if h := i - 1 - int(firstTurn); h >= 0 && h < len(hist) {
					want = jsonwire.AppendStringBody(want, hist[h])
				}
			}
			want = append(want, p...)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("splice(%q, marker %q, turn %d) = %q; want %q", body, marker, firstTurn, got, want)
		}
		for _, h := range hist {
			esc := jsonwire.AppendStringBody([]byte{'"'}, h)
			esc = append(esc, '"')
			var s string
			if err := json.Unmarshal(esc, &s); err != nil {
				t.Fatalf("escaped %q is not a JSON string: %q: %v", h, esc, err)
			}
			if w := string([]rune(string(h))); s != w {
				t.Fatalf("escaped %q decodes to %q; want %q", h, s, w)
			}
			// The spliced text is what encoding/json writes (HTML escaping off), as in
			// every other string of the plan's bodies.
			var std bytes.Buffer
			enc := json.NewEncoder(&std)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(string(h)); err != nil {
				t.Fatal(err)
			}
			if w := bytes.TrimSuffix(std.Bytes(), []byte("\n")); !bytes.Equal(esc, w) {
				t.Fatalf("escaped %q is %s; encoding/json writes %s", h, esc, w)
			}
		}
	})
}

// FuzzResponseText: the history text of any response body, streamed or not, never panics;
// looksLikeSSE ignores leading blank space; and a chat stream built from a text gives back
// exactly that text, however its events are cut.
func FuzzResponseText(f *testing.F) {
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n"), "hello world", uint8(3))
	f.Add([]byte(`{"choices":[{"message":{"role":"assistant","content":"whole"}}]}`), "", uint8(0))
	f.Add([]byte(": keepalive\n\nevent: x\ndata: {}\n\n"), "a\nb\"c", uint8(1))
	f.Add([]byte("\r\n\t data:"), "\u00e9\u2028", uint8(7))
	f.Fuzz(func(t *testing.T, body []byte, text string, parts uint8) {
		var l Live
		if err := l.Init(&mmapds.Meta{Endpoint: "chat", Streaming: true, LiveHistoryMarker: "@@"}); err != nil {
			t.Fatal(err)
		}
		l.responseText(nil, body)
		// (A byte order mark counts only at the very start, so blank space before one changes
		// what the body is.)
		if !bytes.HasPrefix(body, []byte("\xef\xbb\xbf")) && looksLikeSSE(body) != looksLikeSSE(append([]byte(" \r\n\t"), body...)) {
			t.Fatalf("looksLikeSSE(%q) depends on leading blank space", body)
		}
		if !looksLikeSSE(append([]byte("data:"), body...)) {
			t.Fatal(`"data:" is not SSE`)
		}
		if !utf8.ValidString(text) {
			return
		}
		// The text in up to parts+1 content events, then [DONE].
		var stream []byte
		n := int(parts%4) + 1
		runes := []rune(text)
		for i := 0; i < n; i++ {
			piece := string(runes[i*len(runes)/n : (i+1)*len(runes)/n])
			c, _ := json.Marshal(piece)
			stream = append(stream, `data: {"choices":[{"index":0,"delta":{"content":`...)
			stream = append(stream, c...)
			stream = append(stream, "}}]}\n\n"...)
		}
		stream = append(stream, "data: [DONE]\n\n"...)
		if got := l.responseText([]byte("x"), stream); string(got) != "x"+text {
			t.Fatalf("responseText of a stream of %q = %q", text, got)
		}
	})
}
