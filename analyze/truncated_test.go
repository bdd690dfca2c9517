package analyze

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/mockllm"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/tokenizer"
)

// mockStream asks mockllm for a streamed response of endpoint type typ and returns its body.
func mockStream(t *testing.T, url, typ string) []byte {
	t.Helper()
	return mockResponse(t, url, typ, true)
}

// mockResponse asks mockllm for a response of endpoint type typ, streamed or not, and returns
// its body.
func mockResponse(t *testing.T, url, typ string, streaming bool) []byte {
	t.Helper()
	ep, err := endpoint.Lookup(typ)
	if err != nil {
		t.Fatal(err)
	}
	r := &endpoint.Request{Model: "mock-llm", Prompt: "Tell me a story about a lighthouse.",
		Messages:  []endpoint.Message{{Role: "user", Content: "Tell me a story about a lighthouse."}},
		MaxTokens: 6, Streaming: streaming, IncludeUsage: streaming,
		Query: "lighthouse", Passages: []string{"a lighthouse", "a harbour"}}
	if typ == "image_generation" && streaming {
		// A partial image first, so the stream has events before its end marker.
		r.MaxTokens, r.Extra = 0, map[string]any{"partial_images": 1}
	}
	body, err := ep.Render(nil, r)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest("POST", url+ep.RequestPath(streaming), bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range ep.Headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%s: status %d, %v: %s", typ, resp.StatusCode, err, out)
	}
	return out
}

// lastEventStart is where the stream's last event begins.
func lastEventStart(b []byte) int {
	b = bytes.TrimRight(b, "\r\n")
	return bytes.LastIndex(b, []byte("\n\n")) + 2
}

// A stream that closes before its protocol's end marker is an error of its own kind,
// truncated_stream, for every endpoint type whose protocol has one; the same stream with
// its marker is valid. The streams are mockllm's, so this also checks that the reference
// server ends each of them with its marker. Types without an end marker are not affected.
func TestTruncatedStream(t *testing.T) {
	tok, err := tokenizer.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	o := mockllm.DefaultOptions()
	o.Tokenizer, o.TTFT, o.ITL = tok, time.Millisecond, 0
	url, stop, err := mockllm.Start("127.0.0.1:0", o)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	cases := []struct {
		typ    string // endpoint type analysed
		server string // type whose mockllm stream is used (raw and template: chat's)
		field  string // raw ResponseField
		marker string // in the error message; "" = no end marker: the cut stream stays valid
	}{
		{typ: "chat", marker: "data: [DONE]"},
		{typ: "completions", marker: "data: [DONE]"},
		{typ: "responses", marker: "response.completed"},
		{typ: "anthropic_messages", marker: "message_stop"},
		{typ: "huggingface_generate", marker: "generated_text"},
		{typ: "image_generation", marker: "image_generation.completed"},
		{typ: "raw", server: "chat", marker: "data: [DONE]"},
		{typ: "raw", server: "anthropic_messages", marker: "message_stop"},
		{typ: "template", server: "responses", marker: "response.completed"},
		{typ: "raw", server: "chat", field: "choices.0.delta.content"},
	}
	for _, c := range cases {
		server := c.server
		if server == "" {
			server = c.typ
		}
		name := c.typ + "/" + server + "/" + c.field
		full := mockStream(t, url, server)
		ep, err := endpoint.Lookup(c.typ)
		if err != nil {
			t.Fatal(err)
		}
		ep.ResponseField = c.field
		p := newProcessor(requestConfig{ep: ep, tokens: ep.ProducesTokens, tok: wordCounter{}})
		rec := mmapds.Record{Phase: mmapds.PhaseProfile, ISL: 8, OSL: 6, DelayNs: -1}
		analyse := func(body []byte) *requestMetrics {
			// Replay's view: the body over a few reads, each 1 ms after the previous.
			var reads []read
			for i, at := 0, int64(0); i < len(body); i, at = i+97, at+ms {
				reads = append(reads, read{1000*ms + at + ms, string(body[i:min(i+97, len(body))])})
			}
			return p.compute(request(0, 1000*ms, reads...), &rec, 10)
		}
		if m := analyse(full); !m.Valid {
			t.Errorf("%s: the whole mockllm stream is invalid: %+v\n%s", name, m.Err, full)
			continue
		}
		for _, cut := range []int{lastEventStart(full), len(full) - 3} {
			m := analyse(full[:cut])
			if c.marker == "" {
				// Cut between events it is as valid as ever (cut inside one, that event's
				// JSON is broken: invalid_response, as before).
				if cut == lastEventStart(full) && !m.Valid {
					t.Errorf("%s cut at %d of %d: %+v; a stream without an end marker is not truncated", name, cut, len(full), m.Err)
				}
				continue
			}
			if m.Valid || m.Err.Kind != "truncated_stream" || m.Err.Code != 0 ||
				!strings.Contains(m.Err.Message, "endpoint "+c.typ+": the event stream ended without its end marker") ||
				!strings.Contains(m.Err.Message, c.marker) {
				t.Errorf("%s cut at %d of %d: valid %v, error %+v", name, cut, len(full), m.Valid, m.Err)
			}
		}
	}
	// Non-streamed bodies have nothing to truncate this way.
	p := newTestProcessor(t, "embeddings", false)
	rec := mmapds.Record{Phase: mmapds.PhaseProfile, DelayNs: -1}
	body := `{"object":"list","data":[{"index":0,"embedding":[0.1]}],"usage":{"prompt_tokens":3,"total_tokens":3}}`
	if m := p.compute(request(0, 1000*ms, read{1001 * ms, body}), &rec, 10); !m.Valid {
		t.Errorf("embeddings body: %+v", m.Err)
	}
}

