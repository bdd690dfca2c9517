package mockllm

import "github.com/llmbench/llmbench/internal/jsonwire"

// OpenAI chat completions and completions, as vLLM serves them.

// The id prefix and object type of each OpenAI object the mock renders.
const (
	chatIDPrefix       = "chatcmpl-"
	completionIDPrefix = "cmpl-"
	chatChunkObject    = "chat.completion.chunk"
	chatObject         = "chat.completion"
	completionObject   = "text_completion"
)

// appendOpenAIHead appends the fields every chat and completions object (body or chunk)
// opens with, up to the model.
func (g *gen) appendOpenAIHead(b []byte, idPrefix, object string) []byte {
	b = append(b, `{"id":"`...)
	b = append(b, idPrefix...)
	b = append(b, g.id...)
	b = append(b, `","object":"`...)
	b = append(b, object...)
	b = append(b, `","created":`...)
	b = jsonwire.AppendInt(b, g.created)
	b = append(b, `,"model":`...)
	return jsonwire.AppendString(b, g.model)
}

func (g *gen) chatFinishReason() string {
	switch g.finish {
	case finishLength:
		return `"length"`
	case finishTool:
		return `"tool_calls"`
	}
	return `"stop"`
}

func (g *gen) appendOpenAIUsage(b []byte) []byte {
	b = append(b, `{"prompt_tokens":`...)
	b = jsonwire.AppendInt(b, g.promptTokens)
	b = append(b, `,"completion_tokens":`...)
	b = jsonwire.AppendInt(b, g.outputTokens)
	b = append(b, `,"total_tokens":`...)
	b = jsonwire.AppendInt(b, g.promptTokens+g.outputTokens)
	b = append(b, `,"completion_tokens_details":{"reasoning_tokens":`...)
	b = jsonwire.AppendInt(b, len(g.reasoning))
	// vLLM writes prompt_tokens_details only when it has something to say in it.
	if g.audioTokens > 0 || g.cachedTokens > 0 {
		b = append(b, `},"prompt_tokens_details":{`...)
		if g.cachedTokens > 0 {
			b = append(b, `"cached_tokens":`...)
			b = jsonwire.AppendInt(b, g.cachedTokens)
			if g.audioTokens > 0 {
				b = append(b, ',')
			}
		}
		if g.audioTokens > 0 {
			b = append(b, `"audio_tokens":`...)
			b = jsonwire.AppendInt(b, g.audioTokens)
		}
	}
	return append(b, `}}`...)
}

// chatPreamble is the role-only first chunk vLLM sends.
func (g *gen) chatPreamble(b []byte) []byte {
	b = sseData(b)
	b = g.appendOpenAIHead(b, chatIDPrefix, chatChunkObject)
	b = append(b, `,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`...)
	return sseEnd(b)
}

func (g *gen) chatEvent(b []byte, j int) []byte {
	c := g.chunks[j]
	b = sseData(b)
	b = g.appendOpenAIHead(b, chatIDPrefix, chatChunkObject)
	b = append(b, `,"choices":[{"index":0,"delta":{`...)
	switch c.kind {
	case chunkReasoning:
		b = append(b, `"reasoning_content":"`...)
		b = g.appendPieces(b, c)
		b = append(b, '"')
	case chunkContent:
		b = append(b, `"content":"`...)
		b = g.appendPieces(b, c)
		b = append(b, '"')
	case chunkToolName:
		b = append(b, `"tool_calls":[{"index":0,"id":`...)
		b = jsonwire.AppendString(b, g.tool.callID)
		b = append(b, `,"type":"function","function":{"name":"`...)
		b = g.appendPieces(b, c)
		b = append(b, `","arguments":""}}]`...)
	case chunkToolArgs:
		b = append(b, `"tool_calls":[{"index":0,"function":{"arguments":"`...)
		b = g.appendPieces(b, c)
		b = append(b, `"}}]`...)
	}
	b = append(b, `},"logprobs":null,"finish_reason":`...)
	return g.endOpenAIChunk(b, j, chatIDPrefix, chatChunkObject)
}

// endOpenAIChunk ends stream chunk j from its finish_reason value on; after the last chunk
// it adds the usage chunk (when asked for) and [DONE]. idPrefix and object name the chunks.
func (g *gen) endOpenAIChunk(b []byte, j int, idPrefix, object string) []byte {
	last := j == len(g.chunks)-1
	if last {
		b = append(b, g.chatFinishReason()...)
	} else {
		b = append(b, `null`...)
	}
	b = g.appendVLLMStopReason(b, last, object)
	b = append(b, `}]}`...)
	b = sseEnd(b)
	if last {
		if g.includeUsage {
			b = sseData(b)
			b = g.appendOpenAIHead(b, idPrefix, object)
			b = append(b, `,"choices":[],"usage":`...)
			if g.vllm {
				b = g.appendVLLMUsage(b)
			} else {
				b = g.appendOpenAIUsage(b)
			}
			b = append(b, '}')
			b = sseEnd(b)
		}
		b = append(b, "data: [DONE]\n\n"...)
	}
	return b
}

func (g *gen) chatBody(b []byte) []byte {
	b = g.appendOpenAIHead(b, chatIDPrefix, chatObject)
	b = append(b, `,"choices":[{"index":0,"message":{"role":"assistant","content":`...)
	if g.tool != nil {
		b = append(b, `null`...)
	} else {
		b = jsonwire.AppendString(b, g.contentText())
	}
	if len(g.reasoning) > 0 {
		b = append(b, `,"reasoning_content":`...)
		b = jsonwire.AppendString(b, g.reasoningText())
	}
	if g.tool != nil {
		b = append(b, `,"tool_calls":[{"id":`...)
		b = jsonwire.AppendString(b, g.tool.callID)
		b = append(b, `,"type":"function","function":{"name":`...)
		b = jsonwire.AppendString(b, g.tool.name)
		b = append(b, `,"arguments":`...)
		b = jsonwire.AppendString(b, g.tool.argsText)
		b = append(b, `}}]`...)
	}
	b = append(b, `},"logprobs":null,"finish_reason":`...)
	b = append(b, g.chatFinishReason()...)
	b = append(b, `}],"usage":`...)
	b = g.appendOpenAIUsage(b)
	return append(b, '}')
}

func (g *gen) completionEvent(b []byte, j int) []byte {
	c := g.chunks[j]
	b = sseData(b)
	b = g.appendOpenAIHead(b, completionIDPrefix, completionObject)
	b = append(b, `,"choices":[{"index":0,"text":"`...)
	b = g.appendPieces(b, c)
	b = append(b, `","logprobs":null,"finish_reason":`...)
	return g.endOpenAIChunk(b, j, completionIDPrefix, completionObject)
}

func (g *gen) completionBody(b []byte) []byte {
	b = g.appendOpenAIHead(b, completionIDPrefix, completionObject)
	b = append(b, `,"choices":[{"index":0,"text":`...)
	b = jsonwire.AppendString(b, g.contentText())
	b = append(b, `,"logprobs":null,"finish_reason":`...)
	b = append(b, g.chatFinishReason()...)
	b = append(b, `}],"usage":`...)
	b = g.appendOpenAIUsage(b)
	return append(b, '}')
}

// openAIStreamError is the error event inside a 200 stream.
func (g *gen) openAIStreamError(b []byte) []byte {
	b = sseEvent(b, "error")
	b = append(b, `{"error":{"message":"mockllm: injected stream error","type":"server_error","param":null,"code":500}}`...)
	return sseEnd(b)
}
