package endpoint

import "github.com/llmbench/llmbench/internal/jsonwire"

// OpenAI Chat Completions (chat) and Completions (completions). vLLM, SGLang, TensorRT-LLM,
// Dynamo and NIM all speak these; reasoning servers add reasoning_content (vLLM < 0.10,
// SGLang, DeepSeek) or reasoning (vLLM >= 0.10, OpenRouter) to the message/delta.

// appendMessages writes the chat messages array; a Request with only a Prompt becomes one
// user message. skipSystem leaves out the system turns, for APIs that carry them in a
// top-level member instead (see appendSystem).
func appendMessages(dst []byte, r *Request, skipSystem bool) []byte {
	return appendMessageParts(dst, r, skipSystem, partsChat)
}

// appendMessageParts is appendMessages with r.Media as content parts of the last user
// message, in the given dialect (endpoint/media.go).
func appendMessageParts(dst []byte, r *Request, skipSystem bool, style partStyle) []byte {
	dst = append(dst, '[')
	if len(r.Messages) == 0 {
		dst = append(dst, `{"role":"user","content":`...)
		if len(r.Media) > 0 {
			dst = appendParts(dst, r.Prompt, r.Media, style)
		} else {
			dst = jsonwire.AppendString(dst, r.Prompt)
		}
		return append(dst, '}', ']')
	}
	target := -1
	if len(r.Media) > 0 {
		target = mediaTarget(r)
	}
	j := 0
	for i := range r.Messages {
		if skipSystem && r.Messages[i].Role == "system" {
			continue
		}
		if j > 0 {
			dst = append(dst, ',')
		}
		j++
		dst = append(dst, `{"role":`...)
		dst = jsonwire.AppendString(dst, r.Messages[i].Role)
		dst = append(dst, `,"content":`...)
		if i == target {
			dst = appendParts(dst, r.Messages[i].Content, r.Media, style)
		} else {
			dst = jsonwire.AppendString(dst, r.Messages[i].Content)
		}
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// appendSystem writes member key holding the system turns' contents joined by a blank line,
// the top-level system prompt of the Anthropic ("system") and Responses ("instructions")
// APIs. Without system turns it writes nothing.
func appendSystem(o *obj, key string, r *Request) {
	nsys := 0
	for i := range r.Messages {
		if r.Messages[i].Role == "system" {
			nsys++
		}
	}
	if nsys == 0 || !o.key(key) {
		return
	}
	o.b = append(o.b, '"')
	j := 0
	for i := range r.Messages {
		if r.Messages[i].Role != "system" {
			continue
		}
		if j > 0 {
			o.b = append(o.b, `\n\n`...)
		}
		j++
		o.b = jsonwire.AppendStringBody(o.b, r.Messages[i].Content)
	}
	o.b = append(o.b, '"')
}

// appendPrompt writes the prompt string of prompt-style APIs: r.Prompt, or the messages'
// contents joined with a space (how AIPerf joins turns for ISL).
func appendPrompt(dst []byte, r *Request) []byte {
	if r.Prompt != "" || len(r.Messages) == 0 {
		return jsonwire.AppendString(dst, r.Prompt)
	}
	dst = append(dst, '"')
	for i := range r.Messages {
		if i > 0 {
			dst = append(dst, ' ')
		}
		dst = jsonwire.AppendStringBody(dst, r.Messages[i].Content)
	}
	return append(dst, '"')
}

// appendStream writes the chat and completions "stream" member and, when usage is wanted,
// stream_options asking for the final usage chunk.
func appendStream(o *obj, r *Request) {
	o.bool("stream", r.Streaming)
	if r.Streaming && r.IncludeUsage && o.key("stream_options") {
		o.b = append(o.b, `{"include_usage":true}`...)
	}
}

func renderChat(dst []byte, r *Request) ([]byte, error) {
	var o obj
	o.openModel(dst, r)
	if o.key("messages") {
		o.b = appendMessages(o.b, r, false)
	}
	appendStream(&o, r)
	if r.MaxTokens > 0 {
		if r.LegacyMaxTokens {
			o.int("max_tokens", r.MaxTokens)
		} else {
			o.int("max_completion_tokens", r.MaxTokens)
		}
	}
	return o.close()
}

func renderCompletions(dst []byte, r *Request) ([]byte, error) {
	var o obj
	o.openModel(dst, r)
	if o.key("prompt") {
		o.b = appendPrompt(o.b, r)
	}
	appendStream(&o, r)
	if r.MaxTokens > 0 {
		o.int("max_tokens", r.MaxTokens)
	}
	return o.close()
}

type openAIMode uint8

const (
	modeChat        openAIMode = iota // choices[0].message / .delta
	modeCompletions                   // choices[0].text
	modeAuto                          // either
)

// parseOpenAI parses a chat.completion, chat.completion.chunk or text_completion object,
// a usage-only chunk, or an OpenAI/vLLM error body.
//
// A body of another API (an embeddings list, an image, a Responses object, an Anthropic
// message) also carries "usage" and would pass for a usage-only chunk; it is a shape error
// instead, so a plan pointed at the wrong route fails naming its endpoint type rather than
// as "no content". Likewise a chat endpoint given a completions choice (text) or the
// reverse. modeAuto (raw/template detection) skips these checks: there the dialect is not
// known in advance.
func parseOpenAI(s *jsonwire.Scanner, d *Delta, mode openAIMode) shapeError {
	if se, ok := enterTopObject(s); !ok {
		return se
	}
	var (
		sawChoices, sawUsage, sawError bool
		object, message                jsonwire.Span
		foreign                        string // first member that marks another API's shape
		dialect                        choiceDialect
	)
	n := 0
	for {
		k, ok := s.Member(&n)
		if !ok {
			break
		}
		switch string(k) {
		case "choices":
			sawChoices, dialect = parseChoices(s, d, mode)
		case "usage":
			sawUsage = parseUsage(s, &d.Usage) || sawUsage
		case "error":
			sawError = parseErrorValue(s, d) || sawError
		case "object":
			object = s.StrSpan()
		case "message":
			message = s.StrSpan()
		default:
			if foreign == "" {
				foreign = foreignMember(k)
			}
			s.Skip()
		}
	}
	s.End()
	if s.Err() != nil {
		return ""
	}
	if s.Is(object, "error") {
		errorFromSpan(s, d, message)
		return ""
	}
	if !sawChoices && !sawUsage && !sawError {
		return `missing "choices"`
	}
	if mode != modeAuto && !sawChoices && !sawError {
		if foreign != "" {
			return shapeError(`missing "choices" (has "` + foreign + `": another API's response)`)
		}
		if object.OK && !s.Is(object, "chat.completion") && !s.Is(object, "chat.completion.chunk") && !s.Is(object, "text_completion") {
			return `missing "choices" (object is not a chat.completion, chat.completion.chunk or text_completion)`
		}
	}
	switch {
	case mode == modeChat && dialect == choiceText:
		return `choices[0] has "text", not "message" or "delta" (a completions response)`
	case mode == modeCompletions && dialect == choiceMessage:
		return `choices[0] has "message" or "delta", not "text" (a chat response)`
	}
	if sawChoices || sawUsage {
		d.EndMarker = endOpenAI
	}
	if s.Is(object, "chat.completion") {
		// A whole non-streaming chat body. (text_completion is also the streaming chunk type
		// of /v1/completions, so a completions body cannot be told from a chunk.)
		d.Done = true
	}
	return ""
}

// foreignMember returns the name of a top-level member that only other APIs' responses
// carry (embeddings and images "data", Responses "output", Anthropic "type" and "content",
// TGI "generated_text" and "token", rankings "rankings" and "results"), else "". The names
// are constants, so recording one allocates nothing.
func foreignMember(k []byte) string {
	switch string(k) {
	case "data":
		return "data"
	case "output":
		return "output"
	case "type":
		return "type"
	case "content":
		return "content"
	case "generated_text":
		return "generated_text"
	case "token":
		return "token"
	case "rankings":
		return "rankings"
	case "results":
		return "results"
	}
	return ""
}

// choiceDialect says which OpenAI dialect choices[0] was written in.
type choiceDialect uint8

const (
	choiceUnknown choiceDialect = iota // no choice, or neither text nor message/delta
	choiceMessage                      // message or delta, no text: chat
	choiceText                         // text, no message or delta: completions
)

// parseChoices reads the choices array, taking choices[0] like AIPerf (n > 1 is not used
// for benchmarking). It returns false when the value is not an array, and the dialect of
// choices[0].
func parseChoices(s *jsonwire.Scanner, d *Delta, mode openAIMode) (bool, choiceDialect) {
	if !s.EnterArray() {
		if s.IsNull() {
			return false, choiceUnknown
		}
		s.Skip()
		return false, choiceUnknown
	}
	var sawText, sawMessage bool
	n := 0
	for s.Element(&n) {
		if n > 1 || !s.EnterObject() {
			s.Skip()
			continue
		}
		m := 0
		for {
			k, ok := s.Member(&m)
			if !ok {
				break
			}
			switch string(k) {
			case "delta", "message":
				sawMessage = true
				if mode == modeCompletions {
					s.Skip()
				} else {
					parseChatMessage(s, d)
				}
			case "text":
				sawText = true
				if mode == modeChat {
					s.Skip()
				} else {
					d.Content, _ = s.Str(d.Content)
				}
			default:
				s.Skip()
			}
		}
	}
	switch {
	case sawMessage && !sawText:
		return true, choiceMessage
	case sawText && !sawMessage:
		return true, choiceText
	}
	return true, choiceUnknown
}

// parseChatMessage reads a message or delta object: content, reasoning (reasoning_content
// preferred over reasoning: some vLLM versions send both with the same text) and tool calls,
// whose function name and arguments count as output text (AIPerf §5.11).
func parseChatMessage(s *jsonwire.Scanner, d *Delta) {
	if !s.EnterObject() {
		s.Skip()
		return
	}
	var reasoningContent, reasoning jsonwire.Span
	n := 0
	for {
		k, ok := s.Member(&n)
		if !ok {
			break
		}
		switch string(k) {
		case "content":
			d.Content, _ = s.Str(d.Content)
		case "reasoning_content":
			reasoningContent = s.StrSpan()
		case "reasoning":
			reasoning = s.StrSpan()
		case "tool_calls":
			parseToolCalls(s, d)
		default:
			s.Skip()
		}
	}
	if reasoningContent.OK && reasoningContent.Len() > 0 {
		d.Reasoning = s.AppendSpan(d.Reasoning, reasoningContent)
	} else {
		d.Reasoning = s.AppendSpan(d.Reasoning, reasoning)
	}
}

// parseToolCalls appends each tool call's function name and arguments text to Content.
func parseToolCalls(s *jsonwire.Scanner, d *Delta) {
	if !s.EnterArray() {
		s.Skip()
		return
	}
	n := 0
	for s.Element(&n) {
		if !s.EnterObject() {
			s.Skip()
			continue
		}
		m := 0
		for {
			k, ok := s.Member(&m)
			if !ok {
				break
			}
			if string(k) != "function" || !s.EnterObject() {
				s.Skip()
				continue
			}
			f := 0
			for {
				fk, ok := s.Member(&f)
				if !ok {
					break
				}
				switch string(fk) {
				case "name", "arguments":
					d.Content, _ = s.Str(d.Content)
				default:
					s.Skip()
				}
			}
		}
	}
}
