package mockllm

import (
	"encoding/json"

	"github.com/llmbench/llmbench/internal/jsonwire"
)

// OpenAI Responses API (/v1/responses). Streaming opens one output item
// per kind of output (reasoning, then a message or a function call),
// with the event sequence OpenAI and vLLM send.

func (g *gen) respEvent(b []byte, typ string) []byte {
	b = sseEvent(b, typ)
	b = append(b, `{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","sequence_number":`...)
	b = jsonwire.AppendInt(b, g.respSeq)
	g.respSeq++
	return b
}

func (g *gen) respItemID(b []byte, kind chunkKind) []byte {
	switch kind {
	case chunkReasoning:
		b = append(b, `"rs_`...)
	case chunkContent:
		b = append(b, `"msg_`...)
	default:
		b = append(b, `"fc_`...)
	}
	b = append(b, g.id...)
	return append(b, '"')
}

func (g *gen) appendRespUsage(b []byte) []byte {
	b = append(b, `{"input_tokens":`...)
	b = jsonwire.AppendInt(b, g.promptTokens)
	b = append(b, `,"input_tokens_details":{"cached_tokens":`...)
	b = jsonwire.AppendInt(b, g.cachedTokens)
	b = append(b, `},"output_tokens":`...)
	b = jsonwire.AppendInt(b, g.outputTokens)
	b = append(b, `,"output_tokens_details":{"reasoning_tokens":`...)
	b = jsonwire.AppendInt(b, len(g.reasoning))
	b = append(b, `},"total_tokens":`...)
	b = jsonwire.AppendInt(b, g.promptTokens+g.outputTokens)
	return append(b, '}')
}

// appendRespObject appends the response object; done selects the final
// form (status, output items, usage) over the in-progress one.
func (g *gen) appendRespObject(b []byte, done bool) []byte {
	b = append(b, `{"id":"resp_`...)
	b = append(b, g.id...)
	b = append(b, `","object":"response","created_at":`...)
	b = jsonwire.AppendInt(b, g.created)
	b = append(b, `,"model":`...)
	b = jsonwire.AppendString(b, g.model)
	if !done {
		return append(b, `,"status":"in_progress","error":null,"incomplete_details":null,"output":[],"usage":null}`...)
	}
	if g.finish == finishLength {
		b = append(b, `,"status":"incomplete","error":null,"incomplete_details":{"reason":"max_output_tokens"}`...)
	} else {
		b = append(b, `,"status":"completed","error":null,"incomplete_details":null`...)
	}
	b = append(b, `,"output":[`...)
	n := 0
	if len(g.reasoning) > 0 {
		b = g.appendRespItem(b, chunkReasoning, true)
		n++
	}
	if g.tool != nil {
		if n > 0 {
			b = append(b, ',')
		}
		b = g.appendRespItem(b, chunkToolName, true)
	} else if len(g.content) > 0 {
		if n > 0 {
			b = append(b, ',')
		}
		b = g.appendRespItem(b, chunkContent, true)
	}
	b = append(b, `],"usage":`...)
	b = g.appendRespUsage(b)
	return append(b, '}')
}

// appendRespItem appends an output item, empty (in progress) or whole.
func (g *gen) appendRespItem(b []byte, kind chunkKind, done bool) []byte {
	status := `"in_progress"`
	if done {
		status = `"completed"`
	}
	b = append(b, `{"id":`...)
	b = g.respItemID(b, kind)
	switch kind {
	case chunkReasoning:
		b = append(b, `,"type":"reasoning","summary":[],"content":[`...)
		if done {
			b = append(b, `{"type":"reasoning_text","text":`...)
			b = jsonwire.AppendString(b, g.reasoningText())
			b = append(b, '}')
		}
		b = append(b, `],"status":`...)
		b = append(b, status...)
	case chunkContent:
		b = append(b, `,"type":"message","status":`...)
		b = append(b, status...)
		b = append(b, `,"role":"assistant","content":[`...)
		if done {
			b = append(b, `{"type":"output_text","text":`...)
			b = jsonwire.AppendString(b, g.contentText())
			b = append(b, `,"annotations":[],"logprobs":[]}`...)
		}
		b = append(b, ']')
	default:
		b = append(b, `,"type":"function_call","status":`...)
		b = append(b, status...)
		b = append(b, `,"arguments":`...)
		if done {
			b = jsonwire.AppendString(b, g.tool.argsText)
		} else {
			b = append(b, `""`...)
		}
		b = append(b, `,"call_id":`...)
		b = jsonwire.AppendString(b, g.tool.callID)
		b = append(b, `,"name":`...)
		b = jsonwire.AppendString(b, g.tool.name)
	}
	return append(b, '}')
}

