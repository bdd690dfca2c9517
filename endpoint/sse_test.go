package endpoint

import (
	"bytes"
	"fmt"
	"testing"
)

type ev struct{ name, data string }

// refEvents is a plain whole-input reading of the WHATWG event-stream rules (plus the
// end-of-stream dispatch Flush adds), the reference the incremental scanner must match.
func refEvents(in []byte) []ev {
	in = bytes.TrimPrefix(in, bom)
	var out []ev
	var data, name []byte
	inEvent := false
	process := func(line []byte) {
		if len(line) == 0 {
			if inEvent && len(data) > 0 {
				out = append(out, ev{string(name), string(data[:len(data)-1])})
			}
			data, name, inEvent = nil, nil, false
			return
		}
		if line[0] == ':' {
			return
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			value = bytes.TrimPrefix(value, []byte(" "))
		}
		inEvent = true
		switch string(field) {
		case "data":
			data = append(append(data, value...), '\n')
		case "event":
			name = append([]byte(nil), value...)
		}
	}
	for len(in) > 0 {
		i := bytes.IndexAny(in, "\r\n")
		if i < 0 {
			process(in)
			break
		}
		process(in[:i])
		if in[i] == '\r' && i+1 < len(in) && in[i+1] == '\n' {
			i++
		}
		in = in[i+1:]
	}
	process(nil) // Flush
	return out
}

// feedAll runs the scanner over the reads and Flush, collecting events.
func feedAll(t testing.TB, reads [][]byte) ([]ev, []Event) {
	var sc SSEScanner
	var evs []ev
	var raw []Event
	collect := func(e Event) {
		evs = append(evs, ev{string(e.Name), string(e.Data)})
		raw = append(raw, Event{ReadIndex: e.ReadIndex, FirstReadIndex: e.FirstReadIndex})
	}
	for i, r := range reads {
		sc.Feed(r, i)
		for {
			e, ok := sc.Next()
			if !ok {
				break
			}
			collect(e)
		}
	}
	for {
		e, ok := sc.Flush()
		if !ok {
			break
		}
		collect(e)
	}
	return evs, raw
}

func TestSSEScanner(t *testing.T) {
	cases := []struct {
		name, in string
		want     []ev
	}{
		{"lf", "data: a\n\ndata: b\n\n", []ev{{"", "a"}, {"", "b"}}},
		{"crlf", "data: a\r\n\r\ndata: b\r\n\r\n", []ev{{"", "a"}, {"", "b"}}},
		{"cr", "data: a\r\rdata: b\r\r", []ev{{"", "a"}, {"", "b"}}},
		{"multiline", "data: a\ndata:b\ndata:  c\n\n", []ev{{"", "a\nb\n c"}}},
		{"empty data", "data\n\ndata:\n\n", []ev{{"", ""}, {"", ""}}},
		{"named", "event: message_start\ndata: {}\n\nevent:ping\ndata:{\"type\": \"ping\"}\n\n", []ev{{"message_start", "{}"}, {"ping", `{"type": "ping"}`}}},
		{"comments", ": keep-alive\n\n: x\ndata: a\n: y\n\n", []ev{{"", "a"}}},
		{"no data no dispatch", "event: ping\n\ndata: a\n\n", []ev{{"", "a"}}},
		{"id retry unknown", "id: 7\nretry: 100\nfoo: bar\ndata: a\n\n", []ev{{"", "a"}}},
		{"field with space", "data : x\ndata: y\n\n", []ev{{"", "y"}}},
		{"bom", "\xEF\xBB\xBFdata: a\n\n", []ev{{"", "a"}}},
		{"no trailing blank", "data: a\n\ndata: b", []ev{{"", "a"}, {"", "b"}}},
		{"no trailing blank lf", "data: a\ndata: b\n", []ev{{"", "a\nb"}}},
		{"extra blank lines", "\n\n\ndata: a\n\n\n\n", []ev{{"", "a"}}},
		{"done", "data: [DONE]\n\n", []ev{{"", "[DONE]"}}},
		{"colon in value", "data: {\"a\":\"b:c\"}\n\n", []ev{{"", `{"a":"b:c"}`}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if ref := refEvents([]byte(tc.in)); fmt.Sprint(ref) != fmt.Sprint(tc.want) {
				t.Fatalf("reference: %q, want %q", ref, tc.want)
			}
			// Whole, byte by byte, and every two-way split.
			got, _ := feedAll(t, [][]byte{[]byte(tc.in)})
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("whole: got %q, want %q", got, tc.want)
			}
			var bytewise [][]byte
			for i := range len(tc.in) {
				bytewise = append(bytewise, []byte{tc.in[i]})
			}
			if got, _ := feedAll(t, bytewise); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("byte by byte: got %q, want %q", got, tc.want)
			}
			for i := range len(tc.in) {
				if got, _ := feedAll(t, [][]byte{[]byte(tc.in[:i]), []byte(tc.in[i:])}); fmt.Sprint(got) != fmt.Sprint(tc.want) {
					t.Fatalf("split at %d: got %q, want %q", i, got, tc.want)
				}
			}
		})
	}
}