// A whole (non-streamed) body cut anywhere short of its end is never a valid answer, for
// every endpoint type: under close-delimited framing the transport cannot tell, so the body's
// own syntax must. mockllm's answer of each type is cut at every byte; only dropping
// trailing whitespace keeps it valid.
func TestTruncatedBody(t *testing.T) {
	tok, err := tokenizer.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	o := mockllm.DefaultOptions()
	o.Tokenizer, o.TTFT, o.ITL = tok, time.Millisecond, 0
	url, stop, err := mockllm.Start("127.0.0.1:0", o)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	rec := mmapds.Record{Phase: mmapds.PhaseProfile, ISL: 8, OSL: 6, DelayNs: -1}
	for _, typ := range endpoint.Names() {
		server := typ
		if typ == "raw" || typ == "template" {
			server = "chat" // their bodies come from the route they are sent to
		}
		full := bytes.TrimRight(mockResponse(t, url, server, false), " \r\n\t")
		for _, memo := range []bool{true, false} {
			p := newTestProcessor(t, typ, false)
			p.noMemo = !memo
			analyse := func(body []byte) *requestMetrics {
				return p.compute(request(0, 1000*ms, read{1001 * ms, string(body)}), &rec, 10)
			}
			if m := analyse(full); !m.Valid {
				t.Fatalf("%s: the whole mockllm body is invalid: %+v\n%s", typ, m.Err, full)
			}
			for cut := range len(full) {
				if m := analyse(full[:cut]); m.Valid {
					t.Errorf("%s: body cut at %d of %d is valid: %q", typ, cut, len(full), full[:cut])
					break
				}
			}
		}
	}
}

