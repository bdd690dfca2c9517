// Package endpoint is the client side of every supported inference API: it renders request
// bodies (used by the plan compiler, ahead of time) and parses response events and bodies
// (used offline by analyze), plus incremental Server-Sent Events framing.
//
// Rendering appends into a caller buffer and is deterministic: the same Request always gives
// the same bytes. Parsing works on one SSE event's data or one whole non-streaming body,
// appends what it found to a Delta, and allocates nothing when the Delta's slices have room.
// docs/endpoints.md lists the fields each API type writes and reads.
package endpoint

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/llmbench/llmbench/internal/jsonwire"
	"maps"
	"slices"
	"strings"
)

// Endpoint describes one API type. Get one with Lookup; each call returns a fresh copy, so a
// caller may set ResponseField (or edit Path) without affecting others.
type Endpoint struct {
	Name           string            // "chat", "completions", "responses", ...
	Path           string            // default path, e.g. "/v1/chat/completions"; "" for raw and template
	StreamPath     string            // path when streaming uses another one (TGI /generate_stream), else ""
	Streams        bool              // supports SSE streaming
	ProducesTokens bool              // token metrics (TTFT, ITL, OSL) apply
	Headers        map[string]string // extra fixed request headers (anthropic-version)

	// ResponseField, for raw and template, is a dotted path to the output text in each
	// response event or body ("choices.0.text", "generated_text"); numeric segments index
	// arrays. Empty means the response shape is detected automatically.
	ResponseField string

	kind  kind
	cache *templateCache // template: last parsed template, shared by copies
}

type kind uint8

const (
	kindChat kind = iota + 1
	kindCompletions
	kindResponses
	kindAnthropic
	kindTGI
	kindEmbeddings
	kindChatEmbeddings
	kindNIMEmbeddings
	kindNIMRankings
	kindTEIRankings
	kindCohereRankings
	kindImages
	kindRaw
	kindTemplate
)

// registry holds the prototype of every API type; Lookup copies from it.
var registry = []Endpoint{
	{Name: "chat", Path: "/v1/chat/completions", Streams: true, ProducesTokens: true, kind: kindChat},
	{Name: "completions", Path: "/v1/completions", Streams: true, ProducesTokens: true, kind: kindCompletions},
	{Name: "responses", Path: "/v1/responses", Streams: true, ProducesTokens: true, kind: kindResponses},
	{Name: "anthropic_messages", Path: "/v1/messages", Streams: true, ProducesTokens: true, kind: kindAnthropic,
		Headers: map[string]string{"anthropic-version": "2023-06-01"}},
	{Name: "huggingface_generate", Path: "/generate", StreamPath: "/generate_stream", Streams: true, ProducesTokens: true, kind: kindTGI},
	{Name: "embeddings", Path: "/v1/embeddings", kind: kindEmbeddings},
	{Name: "chat_embeddings", Path: "/v1/embeddings", kind: kindChatEmbeddings},
	{Name: "nim_embeddings", Path: "/v1/embeddings", kind: kindNIMEmbeddings},
	{Name: "nim_rankings", Path: "/v1/ranking", kind: kindNIMRankings},
	{Name: "hf_tei_rankings", Path: "/rerank", kind: kindTEIRankings},
	{Name: "cohere_rankings", Path: "/v2/rerank", kind: kindCohereRankings},
	{Name: "image_generation", Path: "/v1/images/generations", Streams: true, kind: kindImages},
	{Name: "raw", Streams: true, ProducesTokens: true, kind: kindRaw},
	{Name: "template", Streams: true, ProducesTokens: true, kind: kindTemplate},
}

// Names returns the known API type names, sorted.
func Names() []string {
	names := make([]string, len(registry))
	for i := range registry {
		names[i] = registry[i].Name
	}
	slices.Sort(names)
	return names
}

// Lookup returns a fresh Endpoint for the API type name, or an error listing the known names.
func Lookup(name string) (*Endpoint, error) {
	for i := range registry {
		if registry[i].Name == name {
			e := registry[i]
			e.Headers = maps.Clone(e.Headers)
			if e.kind == kindTemplate {
				e.cache = new(templateCache)
			}
			return &e, nil
		}
	}
	return nil, fmt.Errorf("endpoint: unknown type %q (known: %s)", name, strings.Join(Names(), ", "))
}

// RequestPath returns the path a request goes to: StreamPath when streaming and the type has
// one, else Path.
func (e *Endpoint) RequestPath(streaming bool) string {
	if streaming && e.StreamPath != "" {
		return e.StreamPath
	}
	return e.Path
}

