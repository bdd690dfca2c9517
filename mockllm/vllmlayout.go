package mockllm

import "github.com/llmbench/llmbench/internal/jsonwire"

// vLLM's chunk layout (Options.VLLMChunks), as its OpenAI server writes a stream
// (vllm/entrypoints/openai/serving_chat.py and serving_completion.py, models in protocol.py,
// serialised by pydantic with exclude_unset): the id is the prefix and a uuid4's 32 hex
// digits; the role-only first chunk {"role":"assistant","content":""} (chatPreamble); every
// chunk carries "logprobs":null and finish_reason; a chat stream's last token chunk adds
// "stop_reason":null after its finish_reason, a completions stream's every chunk does; the
// usage chunk (stream_options.include_usage) has "choices":[] and usage's fields in
// UsageInfo's order, prompt_tokens, total_tokens, completion_tokens, with
// prompt_tokens_details only when it holds cached tokens.

// vllmID is a request's id: 32 hex digits, as uuid4().hex.
func vllmID(seed, seq uint64) string {
	b := appendHex(make([]byte, 0, 32), mix(seed, seq, saltID))
	return string(appendHex(b, mix(seed, seq, saltID+1)))
}

// appendVLLMStopReason appends `,"stop_reason":null` where vLLM writes it: on a chat
// stream's last chunk and on every completions chunk.
func (g *gen) appendVLLMStopReason(b []byte, last bool, object string) []byte {
	if g.vllm && (last || object == completionObject) {
		b = append(b, `,"stop_reason":null`...)
	}
	return b
}

// appendVLLMUsage appends the usage object in UsageInfo's field order.
func (g *gen) appendVLLMUsage(b []byte) []byte {
	b = append(b, `{"prompt_tokens":`...)
	b = jsonwire.AppendInt(b, g.promptTokens)
	b = append(b, `,"total_tokens":`...)
	b = jsonwire.AppendInt(b, g.promptTokens+g.outputTokens)
	b = append(b, `,"completion_tokens":`...)
	b = jsonwire.AppendInt(b, g.outputTokens)
	if g.cachedTokens > 0 {
		b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
		b = jsonwire.AppendInt(b, g.cachedTokens)
		b = append(b, '}')
	}
	return append(b, '}')
}
