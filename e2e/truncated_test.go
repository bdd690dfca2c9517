package e2e_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// cutServer is a loopback HTTP/1.1 server written on the bare socket, so that the framing of
// every response is exactly what the test asks for: close-delimited (Connection: close, no
// Content-Length, no chunked coding), chunked, or Content-Length. The first path segment
// names the framing (/close/..., /chunked/..., /length/...); the rest is the route, whose
// answer is the list of writes in cutBodies. Every answer is cut short the way a server that
// dies mid-response cuts it, yet each is well framed: the transport says the body is whole,
// so only the body's own end tells that it is not. Two more framings cut the transport as
// well: /chunked-cut/ closes without the last chunk, /length-cut/ 100 bytes short of its
// Content-Length.
type cutServer struct {
	ln net.Listener
	wg sync.WaitGroup
}

// cutBodies maps a route to the content type and the writes of its answer: five content
// events and no end marker for a stream, a JSON document cut mid-way for a body.
var cutBodies = map[string]struct {
	ctype  string
	writes []string
}{
	"/v1/chat/completions/stream": {"text/event-stream", repeatEvent(
		"data: {\"id\":\"chat.completion.chunk\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" w%d\"}}]}\n\n")},
	"/v1/completions/stream": {"text/event-stream", repeatEvent(
		"data: {\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\" w%d\"}]}\n\n")},
	"/v1/responses/stream": {"text/event-stream", append([]string{
		"event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r\",\"object\":\"response\",\"status\":\"in_progress\"}}\n\n"},
		repeatEvent("event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\" w%d\"}\n\n")...)},
	"/v1/messages/stream": {"text/event-stream", append([]string{
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"usage\":{\"input_tokens\":16,\"output_tokens\":1}}}\n\n" +
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"},
		repeatEvent("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" w%d\"}}\n\n")...)},
	"/generate_stream/stream": {"text/event-stream", repeatEvent(
		"data: {\"token\":{\"id\":%[1]d,\"text\":\" w%[1]d\",\"logprob\":0,\"special\":false},\"generated_text\":null,\"details\":null}\n\n")},
	// A stream whose last event is cut in the middle of its JSON.
	"/v1/chat/completions/stream-mid": {"text/event-stream", append(repeatEvent(
		"data: {\"id\":\"chat.completion.chunk\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" w%d\"}}]}\n\n"),
		"data: {\"id\":\"chat.completion.chunk\",\"object\":\"chat.comp")},
	"/v1/chat/completions/body": {"application/json", []string{
		`{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"w0 w1 w2 w3 w4"}}],"usage":{"prompt_tokens":16,`}},
	"/v1/messages/body": {"application/json", []string{
		`{"id":"m","type":"message","role":"assistant","content":[{"type":"text","text":"w0 w1 w2 w3 w4"}],"usage":{"input_tokens":16,"output_tokens":5}`}},
	"/v1/responses/body": {"application/json", []string{
		`{"id":"r","object":"response","status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"w0 w1 w2 w3 w4"}]}]`}},
}

// repeatEvent is five writes of an event, each with its index.
func repeatEvent(format string) []string {
	out := make([]string, 5)
	for i := range out {
		out[i] = fmt.Sprintf(format, i)
	}
	return out
}

func startCutServer(t *testing.T) *cutServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &cutServer{ln: ln}
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				s.serve(c)
			}()
		}
	}()
	return s
}

func (s *cutServer) URL() string { return "http://" + s.ln.Addr().String() }

// serve answers the requests of one connection until the framing ends it.
func (s *cutServer) serve(c net.Conn) {
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		framing, route, _ := strings.Cut(strings.TrimPrefix(req.URL.Path, "/"), "/")
		b, ok := cutBodies["/"+route]
		if !ok {
			fmt.Fprintf(c, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
			return
		}
		whole := strings.Join(b.writes, "")
		head := "HTTP/1.1 200 OK\r\nContent-Type: " + b.ctype + "\r\n"
		switch framing {
		case "close":
			head += "Connection: close\r\n\r\n"
		case "chunked", "chunked-cut":
			head += "Transfer-Encoding: chunked\r\n\r\n"
		case "length":
			head += "Content-Length: " + strconv.Itoa(len(whole)) + "\r\n\r\n"
		case "length-cut":
			head += "Content-Length: " + strconv.Itoa(len(whole)+100) + "\r\n\r\n"
		default:
			return
		}
		if _, err := io.WriteString(c, head); err != nil {
			return
		}
		// One write per event, a little apart, so that the client's reads split the body
		// differently from one request to the next.
		for _, w := range b.writes {
			if strings.HasPrefix(framing, "chunked") {
				w = strconv.FormatInt(int64(len(w)), 16) + "\r\n" + w + "\r\n"
			}
			if _, err := io.WriteString(c, w); err != nil {
				return
			}
			time.Sleep(time.Millisecond)
		}
		switch framing {
		case "close", "chunked-cut", "length-cut":
			return // the last two end before their framing says the body does
		case "chunked":
			if _, err := io.WriteString(c, "0\r\n\r\n"); err != nil {
				return
			}
		}
	}
}