// Request is everything the plan knows about one request; Render turns it into the body.
type Request struct {
	Model    string
	Messages []Message // chat-style turns, system first when present
	// Prompt is the whole prompt as one string for prompt-style APIs (completions, TGI,
	// embeddings, image generation). When empty those APIs use the Messages' contents
	// joined with a space; chat-style APIs given only a Prompt send it as one user message.
	Prompt          string
	MaxTokens       int  // requested OSL; 0 = leave unset
	Streaming       bool // ask for SSE
	LegacyMaxTokens bool // chat: max_tokens instead of max_completion_tokens
	IncludeUsage    bool // chat/completions streaming: stream_options.include_usage
	// Extra is merged at the top level of the body (--extra-inputs plus per-turn extras):
	// a key the API type writes anyway is replaced in place, the others follow sorted by
	// key. Not applied to raw (verbatim) bodies; templates see it as .Extra.
	Extra    map[string]any
	Raw      []byte       // raw: the body, sent verbatim
	Template string       // template: Go text/template source of the body
	Query    string       // rankings: the query
	Passages []string     // rankings: the passages/documents
	Texts    []string     // embeddings batch (--prompt-batch-size); empty means [Prompt]
	Image    ImageOptions // image_generation parameters
	// Media are the images, audio clips and videos of the last user message, rendered as
	// content parts (endpoint/media.go); APIs that cannot carry a kind refuse it.
	Media []Media
}

// ImageOptions are the image_generation request parameters; zero values are left out.
type ImageOptions struct {
	N              int    // images per request ("n")
	Size           string // "1024x1024"
	ResponseFormat string // "b64_json" or "url"
}

// Message is one chat turn.
type Message struct{ Role, Content string }

// Render appends the request body for r to dst and returns the extended slice. The bytes
// depend only on r (Extra keys sorted), so a plan compiled twice is identical.
func (e *Endpoint) Render(dst []byte, r *Request) ([]byte, error) {
	var out []byte
	var err error
	if len(r.Media) > 0 {
		if err := e.checkMedia(r); err != nil {
			return dst, fmt.Errorf("endpoint %s: %w", e.Name, err)
		}
	}
	switch e.kind {
	case kindChat:
		out, err = renderChat(dst, r)
	case kindCompletions:
		out, err = renderCompletions(dst, r)
	case kindResponses:
		out, err = renderResponses(dst, r)
	case kindAnthropic:
		out, err = renderAnthropic(dst, r)
	case kindTGI:
		out, err = renderTGI(dst, r)
	case kindEmbeddings:
		out, err = renderEmbeddings(dst, r, false)
	case kindNIMEmbeddings:
		out, err = renderEmbeddings(dst, r, true)
	case kindChatEmbeddings:
		out, err = renderChatEmbeddings(dst, r)
	case kindNIMRankings:
		out, err = renderNIMRankings(dst, r)
	case kindTEIRankings:
		out, err = renderTEIRankings(dst, r)
	case kindCohereRankings:
		out, err = renderCohereRankings(dst, r)
	case kindImages:
		out, err = renderImages(dst, r)
	case kindRaw:
		if len(r.Raw) == 0 {
			return dst, fmt.Errorf("endpoint raw: request has no raw body")
		}
		return append(dst, r.Raw...), nil
	case kindTemplate:
		out, err = e.renderTemplate(dst, r)
	default:
		return dst, fmt.Errorf("endpoint %q: not obtained from Lookup", e.Name)
	}
	if err != nil {
		return dst, fmt.Errorf("endpoint %s: %w", e.Name, err)
	}
	return out, nil
}

// Delta is what one SSE event (streaming) or one whole body (non-streaming) contributed.
// ParseEvent appends to Content and Reasoning and merges into Usage, so a Delta can collect
// a whole stream; call Reset to reuse it per event without allocating.
type Delta struct {
	Content   []byte // visible output text; tool-call name and arguments are appended here too
	Reasoning []byte // reasoning/thinking text
	Usage     Usage  // server token counts; Usage.Has says which fields were present
	Done      bool   // end of the response: [DONE], message_stop, response.completed, a whole body
	Items     int    // embeddings/rankings/images returned
	ErrorMsg  string // the message of an error event or error body
	// EndMarker names the end marker of the streaming protocol an event belongs to, once an
	// event of a protocol that has one was parsed ("[DONE]", "message_stop", ...; see
	// docs/endpoints.md); "" for protocols without one (embeddings, rankings, a raw
	// ResponseField). An event stream that set EndMarker and never Done was cut short.
	EndMarker string
}

// The end markers of the streaming protocols (Delta.EndMarker).
const (
	endOpenAI    = "data: [DONE]"
	endResponses = "response.completed"
	endAnthropic = "message_stop"
	endTGI       = "the final event, with generated_text"
	endImages    = "image_generation.completed"
)

// Reset clears d for the next event, keeping the slices' capacity.
func (d *Delta) Reset() {
	*d = Delta{Content: d.Content[:0], Reasoning: d.Reasoning[:0]}
}

// HasContent reports whether the event produced output text or reasoning text: AIPerf's
// "content response" that counts for TTFT and inter-chunk latency. Role-only, empty and
// usage-only chunks do not.
func (d *Delta) HasContent() bool { return len(d.Content) > 0 || len(d.Reasoning) > 0 }

// HasUsage reports whether any usage field was seen.
func (d *Delta) HasUsage() bool { return d.Usage.Has != 0 }

// UsageField is a bit in Usage.Has.
type UsageField uint8

// The Usage fields that can be present.
const (
	UsagePrompt UsageField = 1 << iota
	UsageCompletion
	UsageTotal
	UsageReasoning
	UsageCachedPrompt
	UsagePromptAudio
	UsageCompletionAudio
)