// Failed requests are classified from replay's error text: the client's own resource
// failures and over-large responses have kinds of their own, never a server transport error,
// including for logs written before replay marked client failures.
func TestClientAndSizeErrorKinds(t *testing.T) {
	for _, c := range []struct{ err, want string }{
		{"client error: connect: too many open files (this process is out of file descriptors: raise the open-file limit, e.g. ulimit -n 65536)", "client_error"},
		{"connect: too many open files", "client_error"},
		{"connect: too many open files in system", "client_error"},
		{"connect: cannot assign requested address", "client_error"},
		{"client error: connect: no buffer space available (the kernel is out of socket buffer memory)", "client_error"},
		{"response too large: body over max-response-bytes (1048576 bytes); the first 1048576 bytes are kept", "response_too_large"},
		{"response too large: more than 2048 reads (max-response-bytes 24576 allows one per 12 bytes); the first 10 body bytes are kept", "response_too_large"},
		{"connect: connection refused", "connection_refused"},
	} {
		if got := transportKind(c.err); got != c.want {
			t.Errorf("transportKind(%q) = %s; want %s", c.err, got, c.want)
		}
	}
	q := &rawlog.Request{Outcome: rawlog.OutcomeFailed, Status: 200, IntendedNs: -1, ReadyNs: 1, WriteStartNs: 2, WriteEndNs: 3,
		HeaderNs: 4, EndNs: 5, ConnectStartNs: -1, ConnectEndNs: -1, Body: []byte("data: {"), ReadNs: []int64{4}, ReadEnd: []uint32{7},
		Err: "response too large: body over max-response-bytes (7 bytes); the first 7 bytes are kept"}
	m := newTestProcessor(t, "chat", false).compute(q, &mmapds.Record{Phase: mmapds.PhaseProfile, DelayNs: -1}, 10)
	if m.Valid || m.Err.Kind != "response_too_large" || m.Err.Message != q.Err {
		t.Fatalf("over-large response: %+v", m.Err)
	}
}

// Requests the client could not make (client_error) get a note under the table saying that
// the client, not the server, ran out of resources; server errors get none.
func TestClientErrorNote(t *testing.T) {
	for _, c := range []struct {
		clientErrEvery, errEvery int
		want                     string
	}{
		{4, 0, "Note: 2 requests failed with client_error: the client, not the server, ran out of resources"},
		{0, 4, ""},
		{0, 0, ""},
	} {
		sc := scenario{n: 8, ttft: 20 * ms, itl: 5 * ms, tokens: 4, concurrency: 2, streaming: true,
			clientErrEvery: c.clientErrEvery, errEvery: c.errEvery}
		s, _ := analyseDir(t, Options{}, sc.build(t, t.TempDir()))
		var b strings.Builder
		if err := WriteConsole(&b, s); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if c.want == "" {
			if strings.Contains(out, "client_error") {
				t.Errorf("client errors %d, server errors %d: console names client_error:\n%s", c.clientErrEvery, c.errEvery, out)
			}
			continue
		}
		if !strings.Contains(out, c.want) || !strings.Contains(out, "client_error ×2") || s.Counts.Errors != 2 {
			t.Errorf("client errors every %d: errors %d, console:\n%s", c.clientErrEvery, s.Counts.Errors, out)
		}
	}
}

