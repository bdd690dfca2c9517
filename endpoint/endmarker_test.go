package endpoint

import (
	"testing"
)

// events frames a whole stream into its events' data.
func events(stream []byte) [][]byte {
	var sc SSEScanner
	sc.Feed(stream, 0)
	var out [][]byte
	for e, ok := sc.Next(); ok; e, ok = sc.Next() {
		out = append(out, append([]byte(nil), e.Data...))
	}
	for e, ok := sc.Flush(); ok; e, ok = sc.Flush() {
		out = append(out, append([]byte(nil), e.Data...))
	}
	return out
}

// imageStream is an OpenAI image generation stream, as mockllm sends it.
const imageStream = "event: image_generation.partial_image\ndata: {\"type\":\"image_generation.partial_image\",\"b64_json\":\"AAAA\",\"partial_image_index\":0}\n\n" +
	"event: image_generation.completed\ndata: {\"type\":\"image_generation.completed\",\"b64_json\":\"AAAA\",\"usage\":{\"input_tokens\":5,\"output_tokens\":6,\"total_tokens\":11}}\n\n"

// Every streaming protocol with an end marker names it in Delta.EndMarker from its first
// event on, and sets Done only at the marker: a stream cut before the marker has EndMarker
// and not Done, which is how analyze tells a truncated stream. Types without an end marker
// (non-streaming lists, a raw ResponseField) leave EndMarker empty.
func TestEndMarkers(t *testing.T) {
	cases := []struct {
		endpoint, field string
		stream          string // testdata/streams file, or the stream itself
		body            string // testdata/bodies file, for types that do not stream
		want            string
	}{
		{endpoint: "chat", stream: "vllm_chat_usage.sse", want: endOpenAI},
		{endpoint: "chat", stream: "openai_chat_tools_crlf.sse", want: endOpenAI},
		{endpoint: "completions", stream: "vllm_completions.sse", want: endOpenAI},
		{endpoint: "responses", stream: "openai_responses_text.sse", want: endResponses},
		{endpoint: "responses", stream: "vllm_responses_reasoning_tools.sse", want: endResponses},
		{endpoint: "anthropic_messages", stream: "anthropic_tool_use.sse", want: endAnthropic},
		{endpoint: "huggingface_generate", stream: "tgi_generate_stream.sse", want: endTGI},
		{endpoint: "image_generation", stream: imageStream, want: endImages},
		{endpoint: "raw", stream: "vllm_chat_usage.sse", want: endOpenAI},
		{endpoint: "raw", stream: "anthropic_thinking.sse", want: endAnthropic},
		{endpoint: "raw", stream: "tgi_generate_stream.sse", want: endTGI},
		{endpoint: "template", stream: "openai_responses_text.sse", want: endResponses},
		// A raw ResponseField names no protocol: no end marker is expected.
		{endpoint: "raw", field: "choices.0.delta.content", stream: "vllm_chat_usage.sse", want: ""},
		{endpoint: "embeddings", body: "openai_embeddings.json", want: ""},
		{endpoint: "chat_embeddings", body: "openai_embeddings.json", want: ""},
		{endpoint: "nim_embeddings", body: "openai_embeddings.json", want: ""},
		{endpoint: "nim_rankings", body: "nim_rankings.json", want: ""},
		{endpoint: "hf_tei_rankings", body: "tei_rerank.json", want: ""},
		{endpoint: "cohere_rankings", body: "cohere_rerank.json", want: ""},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		covered[c.endpoint] = true
		name := c.endpoint + "/" + c.field + "/" + c.stream + c.body
		ep, err := Lookup(c.endpoint)
		if err != nil {
			t.Fatal(err)
		}
		ep.ResponseField = c.field
		if c.body != "" {
			var d Delta
			if err := ep.ParseEvent(readTestdata(t, "bodies", c.body), &d); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if d.EndMarker != c.want {
				t.Errorf("%s: end marker %q, want %q", name, d.EndMarker, c.want)
			}
			continue
		}
		stream := []byte(c.stream)
		if c.stream != imageStream {
			stream = readTestdata(t, "streams", c.stream)
		}
		evs := events(stream)
		var d Delta
		doneAt := -1
		for i, e := range evs {
			if err := ep.ParseEvent(e, &d); err != nil {
				t.Fatalf("%s: event %d: %v", name, i, err)
			}
			if d.Done && doneAt < 0 {
				doneAt = i
			}
			if c.want != "" && d.EndMarker != c.want {
				t.Fatalf("%s: after event %d end marker %q, want %q", name, i, d.EndMarker, c.want)
			}
		}
		if c.want == "" {
			if d.EndMarker != "" {
				t.Errorf("%s: end marker %q, want none", name, d.EndMarker)
			}
			continue
		}
		if doneAt < 1 {
			t.Fatalf("%s: done at event %d of %d", name, doneAt, len(evs))
		}
		// The stream cut before its marker: the protocol is known, the end never came.
		var cut Delta
		for _, e := range evs[:doneAt] {
			ep.ParseEvent(e, &cut)
		}
		if cut.Done || cut.EndMarker != c.want {
			t.Errorf("%s: cut before event %d: done %v, end marker %q", name, doneAt, cut.Done, cut.EndMarker)
		}
	}
	for _, n := range Names() {
		if !covered[n] {
			t.Errorf("endpoint type %s has no end-marker case", n)
		}
	}
}
