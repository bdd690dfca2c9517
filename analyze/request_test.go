package analyze

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/analyze/record"
	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
)

func newTestProcessor(t testing.TB, epName string, server bool) *processor {
	t.Helper()
	ep, err := endpoint.Lookup(epName)
	if err != nil {
		t.Fatal(err)
	}
	return newProcessor(requestConfig{ep: ep, tokens: ep.ProducesTokens, tok: wordCounter{}, server: server})
}

func TestRequestMetrics(t *testing.T) {
	const send = 1000 * ms
	type want map[MetricID]float64
	cases := []struct {
		name     string
		ep       string
		server   bool
		q        *rawlog.Request
		osl      uint32
		want     want
		missing  []MetricID // must not be set
		errKind  string
		errMsg   string // substring
		icl      []int64
		epr      []int32
		sameRead int
	}{
		{
			name: "role-only first chunk and usage-only last chunk do not count",
			q: request(0, send,
				read{send + 5*ms, roleChunk()},
				read{send + 20*ms, chunk(" w")},
				read{send + 25*ms, chunk(" w")},
				read{send + 31*ms, chunk(" w")},
				read{send + 40*ms, usageChunk(100, 3) + doneEvent}),
			osl: 3,
			want: want{MTimeToFirstToken: 20 * float64(ms), MTimeToSecondToken: 5 * float64(ms),
				MRequestLatency: 31 * float64(ms), MInterTokenLatency: 5.5 * float64(ms),
				MOutputSequenceLength: 3, MOutputTokenCount: 3, MReasoningTokenCount: 0, MInputSequenceLength: 100,
				MTimeToFirstOutputToken: 20 * float64(ms), MUsageCompletionTokens: 3, MUsagePromptTokens: 100,
				MUsageCompletionTokensDiffPct: 0, MOSLMismatchDiffPct: 0,
				MOutputTokenThroughputPerUser: 1e9 / (5.5 * float64(ms)),
				MPrefillThroughputPerUser:     100 / 0.020,
				MLLMPerfInterTokenLatency:     31 * float64(ms) / 3,
				MGuidellmInterTokenLatency:    5.5 * float64(ms),
				MGuidellmTimePerOutputToken:   31 * float64(ms) / 3,
				// vLLM's latency runs to the usage-only chunk at 40 ms.
				MVLLMTimePerOutputToken: (40 - 20) * float64(ms) / 2,
				MHTTPReqChunksReceived:  5, MDispatchLag: 0},
			icl: []int64{5 * ms, 6 * ms},
			epr: []int32{1, 1, 1},
		},
		{
			name: "several events in one read share its timestamp",
			q: request(0, send,
				read{send + 20*ms, roleChunk() + chunk(" w")},
				read{send + 30*ms, chunk(" w") + chunk(" w") + chunk(" w")},
				read{send + 35*ms, chunk(" w") + doneEvent}),
			want: want{MTimeToFirstToken: 20 * float64(ms), MTimeToSecondToken: 10 * float64(ms),
				MRequestLatency: 35 * float64(ms), MOutputSequenceLength: 5,
				MInterTokenLatency: 15 * float64(ms) / 4},
			icl:      []int64{10 * ms, 0, 0, 5 * ms},
			epr:      []int32{1, 3, 1},
			sameRead: 2,
		},
		{
			name: "an event split across reads is timed by the read that completed it",
			q: request(0, send,
				read{send + 20*ms, chunk(" w")},
				read{send + 24*ms, chunk(" w")[:30]},
				read{send + 27*ms, chunk(" w")[30:]},
				read{send + 33*ms, chunk(" w")[:len(chunk(" w"))-1]},
				read{send + 34*ms, "\n" + doneEvent}),
			want: want{MTimeToFirstToken: 20 * float64(ms), MRequestLatency: 34 * float64(ms), MOutputSequenceLength: 3,
				MHTTPReqChunksReceived: 5},
			icl: []int64{7 * ms, 7 * ms},
			epr: []int32{1, 1, 1},
		},
		{
			name: "CRLF framing with the pair split across reads",
			q: request(0, send,
				read{send + 20*ms, strings.ReplaceAll(chunk(" w"), "\n", "\r\n")},
				read{send + 25*ms, strings.TrimSuffix(strings.ReplaceAll(chunk(" w"), "\n", "\r\n"), "\n\r\n")},
				read{send + 26*ms, "\n\r\n"},
				read{send + 30*ms, "data: [DONE]\r\n\r\n"}),
			want: want{MTimeToFirstToken: 20 * float64(ms), MRequestLatency: 26 * float64(ms), MOutputSequenceLength: 2},
			icl:  []int64{6 * ms},
		},
		{
			name: "reasoning counts for TTFT and OSL; TTFO waits for output",
			q: request(0, send,
				read{send + 20*ms, reasoningChunk(" r")},
				read{send + 25*ms, reasoningChunk(" r")},
				read{send + 30*ms, reasoningChunk(" r")},
				read{send + 35*ms, chunk(" w")},
				read{send + 40*ms, chunk(" w") + doneEvent}),
			want: want{MTimeToFirstToken: 20 * float64(ms), MTimeToFirstOutputToken: 35 * float64(ms),
				MReasoningTokenCount: 3, MOutputTokenCount: 2, MOutputSequenceLength: 5,
				MRequestLatency: 40 * float64(ms), MInterTokenLatency: 5 * float64(ms)},
			icl: []int64{5 * ms, 5 * ms, 5 * ms, 5 * ms},
		},
		{
			name:   "server token count takes OSL and ISL from usage",
			server: true,
			q: request(0, send,
				read{send + 20*ms, chunk(" w w")},
				read{send + 30*ms, chunk(" w w")},
				read{send + 31*ms, usageChunk(90, 5) + doneEvent}),
			want:    want{MOutputSequenceLength: 5, MInputSequenceLength: 90, MInterTokenLatency: 10 * float64(ms) / 4},
			missing: []MetricID{MUsageCompletionTokensDiffPct},
		},
		{
			name: "HTTP error with a JSON body",
			q: func() *rawlog.Request {
				q := request(0, send, read{send + 3*ms, `{"object":"error","message":"model overloaded","code":503}`})
				q.Status = 503
				return q
			}(),
			errKind: "http_503", errMsg: "model overloaded",
			want:    want{MErrorISL: 100, MDispatchLag: 0},
			missing: []MetricID{MRequestLatency, MTimeToFirstToken},
		},
		{
			name: "an SSE error event fails a 200 stream",
			q: request(0, send,
				read{send + 20*ms, chunk(" w")},
				read{send + 25*ms, "event: error\ndata: {\"error\":{\"message\":\"engine died\"}}\n\n"}),
			errKind: "stream_error", errMsg: "engine died",
		},
		{
			name: "an error object inside the stream fails it too",
			q: request(0, send,
				read{send + 20*ms, chunk(" w")},
				read{send + 25*ms, sseData(`{"error":{"message":"out of memory"}}`)}),
			errKind: "stream_error", errMsg: "out of memory",
		},
		{
			name:    "a 200 stream without content is an error",
			q:       request(0, send, read{send + 20*ms, roleChunk() + doneEvent}),
			errKind: "no_content",
		},
		{
			name: "transport timeout",
			q: func() *rawlog.Request {
				q := request(0, send, read{send + 20*ms, chunk(" w")})
				q.Outcome, q.Err = rawlog.OutcomeFailed, "read tcp 127.0.0.1:1->127.0.0.1:2: i/o timeout"
				return q
			}(),
			errKind: "timeout", errMsg: "i/o timeout",
		},
		{
			name: "connection reset",
			q: func() *rawlog.Request {
				q := request(0, send)
				q.Outcome, q.Err, q.Status = rawlog.OutcomeFailed, "read: connection reset by peer", 0
				return q
			}(),
			errKind: "connection_reset",
		},
		{
			name: "cancelled by the plan",
			q: func() *rawlog.Request {
				q := request(0, send, read{send + 20*ms, chunk(" w")})
				q.Outcome = rawlog.OutcomeCancelled
				return q
			}(),
			errKind: "cancelled", errMsg: "cancelled after",
		},
		{
			name: "never sent",
			q: &rawlog.Request{Outcome: rawlog.OutcomeNotSent, IntendedNs: send, ReadyNs: -1, WriteStartNs: -1, WriteEndNs: -1,
				HeaderNs: -1, EndNs: -1, ConnectStartNs: -1, ConnectEndNs: -1, Err: "run interrupted"},
			errKind: "not_sent",
			missing: []MetricID{MScheduleLag, MErrorISL},
		},
		{
			name: "non-streaming chat body",
			q: request(0, send,
				read{send + 100*ms, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"w w w w"}}],`},
				read{send + 101*ms, `"usage":{"prompt_tokens":100,"completion_tokens":4,"total_tokens":104}}`}),
			want:    want{MRequestLatency: 101 * float64(ms), MOutputSequenceLength: 4, ME2EOutputTokenThroughput: 4 / 0.101},
			missing: []MetricID{MTimeToFirstToken, MInterTokenLatency, MTimeToSecondToken},
		},
		{
			name: "open-loop schedule: lag, slot wait and corrected latencies",
			q: func() *rawlog.Request {
				q := request(0, send, read{send + 20*ms, chunk(" w")}, read{send + 25*ms, chunk(" w") + doneEvent})
				q.IntendedNs, q.ReadyNs = send-7*ms, send-2*ms
				return q
			}(),
			want: want{MScheduleLag: 7 * float64(ms), MSlotWait: 5 * float64(ms), MDispatchLag: 2 * float64(ms),
				MCorrectedTimeToFirstToken: 27 * float64(ms), MCorrectedRequestLatency: 32 * float64(ms),
				MTimeToFirstToken: 20 * float64(ms)},
		},
		{
			name:    "embeddings: no token metrics",
			ep:      "embeddings",
			q:       request(0, send, read{send + 8*ms, `{"object":"list","data":[{"object":"embedding","embedding":[0.1,0.2],"index":0}],"usage":{"prompt_tokens":5,"total_tokens":5}}`}),
			want:    want{MRequestLatency: 8 * float64(ms), MItemCount: 1},
			missing: []MetricID{MOutputSequenceLength, MInputSequenceLength, MTimeToFirstToken},
		},
		{
			name:    "rankings: item count is the ranked passages",
			ep:      "cohere_rankings",
			q:       request(0, send, read{send + 9*ms, `{"id":"r","results":[{"index":1,"relevance_score":0.9},{"index":0,"relevance_score":0.2},{"index":2,"relevance_score":0.1}],"meta":{}}`}),
			want:    want{MRequestLatency: 9 * float64(ms), MItemCount: 3},
			missing: []MetricID{MOutputSequenceLength, MInputSequenceLength, MTimeToFirstToken},
		},
		{
			name: "streamed images: completed events are the items, partial images are not",
			ep:   "image_generation",
			q: request(0, send,
				read{send + 20*ms, "event: image_generation.partial_image\n" + sseData(`{"type":"image_generation.partial_image","b64_json":"AA=="}`)},
				read{send + 25*ms, "event: image_generation.completed\n" + sseData(`{"type":"image_generation.completed","b64_json":"AA=="}`)},
				read{send + 30*ms, "event: image_generation.completed\n" + sseData(`{"type":"image_generation.completed","b64_json":"AA==","usage":{"input_tokens":2,"output_tokens":9,"total_tokens":11}}`)}),
			want:    want{MRequestLatency: 30 * float64(ms), MItemCount: 2},
			missing: []MetricID{MTimeToFirstToken, MOutputSequenceLength, MInterTokenLatency},
		},
		{
			name:    "a chat plan answered by another API's body names the endpoint",
			q:       request(0, send, read{send + 8*ms, `{"created":1,"data":[{"b64_json":"AA=="}],"usage":{"input_tokens":3,"output_tokens":1,"total_tokens":4}}`}),
			errKind: "invalid_response", errMsg: `endpoint chat: unexpected response shape: missing "choices" (has "data"`,
			want: want{MErrorISL: 100},
		},
		{
			name:    "a body that is neither JSON nor SSE names the endpoint",
			ep:      "responses",
			q:       request(0, send, read{send + 8*ms, "<html>bad gateway</html>"}),
			errKind: "invalid_response", errMsg: "endpoint responses: response body is neither JSON nor an event stream",
		},
		{
			name: "no content names the endpoint",
			ep:   "anthropic_messages",
			q: request(0, send, read{send + 8*ms, "event: ping\ndata: {\"type\":\"ping\"}\n\n"},
				read{send + 9*ms, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"}),
			errKind: "no_content", errMsg: "endpoint anthropic_messages: response has no content",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ep := tc.ep
			if ep == "" {
				ep = "chat"
			}
			p := newTestProcessor(t, ep, tc.server)
			rec := mmapds.Record{Phase: mmapds.PhaseProfile, ISL: 100, OSL: tc.osl, DelayNs: -1}
			m := p.compute(tc.q, &rec, 123)
			if tc.errKind != "" {
				if m.Valid || m.Err == nil {
					t.Fatalf("valid; want error %s", tc.errKind)
				}
				if m.Err.Kind != tc.errKind || !strings.Contains(m.Err.Message, tc.errMsg) {
					t.Fatalf("error %+v; want kind %s with %q", m.Err, tc.errKind, tc.errMsg)
				}
			} else if !m.Valid {
				t.Fatalf("invalid: %+v", m.Err)
			}
			for id, v := range tc.want {
				got, ok := m.Values[id], m.Has[id]
				if !ok {
					t.Errorf("%s missing; want %v", catalog[id].Tag, v)
					continue
				}
				if math.Abs(got-v) > 1e-9*math.Max(1, math.Abs(v)) {
					t.Errorf("%s = %v; want %v", catalog[id].Tag, got, v)
				}
			}
			for _, id := range tc.missing {
				if m.Has[id] {
					t.Errorf("%s = %v; want unset", catalog[id].Tag, m.Values[id])
				}
			}
			if tc.icl != nil && !slices.Equal(m.ICL, tc.icl) {
				t.Errorf("ICL %v; want %v", m.ICL, tc.icl)
			}
			if tc.epr != nil && !slices.Equal(m.EPR, tc.epr) {
				t.Errorf("events per read %v; want %v", m.EPR, tc.epr)
			}
			if m.SameReadGaps != tc.sameRead {
				t.Errorf("same-read gaps %d; want %d", m.SameReadGaps, tc.sameRead)
			}
		})
	}
}

func TestTransportKind(t *testing.T) {
	for in, want := range map[string]string{
		"context deadline exceeded":                         "timeout",
		"dial tcp 127.0.0.1:9: connect: connection refused": "connection_refused",
		"write: broken pipe":                                "broken_pipe",
		"unexpected EOF":                                    "eof",
		"tls: bad certificate":                              "transport_error",
	} {
		if got := transportKind(in); got != want {
			t.Errorf("transportKind(%q) = %s; want %s", in, got, want)
		}
	}
}

// fuzzAPIs are the endpoint types FuzzRequestMetrics parses bodies as.
var fuzzAPIs = []string{"chat", "completions", "responses", "anthropic_messages", "huggingface_generate", "raw", "image_generation", "embeddings"}

// FuzzRequestMetrics feeds arbitrary bodies, cut into arbitrary reads, through the
// per-request computation as any of fuzzAPIs: it must never panic, and what it reports must
// be consistent. Reading events through the event template (which outlives a request, as in
// analysis) must give exactly what parsing every event gives, and the verdict must not depend
// on how the reads split the body.
func FuzzRequestMetrics(f *testing.F) {
	f.Add([]byte(roleChunk()+chunk(" w")+chunk(" w")+usageChunk(1, 2)+doneEvent), []byte{3, 50, 7}, false, uint8(0))
	f.Add([]byte(reasoningChunk(" r")+chunk(" w")), []byte{1}, true, uint8(0))
	f.Add([]byte("event: error\ndata: {\"error\":\"x\"}\n\n"), []byte{}, false, uint8(0))
	f.Add([]byte(`{"choices":[{"message":{"content":"a b"}}]}`), []byte{5}, false, uint8(0))
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"\\ud800\"}}]}\r\rdata: [DONE]\r\r"), []byte{9, 9}, false, uint8(0))
	f.Add([]byte(sseData(`{"choices":[{"delta":{"content":"\u0077"}}],"note":"w"}`)+sseData(`{"choices":[{"delta":{"content":"\u0077"}}],"note":"zz"}`)), []byte{60}, false, uint8(0))
	f.Add([]byte(chunk(" a")+chunk(" b\n")+chunk(" c")+reasoningChunk("r")+chunk("")+chunk(" d")), []byte{80, 80}, false, uint8(0))
	// The one-event stream without [DONE] that the memo once passed (issue 24), after a whole
	// stream of its shape taught the memo (seeds run in order, on the same processors).
	f.Add([]byte("data:{\"id\":\"chat.completion.chunk\",\"choices\":[{\"delta\":{\"content\":\"1\"}}]}\n\ndata: [DONE]\n\n"), []byte{}, false, uint8(0))
	f.Add([]byte("\ndata:{\"id\":\"chat.completion.chunk\",\"choices\":[{\"delta\":{\"content\":\"0\"}}]}"), []byte{}, false, uint8(0))
	f.Add([]byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\" w\"}}\n\n"), []byte{9}, false, uint8(3))
	f.Add([]byte("event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\" w\"}\n\n"), []byte{9}, false, uint8(2))
	f.Add([]byte(`data: {"token":{"id":1,"text":" w","special":false}}`+"\n\n"), []byte{4}, false, uint8(4))
	type pair struct{ memo, full, one *processor }
	procs := make([]pair, len(fuzzAPIs))
	for i, name := range fuzzAPIs {
		procs[i] = pair{newTestProcessor(f, name, false), newTestProcessor(f, name, false), newTestProcessor(f, name, false)}
		procs[i].full.noMemo = true
	}
	f.Fuzz(func(t *testing.T, body, cuts []byte, server bool, api uint8) {
		pp := procs[int(api)%len(procs)]
		p, slow := pp.memo, pp.full
		p.cfg.server, slow.cfg.server, pp.one.cfg.server = server, server, server
		q := &rawlog.Request{Outcome: rawlog.OutcomeCompleted, Status: 200, IntendedNs: 0, ReadyNs: 0, ConnectStartNs: -1, ConnectEndNs: -1,
			WriteStartNs: 10, WriteEndNs: 20, HeaderNs: 30, EndNs: 0, Body: body}
		at, off := int64(40), 0
		for _, c := range cuts {
			off += int(c)
			if off > len(body) {
				break
			}
			q.ReadNs = append(q.ReadNs, at)
			q.ReadEnd = append(q.ReadEnd, uint32(off))
			at += int64(c) * 1000
		}
		q.ReadNs = append(q.ReadNs, at)
		q.ReadEnd = append(q.ReadEnd, uint32(len(body)))
		q.EndNs = at + 1
		rec := mmapds.Record{Phase: mmapds.PhaseProfile, ISL: 10, OSL: 4}
		m := p.compute(q, &rec, len(body))
		// Reading events through the event template must give what parsing every event gives.
		ref := slow.compute(q, &rec, len(body))
		if m.Valid != ref.Valid || !slices.Equal(m.Values, ref.Values) || !slices.Equal(m.Has, ref.Has) || !slices.Equal(m.ICL, ref.ICL) ||
			!slices.Equal(m.EPR, ref.EPR) || m.ContentEvents != ref.ContentEvents || !reflect.DeepEqual(m.Err, ref.Err) {
			t.Fatalf("memo path differs from full parsing:\n memo %+v\n full %+v", m, ref)
		}
		if !sameDelta(&p.d, &slow.d) {
			t.Fatalf("memo path's delta differs from full parsing's:\n memo %+v\n full %+v", p.d, slow.d)
		}
		// The same bytes in one read: the same verdict, events and content events.
		q1 := *q
		q1.ReadNs, q1.ReadEnd = []int64{at}, []uint32{uint32(len(body))}
		one := pp.one.compute(&q1, &rec, len(body))
		if one.Valid != m.Valid || !reflect.DeepEqual(one.Err, m.Err) || one.Events != m.Events || one.ContentEvents != m.ContentEvents {
			t.Fatalf("the verdict depends on the reads: in %d reads valid %v err %+v events %d/%d; in one read valid %v err %+v events %d/%d",
				len(q.ReadNs), m.Valid, m.Err, m.Events, m.ContentEvents, one.Valid, one.Err, one.Events, one.ContentEvents)
		}
		if m.Valid == (m.Err != nil) {
			t.Fatalf("valid %v with error %v", m.Valid, m.Err)
		}
		if !m.Valid {
			return
		}
		var sum int64
		for _, g := range m.ICL {
			if g < 0 {
				t.Fatalf("negative gap %d", g)
			}
			sum += g
		}
		if m.Has[MTimeToFirstToken] && float64(sum)+m.Values[MTimeToFirstToken] != m.Values[MRequestLatency] {
			t.Fatalf("TTFT %v + ICL %d != latency %v", m.Values[MTimeToFirstToken], sum, m.Values[MRequestLatency])
		}
		n := int32(0)
		for _, e := range m.EPR {
			n += e
		}
		if int(n) != m.ContentEvents && m.Streamed {
			t.Fatalf("events per read sum %d != content events %d", n, m.ContentEvents)
		}
		for _, o := range []record.Options{{Correlated: true}, {Trace: true}, {Chunks: true}} {
			o.Columns = builtins.columns
			if line := record.AppendJSONL(nil, m, q, &o); !json.Valid(line) {
				t.Fatalf("record %+v is not JSON: %s", o, line)
			}
		}
	})
}

// sameDelta reports whether two deltas hold the same fields.
func sameDelta(a, b *endpoint.Delta) bool {
	return string(a.Content) == string(b.Content) && string(a.Reasoning) == string(b.Reasoning) && a.Usage == b.Usage &&
		a.Done == b.Done && a.Items == b.Items && a.ErrorMsg == b.ErrorMsg && a.EndMarker == b.EndMarker
}

// The event template is never learned from a text that is not the content literal.
func TestEventTemplateSoundness(t *testing.T) {
	const send = 1000 * ms
	bodies := [][]string{
		// The content is escaped; an unrelated field holds the same text plainly.
		{sseData(`{"choices":[{"delta":{"content":"\u0077"}}],"note":"w"}`), sseData(`{"choices":[{"delta":{"content":"\u0077"}}],"note":"zz"}`)},
		// The text also appears elsewhere: ambiguous, so not learned.
		{sseData(`{"id":"w","choices":[{"delta":{"content":"w"}}]}`), sseData(`{"id":"w","choices":[{"delta":{"content":"v"}}]}`)},
		// Reasoning then content of the same shape otherwise.
		{reasoningChunk("think"), reasoningChunk("more"), chunk("out"), chunk("put"), chunk("a\"quote")},
		// Anthropic-style named events.
		{"event: content_block_delta\n" + sseData(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`),
			"event: content_block_delta\n" + sseData(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" there"}}`)},
	}
	for i, events := range bodies {
		var reads []read
		for k, e := range events {
			reads = append(reads, read{send + int64(k+1)*ms, e})
		}
		for _, ep := range []string{"chat", "anthropic_messages"} {
			fast, slow := newTestProcessor(t, ep, false), newTestProcessor(t, ep, false)
			slow.noMemo = true
			rec := mmapds.Record{Phase: mmapds.PhaseProfile, ISL: 10}
			q := request(0, send, reads...)
			a, b := *fast.compute(q, &rec, 0), slow.compute(q, &rec, 0)
			if !slices.Equal(a.Values, b.Values) || !slices.Equal(a.Has, b.Has) || string(fast.d.Content) != string(slow.d.Content) ||
				string(fast.d.Reasoning) != string(slow.d.Reasoning) || a.Valid != b.Valid {
				t.Errorf("body %d on %s: memo content %q reasoning %q, full %q %q", i, ep,
					fast.d.Content, fast.d.Reasoning, slow.d.Content, slow.d.Reasoning)
			}
		}
	}
}

// TestNonTokenResponsesNeedItems: a 2xx answer of an embeddings, rankings or image API that
// returned nothing (an empty list) is no_content, not a success: the request asked for
// vectors, scores or images and got none. A list with items is valid.
func TestNonTokenResponsesNeedItems(t *testing.T) {
	const send = 1000 * ms
	for _, c := range []struct {
		ep, body string
		items    int // 0: want no_content
	}{
		{"embeddings", `{"object":"list","data":[],"model":"m","usage":{"prompt_tokens":5,"total_tokens":5}}`, 0},
		{"embeddings", `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1]}]}`, 1},
		{"nim_embeddings", `{"object":"list","data":[]}`, 0},
		{"chat_embeddings", `{"object":"list","data":[]}`, 0},
		{"cohere_rankings", `{"id":"r","results":[],"meta":{}}`, 0},
		{"cohere_rankings", `{"id":"r","results":[{"index":0,"relevance_score":0.5}]}`, 1},
		{"nim_rankings", `{"rankings":[]}`, 0},
		{"hf_tei_rankings", `[]`, 0},
		{"hf_tei_rankings", `[{"index":0,"score":0.5}]`, 1},
		{"image_generation", `{"created":1,"data":[]}`, 0},
		{"image_generation", `{"created":1,"data":[{"b64_json":"AA=="}]}`, 1},
	} {
		t.Run(c.ep+" "+c.body, func(t *testing.T) {
			p := newTestProcessor(t, c.ep, false)
			rec := mmapds.Record{Phase: mmapds.PhaseProfile, ISL: 10, DelayNs: -1}
			m := p.compute(request(0, send, read{send + 8*ms, c.body}), &rec, 123)
			if c.items == 0 {
				want := "endpoint " + c.ep + ": response has no items"
				if m.Valid || m.Err == nil || m.Err.Kind != "no_content" || !strings.Contains(m.Err.Message, want) {
					t.Fatalf("valid %v, error %+v; want no_content ~ %q", m.Valid, m.Err, want)
				}
				return
			}
			if !m.Valid || m.Values[MItemCount] != float64(c.items) {
				t.Fatalf("valid %v (%+v), items %v; want %d", m.Valid, m.Err, m.Values[MItemCount], c.items)
			}
		})
	}
}