// respObjectEvent appends a whole event carrying the response object.
func (g *gen) respObjectEvent(b []byte, typ string, done bool) []byte {
	b = g.respEvent(b, typ)
	b = append(b, `,"response":`...)
	b = g.appendRespObject(b, done)
	b = append(b, '}')
	return sseEnd(b)
}

func (g *gen) respPreamble(b []byte) []byte {
	b = g.respObjectEvent(b, "response.created", false)
	return g.respObjectEvent(b, "response.in_progress", false)
}

// respItemEvent appends a whole event carrying the open output item, empty or whole.
func (g *gen) respItemEvent(b []byte, typ string, kind chunkKind, done bool) []byte {
	b = g.respEvent(b, typ)
	b = append(b, `,"output_index":`...)
	b = jsonwire.AppendInt(b, g.blockIdx)
	b = append(b, `,"item":`...)
	b = g.appendRespItem(b, kind, done)
	b = append(b, '}')
	return sseEnd(b)
}

func (g *gen) respItemHead(b []byte, typ string, kind chunkKind) []byte {
	b = g.respEvent(b, typ)
	b = append(b, `,"item_id":`...)
	b = g.respItemID(b, kind)
	b = append(b, `,"output_index":`...)
	return jsonwire.AppendInt(b, g.blockIdx)
}

// respOpen starts the output item of kind.
func (g *gen) respOpen(b []byte, kind chunkKind) []byte {
	b = g.respItemEvent(b, "response.output_item.added", kind, false)
	if kind == chunkReasoning || kind == chunkContent {
		b = g.respItemHead(b, "response.content_part.added", kind)
		b = append(b, `,"content_index":0,"part":`...)
		if kind == chunkReasoning {
			b = append(b, `{"type":"reasoning_text","text":""}}`...)
		} else {
			b = append(b, `{"type":"output_text","text":"","annotations":[],"logprobs":[]}}`...)
		}
		b = sseEnd(b)
	}
	return b
}

// respClose ends the open output item with its done events.
func (g *gen) respClose(b []byte, kind chunkKind) []byte {
	switch kind {
	case chunkReasoning, chunkContent:
		text := g.contentText()
		doneTyp, partTyp := "response.output_text.done", `{"type":"output_text","text":`
		if kind == chunkReasoning {
			text = g.reasoningText()
			doneTyp, partTyp = "response.reasoning_text.done", `{"type":"reasoning_text","text":`
		}
		b = g.respItemHead(b, doneTyp, kind)
		b = append(b, `,"content_index":0,"text":`...)
		b = jsonwire.AppendString(b, text)
		if kind == chunkContent {
			b = append(b, `,"logprobs":[]`...)
		}
		b = append(b, '}')
		b = sseEnd(b)
		b = g.respItemHead(b, "response.content_part.done", kind)
		b = append(b, `,"content_index":0,"part":`...)
		b = append(b, partTyp...)
		b = jsonwire.AppendString(b, text)
		if kind == chunkContent {
			b = append(b, `,"annotations":[],"logprobs":[]`...)
		}
		b = append(b, `}}`...)
		b = sseEnd(b)
	default:
		b = g.respItemHead(b, "response.function_call_arguments.done", kind)
		b = append(b, `,"arguments":`...)
		b = jsonwire.AppendString(b, g.tool.argsText)
		b = append(b, '}')
		b = sseEnd(b)
	}
	return g.respItemEvent(b, "response.output_item.done", kind, true)
}