// --export-http-trace adds AIPerf's trace_data to every record: the raw log's timestamps in
// wall-clock ns, one [ns, bytes] chunk per body read, and the computed durations, which agree
// with the record's metadata and metrics; --export-per-chunk-data adds the chunks alone;
// neither, no trace_data.
func TestExportHTTPTrace(t *testing.T) {
	type trace struct {
		TraceType       string     `json:"trace_type"`
		SendStart       *int64     `json:"request_send_start_ns"`
		SendEnd         *int64     `json:"request_send_end_ns"`
		Status          int        `json:"response_status_code"`
		HeadersReceived *int64     `json:"response_headers_received_ns"`
		ReceiveStart    *int64     `json:"response_receive_start_ns"`
		ReceiveEnd      *int64     `json:"response_receive_end_ns"`
		ConnectStart    *int64     `json:"tcp_connect_start_ns"`
		ConnectEnd      *int64     `json:"tcp_connect_end_ns"`
		Reused          *int64     `json:"connection_reused_ns"`
		Chunks          [][2]int64 `json:"response_chunks"`
		ChunksCount     int        `json:"response_chunks_count"`
		BytesTotal      int64      `json:"response_bytes_total"`
		SendingNs       *int64     `json:"sending_ns"`
		DurationNs      *int64     `json:"duration_ns"`
		ConnectingNs    *int64     `json:"connecting_ns"`
	}
	type record struct {
		Metadata struct {
			Start int64 `json:"request_start_ns"`
			Ack   int64 `json:"request_ack_ns"`
		} `json:"metadata"`
		Metrics map[string]struct {
			Value any `json:"value"` // a number, or a list (inter_chunk_latency)
		} `json:"metrics"`
		Trace *trace `json:"trace_data"`
	}
	num := func(r record, tag string) float64 { v, _ := r.Metrics[tag].Value.(float64); return v }
	sc := scenario{n: 6, ttft: 20 * ms, itl: 5 * ms, tokens: 4, rate: 50, concurrency: 2, streaming: true}
	dir := sc.build(t, t.TempDir())
	for _, c := range []struct {
		name         string
		trace, chunk bool
	}{{"none", false, false}, {"http trace", true, false}, {"per chunk", false, true}} {
		_, out := analyseDir(t, Options{ExportHTTPTrace: c.trace, ExportPerChunkData: c.chunk}, dir)
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) != 6 {
			t.Fatalf("%s: %d records", c.name, len(lines))
		}
		reused := 0
		for _, l := range lines {
			var r record
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatalf("%s: %v\n%s", c.name, err, l)
			}
			tr := r.Trace
			if !c.trace && !c.chunk {
				if tr != nil {
					t.Fatalf("%s: trace_data without the flags: %s", c.name, l)
				}
				continue
			}
			if tr == nil || tr.TraceType != "llmbench" || tr.ChunksCount != len(tr.Chunks) || tr.ChunksCount != int(num(r, "http_req_chunks_received")) {
				t.Fatalf("%s: trace %+v\n%s", c.name, tr, l)
			}
			var sum int64
			for i, ch := range tr.Chunks {
				if i > 0 && ch[0] < tr.Chunks[i-1][0] {
					t.Fatalf("%s: chunks out of order: %v", c.name, tr.Chunks)
				}
				sum += ch[1]
			}
			if sum != tr.BytesTotal || float64(sum) != num(r, "http_req_data_received") {
				t.Fatalf("%s: chunk bytes %d, total %d, data received %v", c.name, sum, tr.BytesTotal, num(r, "http_req_data_received"))
			}
			if c.chunk {
				if tr.SendStart != nil || tr.DurationNs != nil {
					t.Fatalf("%s: more than the chunks: %s", c.name, l)
				}
				continue
			}
			last := tr.Chunks[len(tr.Chunks)-1][0]
			if *tr.SendStart != r.Metadata.Start || *tr.HeadersReceived != r.Metadata.Ack || tr.Status != 200 ||
				*tr.ReceiveStart != tr.Chunks[0][0] || *tr.ReceiveEnd != last || *tr.DurationNs != last-*tr.SendStart ||
				float64(*tr.SendingNs) != num(r, "http_req_sending")*1e6 {
				t.Fatalf("%s: trace %+v disagrees with the record\n%s", c.name, tr, l)
			}
			if tr.Reused != nil {
				reused++
				if tr.ConnectStart != nil || tr.ConnectingNs != nil {
					t.Fatalf("%s: a reused connection has connect times: %s", c.name, l)
				}
			} else if tr.ConnectStart == nil || *tr.ConnectEnd-*tr.ConnectStart != *tr.ConnectingNs || float64(*tr.ConnectingNs) != num(r, "http_req_connecting")*1e6 {
				t.Fatalf("%s: connect times %s", c.name, l)
			}
		}
		if c.trace && reused != 4 {
			t.Fatalf("%s: %d reused connections, want 4 (2 slots, 6 requests)", c.name, reused)
		}
	}
}