// Usage is the server's token accounting, normalised across APIs: PromptTokens counts the
// whole prompt including cached tokens (Anthropic's input_tokens plus its cache read and
// creation counts), CompletionTokens includes reasoning tokens.
type Usage struct {
	PromptTokens       int
	CompletionTokens   int
	TotalTokens        int
	ReasoningTokens    int
	CachedPromptTokens int
	// PromptAudioTokens and CompletionAudioTokens are the audio_tokens of the prompt and
	// completion details objects (OpenAI).
	PromptAudioTokens     int
	CompletionAudioTokens int
	Has                   UsageField // which fields the server sent
}

// Merge copies the fields o has into u: a later event's counts replace earlier ones field by
// field (Anthropic sends input tokens in message_start and output tokens in message_delta).
func (u *Usage) Merge(o Usage) {
	if o.Has&UsagePrompt != 0 {
		u.PromptTokens = o.PromptTokens
	}
	if o.Has&UsageCompletion != 0 {
		u.CompletionTokens = o.CompletionTokens
	}
	if o.Has&UsageTotal != 0 {
		u.TotalTokens = o.TotalTokens
	}
	if o.Has&UsageReasoning != 0 {
		u.ReasoningTokens = o.ReasoningTokens
	}
	if o.Has&UsageCachedPrompt != 0 {
		u.CachedPromptTokens = o.CachedPromptTokens
	}
	if o.Has&UsagePromptAudio != 0 {
		u.PromptAudioTokens = o.PromptAudioTokens
	}
	if o.Has&UsageCompletionAudio != 0 {
		u.CompletionAudioTokens = o.CompletionAudioTokens
	}
	u.Has |= o.Has
}

// ErrUnexpectedShape is wrapped by ParseEvent errors for well-formed JSON that is not what
// the API type returns; ErrInvalidJSON for malformed JSON.
var (
	ErrUnexpectedShape = errors.New("unexpected response shape")
	ErrInvalidJSON     = errors.New("invalid JSON")
)

// ParseError is the error ParseEvent returns.
type ParseError struct {
	Endpoint string // API type name
	Offset   int    // byte offset of a JSON syntax error; -1 for a shape error
	Detail   string
}

func (e *ParseError) Error() string {
	if e.Offset >= 0 {
		return fmt.Sprintf("endpoint %s: invalid JSON at byte %d: %s", e.Endpoint, e.Offset, e.Detail)
	}
	return fmt.Sprintf("endpoint %s: unexpected response shape: %s", e.Endpoint, e.Detail)
}

// Unwrap returns ErrInvalidJSON or ErrUnexpectedShape.
func (e *ParseError) Unwrap() error {
	if e.Offset >= 0 {
		return ErrInvalidJSON
	}
	return ErrUnexpectedShape
}

// shapeError is returned by the per-type parsers; ParseEvent adds the endpoint name.
type shapeError string

// ParseEvent parses one SSE event's data, or one whole non-streaming body, and appends what
// it carries to d (it does not reset d). An OpenAI-style "[DONE]" sets d.Done. A response in
// a shape the API type does not produce returns a *ParseError naming the type; an error
// event or error body is not a parse error: it sets d.ErrorMsg.
func (e *Endpoint) ParseEvent(event []byte, d *Delta) error {
	if isDoneSentinel(event) {
		d.Done = true
		return nil
	}
	s := jsonwire.NewScanner(event)
	var se shapeError
	switch e.kind {
	case kindChat:
		se = parseOpenAI(&s, d, modeChat)
	case kindCompletions:
		se = parseOpenAI(&s, d, modeCompletions)
	case kindResponses:
		se = parseResponses(&s, d)
	case kindAnthropic:
		se = parseAnthropic(&s, d)
	case kindTGI:
		se = parseTGI(&s, d)
	case kindEmbeddings, kindChatEmbeddings, kindNIMEmbeddings:
		se = parseList(&s, d, "data")
	case kindNIMRankings:
		se = parseList(&s, d, "rankings")
	case kindTEIRankings:
		se = parseTEIRankings(&s, d)
	case kindCohereRankings:
		se = parseList(&s, d, "results")
	case kindImages:
		se = parseImages(&s, d)
	case kindRaw, kindTemplate:
		if e.ResponseField != "" {
			se = parseField(&s, d, e.ResponseField)
		} else {
			se = parseAuto(&s, d)
		}
	default:
		return fmt.Errorf("endpoint %q: not obtained from Lookup", e.Name)
	}
	if s.Err() != nil {
		return &ParseError{Endpoint: e.Name, Offset: s.Err().Offset, Detail: s.Err().Msg}
	}
	if se != "" {
		return &ParseError{Endpoint: e.Name, Offset: -1, Detail: string(se)}
	}
	return nil
}

var doneSentinel = []byte("[DONE]")

func isDoneSentinel(b []byte) bool {
	if len(b) < len(doneSentinel) || len(b) > len(doneSentinel)+8 {
		return false
	}
	return bytes.Equal(bytes.TrimSpace(b), doneSentinel)
}