// itemKind folds the tool's two chunk kinds into one output item.
func itemKind(k chunkKind) chunkKind {
	if k == chunkToolArgs {
		return chunkToolName
	}
	return k
}

// enterItem makes kind's output item (Responses) or content block (Anthropic) the open one:
// when another is open, it closes that one and opens kind's at the next index. closeFn and
// openFn render the API's events (method expressions, so nothing is allocated).
func (g *gen) enterItem(b []byte, kind chunkKind, closeFn, openFn func(*gen, []byte, chunkKind) []byte) []byte {
	if int(kind) == g.openKind {
		return b
	}
	if g.openKind >= 0 {
		b = closeFn(g, b, chunkKind(g.openKind))
		g.blockIdx++
	}
	b = openFn(g, b, kind)
	g.openKind = int(kind)
	return b
}

func (g *gen) respStreamEvent(b []byte, j int) []byte {
	c := g.chunks[j]
	kind := itemKind(c.kind)
	b = g.enterItem(b, kind, (*gen).respClose, (*gen).respOpen)
	switch c.kind {
	case chunkReasoning:
		b = g.respItemHead(b, "response.reasoning_text.delta", kind)
		b = append(b, `,"content_index":0,"delta":"`...)
		b = g.appendPieces(b, c)
		b = append(b, `"}`...)
		b = sseEnd(b)
	case chunkContent:
		b = g.respItemHead(b, "response.output_text.delta", kind)
		b = append(b, `,"content_index":0,"delta":"`...)
		b = g.appendPieces(b, c)
		b = append(b, `","logprobs":[]}`...)
		b = sseEnd(b)
	case chunkToolArgs:
		b = g.respItemHead(b, "response.function_call_arguments.delta", kind)
		b = append(b, `,"delta":"`...)
		b = g.appendPieces(b, c)
		b = append(b, `"}`...)
		b = sseEnd(b)
	case chunkToolName:
		// output_item.added above carried the name.
	}
	if j == len(g.chunks)-1 {
		b = g.respClose(b, kind)
		b = g.respObjectEvent(b, "response.completed", true)
	}
	return b
}

func (g *gen) respBody(b []byte) []byte { return g.appendRespObject(b, true) }

func (g *gen) respStreamError(b []byte) []byte {
	b = g.respEvent(b, "error")
	b = append(b, `,"code":"server_error","message":"mockllm: injected stream error","param":null}`...)
	return sseEnd(b)
}

// Anthropic Messages API (/v1/messages).

func (g *gen) anthropicStopReason() string {
	switch g.finish {
	case finishLength:
		return `"max_tokens"`
	case finishTool:
		return `"tool_use"`
	}
	return `"end_turn"`
}

