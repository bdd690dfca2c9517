package http1

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

func TestParseHead(t *testing.T) {
	for _, c := range []struct {
		name, head string
		want       respHead
		err        string
	}{
		{"length", "HTTP/1.1 200 OK\r\nContent-Length: 12", respHead{200, frameLength, 12, true}, ""},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive", respHead{200, frameChunked, 0, true}, ""},
		{"chunked case", "HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, Chunked", respHead{200, frameChunked, 0, true}, ""},
		{"te not chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip", respHead{200, frameClose, 0, false}, ""},
		{"te wins over length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked", respHead{200, frameChunked, 5, true}, ""},
		{"close", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close", respHead{200, frameLength, 3, false}, ""},
		{"close token list", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: Upgrade, Close", respHead{200, frameLength, 3, false}, ""},
		{"until close", "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream", respHead{200, frameClose, 0, false}, ""},
		{"http/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 1", respHead{200, frameLength, 1, false}, ""},
		{"http/1.0 keep-alive", "HTTP/1.0 200 OK\r\nContent-Length: 1\r\nConnection: keep-alive", respHead{200, frameLength, 1, true}, ""},
		{"no reason", "HTTP/1.1 204", respHead{204, frameNone, 0, true}, ""},
		{"304", "HTTP/1.1 304 Not Modified\r\nContent-Length: 40", respHead{304, frameNone, 40, true}, ""},
		{"bare LF", "HTTP/1.1 503 Busy\nContent-Length: 0", respHead{503, frameLength, 0, true}, ""},
		{"ows", "HTTP/1.1 200 OK\r\nContent-Length: \t 7 ", respHead{200, frameLength, 7, true}, ""},
		{"same lengths", "HTTP/1.1 200 OK\r\nContent-Length: 7\r\nContent-Length: 7", respHead{200, frameLength, 7, true}, ""},
		{"two lengths", "HTTP/1.1 200 OK\r\nContent-Length: 7\r\nContent-Length: 8", respHead{}, "conflicting"},
		{"bad length", "HTTP/1.1 200 OK\r\nContent-Length: -1", respHead{}, "bad Content-Length"},
		{"huge length", "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999", respHead{}, "bad Content-Length"},
		{"bad status", "HTTP/1.1 2x0 OK", respHead{}, "malformed status code"},
		{"not http", "SSH-2.0-OpenSSH", respHead{}, "malformed status line"},
		{"http2", "HTTP/2 200", respHead{}, "malformed status line"},
		{"no colon", "HTTP/1.1 200 OK\r\nbroken header", respHead{}, "malformed header"},
		{"low status", "HTTP/1.1 099 Huh", respHead{}, "out of range"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var h respHead
			err := parseHead([]byte(c.head), &h)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || h != c.want {
				t.Fatalf("got %+v %v, want %+v", h, err, c.want)
			}
		})
	}
}

func TestFindHeadEnd(t *testing.T) {
	for _, c := range []struct {
		in       string
		end, len int
	}{
		{"HTTP/1.1 200 OK\r\n\r\nbody", 15, 4},
		{"HTTP/1.1 200 OK\r\nA: b\r\n\r\n", 21, 4},
		{"HTTP/1.1 200 OK\n\nbody", 15, 2},
		{"HTTP/1.1 200 OK\n\r\nbody", 15, 3},
		{"HTTP/1.1 200 OK\r\nA: b\r\n", -1, 0},
		{"HTTP/1.1 200 OK\r\n\r", -1, 0},
	} {
		end, n := findHeadEnd([]byte(c.in), 0)
		if end != c.end || n != c.len {
			t.Errorf("%q: got %d,%d want %d,%d", c.in, end, n, c.end, c.len)
		}
	}
}

// chunkEncode encodes body in chunks of the given sizes (the last repeats), with extensions
// and trailers when asked.
func chunkEncode(body []byte, size int, ext, trailer bool) []byte {
	var b bytes.Buffer
	for len(body) > 0 {
		n := min(size, len(body))
		fmt.Fprintf(&b, "%X", n)
		if ext {
			b.WriteString(";name=value")
		}
		b.WriteString("\r\n")
		b.Write(body[:n])
		b.WriteString("\r\n")
		body = body[n:]
	}
	b.WriteString("0\r\n")
	if trailer {
		b.WriteString("X-Trailer: yes\r\n")
	}
	b.WriteString("\r\n")
	return b.Bytes()
}

// The chunked decoder gives the same body however the bytes are split into reads.
func TestChunkedEverySplit(t *testing.T) {
	body := []byte(strings.Repeat("data: {\"x\":1}\n\n", 7) + "data: [DONE]\n\n")
	for _, size := range []int{1, 3, 16, 4096} {
		for _, opt := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			wire := chunkEncode(body, size, opt[0], opt[1])
			for split := 1; split <= len(wire); split += 1 + split/7 {
				var d bodyDecoder
				d.reset(&respHead{framing: frameChunked}, DefaultMaxResponseBytes)
				var out []byte
				var err error
				for i := 0; i < len(wire) && err == nil; i += split {
					out, err = d.feed(out, wire[i:min(i+split, len(wire))])
				}
				if err != nil || !d.done() || !bytes.Equal(out, body) || d.excess {
					t.Fatalf("size %d opts %v split %d: err %v done %v excess %v body %q", size, opt, split, err, d.done(), d.excess, out)
				}
			}
		}
	}
}