func TestSSEReadIndex(t *testing.T) {
	cases := []struct {
		reads       []string
		first, read []int
	}{
		{[]string{"data: a", "bc\n", "\n"}, []int{0}, []int{2}},
		{[]string{"data: x\r", "\n\r\n"}, []int{0}, []int{1}},
		{[]string{"data: x\r\r", "\n"}, []int{0}, []int{0}},
		{[]string{"data: x\n\r", "\ndata: y\n\n"}, []int{0, 1}, []int{0, 1}},
		{[]string{": ping\n\n", ": ping\n", "\nda", "ta: z\n\n"}, []int{2}, []int{3}},
		{[]string{"data: 1\n\ndata: 2\n\ndata: 3", "\n\n"}, []int{0, 0, 0}, []int{0, 0, 1}},
		{[]string{"event: e\n", "", "data: x\n", "\n"}, []int{0}, []int{3}},
	}
	for _, tc := range cases {
		var reads [][]byte
		for _, r := range tc.reads {
			reads = append(reads, []byte(r))
		}
		_, got := feedAll(t, reads)
		var first, read []int
		for _, e := range got {
			first = append(first, e.FirstReadIndex)
			read = append(read, e.ReadIndex)
		}
		if fmt.Sprint(first) != fmt.Sprint(tc.first) || fmt.Sprint(read) != fmt.Sprint(tc.read) {
			t.Errorf("%q: first %v read %v, want %v %v", tc.reads, first, read, tc.first, tc.read)
		}
	}
}

func TestSSEReset(t *testing.T) {
	var sc SSEScanner
	sc.Feed([]byte("event: x\ndata: partial"), 0)
	if _, ok := sc.Next(); ok {
		t.Fatal("event before blank line")
	}
	sc.Reset()
	sc.Feed([]byte("data: fresh\n\n"), 0)
	e, ok := sc.Next()
	if !ok || string(e.Data) != "fresh" || len(e.Name) != 0 {
		t.Fatalf("after Reset: %q %q %v", e.Name, e.Data, ok)
	}
}

// TestSSEZeroAlloc: a long stream fed read by read allocates nothing once buffers are warm.
func TestSSEZeroAlloc(t *testing.T) {
	chunk := []byte("data: " + chatChunk + "\n\n")
	var sc SSEScanner
	run := func() {
		for i := range 16 {
			sc.Feed(chunk[:40], i)
			sc.Feed(chunk[40:], i)
			for {
				if _, ok := sc.Next(); !ok {
					break
				}
			}
		}
	}
	run()
	if n := testing.AllocsPerRun(100, run); n != 0 {
		t.Fatalf("%v allocations per 16 events", n)
	}
}

// FuzzSSEScanner: however a stream is split into reads, the same events come out, and they
// match the plain reference reading; read indexes are ordered.
func FuzzSSEScanner(f *testing.F) {
	f.Add([]byte("data: a\n\ndata: b\r\n\r\nevent: x\rdata: c\r\r"), []byte{3, 1, 7})
	f.Add([]byte("\xEF\xBB\xBFdata:x\n\n: c\ndata\n\n"), []byte{1, 1, 1, 1})
	f.Add([]byte("data: a\r"), []byte{8})
	f.Add([]byte("event: e\ndata: 1\ndata: 2\n\nid: 3\n\n"), []byte{0, 2, 200})
	f.Fuzz(func(t *testing.T, in []byte, cuts []byte) {
		want := refEvents(in)
		var reads [][]byte
		rest := in
		for _, c := range cuts {
			n := min(int(c)%17, len(rest))
			reads = append(reads, rest[:n])
			rest = rest[n:]
		}
		reads = append(reads, rest)
		got, raw := feedAll(t, reads)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("split %v: got %q, want %q", cuts, got, want)
		}
		whole, _ := feedAll(t, [][]byte{in})
		if fmt.Sprint(whole) != fmt.Sprint(want) {
			t.Fatalf("whole: got %q, want %q", whole, want)
		}
		prev := 0
		for _, e := range raw {
			if e.FirstReadIndex > e.ReadIndex || e.ReadIndex < prev || e.ReadIndex >= len(reads) {
				t.Fatalf("read indexes out of order: %+v (reads %d)", raw, len(reads))
			}
			prev = e.ReadIndex
		}
	})
}

func TestDetectFormat(t *testing.T) {
	cases := []struct {
		ct, head string
		want     BodyFormat
	}{
		{"text/event-stream; charset=utf-8", `{"x":1}`, FormatSSE},
		{"application/json", "data: x", FormatJSON},
		{"application/problem+json", "", FormatJSON},
		{"", "data: {}", FormatSSE},
		{"", "  \r\n{\"a\":1}", FormatJSON},
		{"text/plain", "[1]", FormatJSON},
		{"", ": ping\n", FormatSSE},
		{"", "event:x", FormatSSE},
		{"", "dat", FormatSSE},
		{"", "\xEF\xBB\xBFdata:", FormatSSE},
		{"", "", FormatUnknown},
		{"", "<html>", FormatUnknown},
		{"bogus/;;", "{", FormatJSON},
	}
	for _, tc := range cases {
		if got := DetectFormat(tc.ct, []byte(tc.head)); got != tc.want {
			t.Errorf("DetectFormat(%q, %q) = %v, want %v", tc.ct, tc.head, got, tc.want)
		}
	}
	if FormatSSE.String() != "sse" || FormatJSON.String() != "json" || FormatUnknown.String() != "unknown" {
		t.Error("BodyFormat.String")
	}
}