func (g *gen) anthPreamble(b []byte) []byte {
	b = sseEvent(b, "message_start")
	b = append(b, `{"type":"message_start","message":{"id":"msg_`...)
	b = append(b, g.id...)
	b = append(b, `","type":"message","role":"assistant","model":`...)
	b = jsonwire.AppendString(b, g.model)
	b = append(b, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":`...)
	b = jsonwire.AppendInt(b, g.promptTokens)
	b = append(b, `,"output_tokens":1}}}`...)
	b = sseEnd(b)
	b = sseEvent(b, "ping")
	b = append(b, `{"type": "ping"}`...)
	return sseEnd(b)
}

func (g *gen) anthSignature() string { return "bW9ja2xsbS1zaWduYXR1cmUt" + g.id }

// anthBlockEvent opens an event of type typ about the open content block, up to its index.
func (g *gen) anthBlockEvent(b []byte, typ string) []byte {
	b = sseEvent(b, typ)
	b = append(b, `{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","index":`...)
	return jsonwire.AppendInt(b, g.blockIdx)
}

func (g *gen) anthClose(b []byte, kind chunkKind) []byte {
	if kind == chunkReasoning {
		b = g.anthBlockEvent(b, "content_block_delta")
		b = append(b, `,"delta":{"type":"signature_delta","signature":"`...)
		b = append(b, g.anthSignature()...)
		b = append(b, `"}}`...)
		b = sseEnd(b)
	}
	b = g.anthBlockEvent(b, "content_block_stop")
	b = append(b, '}')
	return sseEnd(b)
}

func (g *gen) anthOpen(b []byte, kind chunkKind) []byte {
	b = g.anthBlockEvent(b, "content_block_start")
	switch kind {
	case chunkReasoning:
		b = append(b, `,"content_block":{"type":"thinking","thinking":"","signature":""}}`...)
	case chunkContent:
		b = append(b, `,"content_block":{"type":"text","text":""}}`...)
	default:
		b = append(b, `,"content_block":{"type":"tool_use","id":"toolu_`...)
		b = append(b, g.id...)
		b = append(b, `","name":`...)
		b = jsonwire.AppendString(b, g.tool.name)
		b = append(b, `,"input":{}}}`...)
	}
	return sseEnd(b)
}

func (g *gen) anthStreamEvent(b []byte, j int) []byte {
	c := g.chunks[j]
	kind := itemKind(c.kind)
	b = g.enterItem(b, kind, (*gen).anthClose, (*gen).anthOpen)
	if c.kind != chunkToolName {
		b = g.anthBlockEvent(b, "content_block_delta")
		switch c.kind {
		case chunkReasoning:
			b = append(b, `,"delta":{"type":"thinking_delta","thinking":"`...)
		case chunkContent:
			b = append(b, `,"delta":{"type":"text_delta","text":"`...)
		default:
			b = append(b, `,"delta":{"type":"input_json_delta","partial_json":"`...)
		}
		b = g.appendPieces(b, c)
		b = append(b, `"}}`...)
		b = sseEnd(b)
	}
	if j == len(g.chunks)-1 {
		b = g.anthClose(b, kind)
		b = sseEvent(b, "message_delta")
		b = append(b, `{"type":"message_delta","delta":{"stop_reason":`...)
		b = append(b, g.anthropicStopReason()...)
		b = append(b, `,"stop_sequence":null},"usage":{"output_tokens":`...)
		b = jsonwire.AppendInt(b, g.outputTokens)
		b = append(b, `}}`...)
		b = sseEnd(b)
		b = sseEvent(b, "message_stop")
		b = append(b, `{"type":"message_stop"}`...)
		b = sseEnd(b)
	}
	return b
}

func (g *gen) anthBody(b []byte) []byte {
	b = append(b, `{"id":"msg_`...)
	b = append(b, g.id...)
	b = append(b, `","type":"message","role":"assistant","model":`...)
	b = jsonwire.AppendString(b, g.model)
	b = append(b, `,"content":[`...)
	n := 0
	if len(g.reasoning) > 0 {
		b = append(b, `{"type":"thinking","thinking":`...)
		b = jsonwire.AppendString(b, g.reasoningText())
		b = append(b, `,"signature":"`...)
		b = append(b, g.anthSignature()...)
		b = append(b, `"}`...)
		n++
	}
	if g.tool != nil || len(g.content) > 0 {
		if n > 0 {
			b = append(b, ',')
		}
		if g.tool != nil {
			b = append(b, `{"type":"tool_use","id":"toolu_`...)
			b = append(b, g.id...)
			b = append(b, `","name":`...)
			b = jsonwire.AppendString(b, g.tool.name)
			b = append(b, `,"input":`...)
			if json.Valid([]byte(g.tool.argsText)) {
				b = append(b, g.tool.argsText...)
			} else {
				b = append(b, `{}`...) // cut short by max_tokens
			}
			b = append(b, '}')
		} else {
			b = append(b, `{"type":"text","text":`...)
			b = jsonwire.AppendString(b, g.contentText())
			b = append(b, '}')
		}
	}
	b = append(b, `],"stop_reason":`...)
	b = append(b, g.anthropicStopReason()...)
	b = append(b, `,"stop_sequence":null,"usage":{"input_tokens":`...)
	b = jsonwire.AppendInt(b, g.promptTokens)
	b = append(b, `,"output_tokens":`...)
	b = jsonwire.AppendInt(b, g.outputTokens)
	return append(b, `}}`...)
}

func (g *gen) anthStreamError(b []byte) []byte {
	b = sseEvent(b, "error")
	b = append(b, `{"type":"error","error":{"type":"api_error","message":"mockllm: injected stream error"}}`...)
	return sseEnd(b)
}

// HuggingFace TGI (/generate, /generate_stream).

func (g *gen) tgiFinishReason() string {
	if g.finish == finishLength {
		return `"length"`
	}
	return `"eos_token"`
}

// appendTGIToken appends one token object; with several tokens per
// event it carries their joined text and the last token's id.
func (g *gen) appendTGIToken(b []byte, c chunk) []byte {
	b = append(b, `{"id":`...)
	id := g.contentIDs[c.hi-1]
	b = jsonwire.AppendInt(b, id)
	b = append(b, `,"text":"`...)
	b = g.appendPieces(b, c)
	b = append(b, `","logprob":`...)
	b = appendTGILogprob(b, id)
	return append(b, `,"special":false}`...)
}

// appendTGILogprob appends a deterministic stand-in log probability.
func appendTGILogprob(b []byte, id int) []byte {
	b = append(b, "-0."...)
	v := id%997 + 1
	if v < 100 {
		b = append(b, '0')
	}
	if v < 10 {
		b = append(b, '0')
	}
	return jsonwire.AppendInt(b, v)
}

func (g *gen) tgiStreamEvent(b []byte, j int) []byte {
	c := g.chunks[j]
	b = sseData(b)
	b = append(b, `{"index":`...)
	b = jsonwire.AppendInt(b, c.hi)
	b = append(b, `,"token":`...)
	b = g.appendTGIToken(b, c)
	if j < len(g.chunks)-1 {
		b = append(b, `,"generated_text":null,"details":null}`...)
		return sseEnd(b)
	}
	b = append(b, `,"generated_text":`...)
	b = jsonwire.AppendString(b, g.contentText())
	b = append(b, `,"details":{"finish_reason":`...)
	b = append(b, g.tgiFinishReason()...)
	b = append(b, `,"generated_tokens":`...)
	b = jsonwire.AppendInt(b, g.outputTokens)
	b = append(b, `,"input_length":`...)
	b = jsonwire.AppendInt(b, g.promptTokens)
	b = append(b, `,"seed":null}}`...)
	return sseEnd(b)
}

func (g *gen) tgiBody(b []byte) []byte {
	b = append(b, `{"generated_text":`...)
	b = jsonwire.AppendString(b, g.contentText())
	b = append(b, `,"details":{"finish_reason":`...)
	b = append(b, g.tgiFinishReason()...)
	b = append(b, `,"generated_tokens":`...)
	b = jsonwire.AppendInt(b, g.outputTokens)
	b = append(b, `,"seed":null,"prefill":[],"tokens":[`...)
	for i := range g.content {
		if i > 0 {
			b = append(b, ',')
		}
		b = g.appendTGIToken(b, chunk{chunkContent, int32(i), int32(i + 1)})
	}
	return append(b, `]}}`...)
}

func (g *gen) tgiStreamError(b []byte) []byte {
	b = sseEvent(b, "error")
	b = append(b, `{"error":"mockllm: injected stream error","error_type":"generation"}`...)
	return sseEnd(b)
}