// A cut stream is judged by its bytes alone: not by the request's place among its worker's
// requests (the event template outlives a request), nor by how the reads split it. For each
// protocol with an end marker, streams of content events only (every one of them the shape
// the memo learns) are analysed through one processor, whole then cut, in both orders and cut
// into reads of every size: every cut one is truncated_stream with all its content events,
// through the memo and through full parsing alike.
func TestTruncatedStreamIndependentOfHistory(t *testing.T) {
	repeat := func(format string, n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, format, i)
		}
		return b.String()
	}
	cases := []struct {
		typ, events, end, marker string
	}{
		{"chat", repeat(`data: {"id":"chat.completion.chunk","choices":[{"delta":{"content":" w%d"}}]}`+"\n\n", 5), doneEvent, "data: [DONE]"},
		{"completions", repeat(`data: {"object":"text_completion","choices":[{"index":0,"text":" w%d"}]}`+"\n\n", 5), doneEvent, "data: [DONE]"},
		{"responses", repeat("event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\" w%d\"}\n\n", 5),
			"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\"}}\n\n", "response.completed"},
		{"anthropic_messages", repeat("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" w%d\"}}\n\n", 5),
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n", "message_stop"},
		{"huggingface_generate", repeat(`data: {"token":{"id":1,"text":" w%d","special":false}}`+"\n\n", 5),
			`data: {"token":{"id":2,"text":"","special":true},"generated_text":"w0 w1 w2 w3 w4"}` + "\n\n", "generated_text"},
		{"raw", repeat(`data: {"id":"chat.completion.chunk","choices":[{"delta":{"content":" w%d"}}]}`+"\n\n", 5), doneEvent, "data: [DONE]"},
	}
	rec := mmapds.Record{Phase: mmapds.PhaseProfile, ISL: 8, OSL: 5, DelayNs: -1}
	// cutInto sends body in reads of size bytes, each 1 ms after the previous.
	cutInto := func(body string, size int) *rawlog.Request {
		var reads []read
		for i, at := 0, 1001*ms; i < len(body); i, at = i+size, at+ms {
			reads = append(reads, read{at, body[i:min(i+size, len(body))]})
		}
		return request(0, 1000*ms, reads...)
	}
	for _, c := range cases {
		for _, memo := range []bool{true, false} {
			p := newTestProcessor(t, c.typ, false)
			p.noMemo = !memo
			name := fmt.Sprintf("%s memo=%v", c.typ, memo)
			order := []bool{true, false, true, true, false} // cut first, then whole, then cut again
			for k, cut := range order {
				for _, size := range []int{1, 7, 64, len(c.events) + len(c.end)} {
					body := c.events + c.end
					if cut {
						body = c.events
					}
					m := p.compute(cutInto(body, size), &rec, 10)
					switch {
					case !cut && !m.Valid:
						t.Errorf("%s request %d, reads of %d: the whole stream is invalid: %+v", name, k, size, m.Err)
					case cut && (m.Valid || m.Err.Kind != "truncated_stream" || !strings.Contains(m.Err.Message, c.marker)):
						t.Errorf("%s request %d, reads of %d: cut stream valid %v, error %+v; want truncated_stream naming %q",
							name, k, size, m.Valid, m.Err, c.marker)
					}
					if m.ContentEvents != 5 {
						t.Errorf("%s request %d (cut %v), reads of %d: %d content events, want 5", name, k, cut, size, m.ContentEvents)
					}
				}
			}
		}
	}
}

// How a body is read (event stream or JSON) depends on its first byte that is not blank,
// wherever it is: a stream opening with more blank lines than any fixed head holds is still
// an event stream, judged complete or cut by its end marker.
func TestLeadingBlankLines(t *testing.T) {
	rec := mmapds.Record{Phase: mmapds.PhaseProfile, ISL: 8, OSL: 2, DelayNs: -1}
	for _, lead := range []int{0, 63, 64, 65, 4096} {
		blank := strings.Repeat("\n", lead)
		for _, c := range []struct {
			body          string
			valid         bool
			contentEvents int
		}{
			{blank + chunk(" w") + chunk(" w") + doneEvent, true, 2},
			{blank + chunk(" w") + chunk(" w"), false, 2},
			{blank + `{"choices":[{"message":{"content":"w w"}}]}`, true, 1},
		} {
			p := newTestProcessor(t, "chat", false)
			m := p.compute(request(0, 1000*ms, read{1001 * ms, c.body}), &rec, 10)
			if m.Valid != c.valid || m.ContentEvents != c.contentEvents {
				t.Errorf("%d blank lines, %q: valid %v (want %v), streamed %v, %d content events, error %+v",
					lead, strings.TrimLeft(c.body, "\n"), m.Valid, c.valid, m.Streamed, m.ContentEvents, m.Err)
			}
			if !c.valid && (m.Err == nil || m.Err.Kind != "truncated_stream") {
				t.Errorf("%d blank lines: cut stream error %+v, want truncated_stream", lead, m.Err)
			}
		}
	}
}