func TestChunkedErrors(t *testing.T) {
	for _, c := range []struct{ wire, err string }{
		{"Z\r\n", "bad chunk size"},
		{"\r\n", "bad chunk size"},
		{"3\r\nabcX", "not followed by CRLF"},
		{"3\rX", "line ending"},
		{"FFFFFFFFFFFFFFFFFFFF\r\n", "too large"},
		{"0\r\n\rX", "bad end"},
	} {
		var d bodyDecoder
		d.reset(&respHead{framing: frameChunked}, DefaultMaxResponseBytes)
		_, err := d.feed(nil, []byte(c.wire))
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: err %v, want %q", c.wire, err, c.err)
		}
	}
	// Bytes after the last chunk are noticed (the connection is then not reused).
	var d bodyDecoder
	d.reset(&respHead{framing: frameChunked}, DefaultMaxResponseBytes)
	out, err := d.feed(nil, []byte("1\r\na\r\n0\r\n\r\nHTTP/1.1"))
	if err != nil || !d.done() || !d.excess || string(out) != "a" {
		t.Fatalf("excess: %q %v %v %v", out, err, d.done(), d.excess)
	}
}

func TestLengthAndCloseFraming(t *testing.T) {
	var d bodyDecoder
	d.reset(&respHead{framing: frameLength, length: 5}, DefaultMaxResponseBytes)
	out, _ := d.feed(nil, []byte("ab"))
	if d.done() {
		t.Fatal("done early")
	}
	out, _ = d.feed(out, []byte("cdefg"))
	if !d.done() || !d.excess || string(out) != "abcde" {
		t.Fatalf("length: %q done %v excess %v", out, d.done(), d.excess)
	}
	d.reset(&respHead{framing: frameClose}, DefaultMaxResponseBytes)
	out, _ = d.feed(nil, []byte("xyz"))
	if d.done() || string(out) != "xyz" {
		t.Fatal("close-delimited body ended early")
	}
	d.reset(&respHead{framing: frameNone}, DefaultMaxResponseBytes)
	if !d.done() {
		t.Fatal("204 not done at once")
	}
}

// FuzzResponse feeds arbitrary server bytes, split at an arbitrary point, through the head
// and body parsers: they must never panic, and a chunked encoding of arbitrary data must
// decode back to it.
func FuzzResponse(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"), 7, []byte("payload"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc"), 1, []byte{})
	f.Add([]byte("HTTP/1.0 100 Continue\r\n\r\nHTTP/1.1 204 No\r\n\r\n"), 3, []byte("\r\n0\r\n"))
	f.Fuzz(func(t *testing.T, wire []byte, split int, data []byte) {
		if split <= 0 {
			split = 1
		}
		var h respHead
		end, n := findHeadEnd(wire, 0)
		if end >= 0 {
			if parseHead(wire[:end], &h) == nil {
				var d bodyDecoder
				d.reset(&h, DefaultMaxResponseBytes)
				rest := wire[end+n:]
				var out []byte
				for i := 0; i < len(rest); i += split {
					var err error
					if out, err = d.feed(out, rest[i:min(i+split, len(rest))]); err != nil {
						break
					}
				}
			}
		}
		enc := chunkEncode(data, split%64+1, split%2 == 0, split%3 == 0)
		var d bodyDecoder
		d.reset(&respHead{framing: frameChunked}, DefaultMaxResponseBytes)
		var out []byte
		for i := 0; i < len(enc); i += split {
			var err error
			if out, err = d.feed(out, enc[i:min(i+split, len(enc))]); err != nil {
				t.Fatalf("valid chunked encoding rejected: %v", err)
			}
		}
		if !d.done() || !bytes.Equal(out, data) {
			t.Fatalf("chunked round trip: got %q want %q", out, data)
		}
	})
}