// TestTruncatedResponses: a server that ends its responses early, every one well framed at
// the transport (close-delimited, chunked or Content-Length), gets every request counted as
// failed, whatever the client (event loop or net), the worker, or the request's place among
// its worker's requests: a stream without its end marker is truncated_stream with all the
// content events it did carry, a JSON body cut mid-way is invalid_response; a response cut
// before its framing's end is a transport error. The framing is the client's business, the
// end marker the endpoint's: chat and its body go through every framing, the other types
// through the close-delimited one, the framing of the report.
func TestTruncatedResponses(t *testing.T) {
	t.Parallel()
	srv := startCutServer(t)
	const n = 10
	all := []string{"close", "chunked", "length", "chunked-cut", "length-cut"}
	one := []string{"close"}
	cases := []struct {
		name, typ, route string
		stream           bool
		framings         []string
		kind             string // error kind of a well-framed answer
		contentEvents    int
	}{
		{"chat-stream", "chat", "/v1/chat/completions/stream", true, all, "truncated_stream", 5},
		{"chat-stream-mid-event", "chat", "/v1/chat/completions/stream-mid", true, one, "truncated_stream", 5},
		{"completions-stream", "completions", "/v1/completions/stream", true, one, "truncated_stream", 5},
		{"responses-stream", "responses", "/v1/responses/stream", true, one, "truncated_stream", 5},
		{"anthropic-stream", "anthropic_messages", "/v1/messages/stream", true, one, "truncated_stream", 5},
		{"tgi-stream", "huggingface_generate", "/generate_stream/stream", true, one, "truncated_stream", 5},
		{"chat-body", "chat", "/v1/chat/completions/body", false, all, "invalid_response", 0},
		{"anthropic-body", "anthropic_messages", "/v1/messages/body", false, one, "invalid_response", 0},
		{"responses-body", "responses", "/v1/responses/body", false, one, "invalid_response", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			for _, framing := range c.framings {
				kind, events := c.kind, c.contentEvents
				if strings.HasSuffix(framing, "-cut") {
					// The reads end in an error: nothing of the body is judged.
					kind, events = "transport_error", 0
				}
				dir := t.TempDir()
				args := []string{"--model", "mock", "--endpoint-type", c.typ, "--custom-endpoint", "/" + framing + c.route,
					"--isl", "16", "--osl", "5", "--request-count", strconv.Itoa(n), "--concurrency", "2"}
				if c.stream {
					args = append(args, "--streaming")
				}
				planPath := compile(t, dir, args...)
				for _, client := range []string{"loop", "net"} {
					name := framing + "/" + client
					runDir := replayBadServer(t, filepath.Join(dir, "run-"+client), planPath, []string{srv.URL()},
						"--workers", "2", "--client", client)
					out := filepath.Join(dir, "out-"+client)
					if code := analyzeRun(t, runDir, out); code != 1 {
						t.Errorf("%s: analyze exit %d, want 1 (the error-rate gate fails)", name, code)
					}
					s := readSummary(t, out)
					if v := s.must(t, "error_request_count").Avg; v != n {
						t.Errorf("%s: error_request_count %v, want %d", name, v, n)
					}
					recs := readRecords(t, out)
					if len(recs) != n {
						t.Fatalf("%s: %d records, want %d", name, len(recs), n)
					}
					for _, r := range recs {
						if r.Error == nil || r.Error.Type != kind || r.Metadata.ContentEvents != events {
							t.Errorf("%s: request %d: error %+v, %d content events; want %s with %d",
								name, r.Metadata.RequestIndex, r.Error, r.Metadata.ContentEvents, kind, events)
						}
					}
				}
			}
		})
	}
}
