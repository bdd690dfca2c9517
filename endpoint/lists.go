package endpoint

import "github.com/llmbench/llmbench/internal/jsonwire"

// Non-token APIs: embeddings, rankings and image generation. Their responses matter for
// counting what came back (Items), usage and errors; the vectors and scores are skipped.

// appendTexts writes the embeddings input list: Texts, or the single prompt.
func appendTexts(dst []byte, r *Request) []byte {
	if len(r.Texts) > 0 {
		return appendStrings(dst, r.Texts)
	}
	dst = append(dst, '[')
	dst = appendPrompt(dst, r)
	return append(dst, ']')
}

// renderEmbeddings writes OpenAI embeddings; nim adds NIM's required input_type ("query";
// override with an extra input input_type:passage).
func renderEmbeddings(dst []byte, r *Request, nim bool) ([]byte, error) {
	var o obj
	o.openModel(dst, r)
	if o.key("input") {
		o.b = appendTexts(o.b, r)
		o.b = appendNIMImages(o.b, r.Media) // checkMedia lets images reach nim_embeddings only
	}
	if nim {
		o.str("input_type", "query")
	}
	return o.close()
}

// renderChatEmbeddings writes vLLM's chat-style embeddings request (messages instead of input).
func renderChatEmbeddings(dst []byte, r *Request) ([]byte, error) {
	var o obj
	o.openModel(dst, r)
	if o.key("messages") {
		o.b = appendMessages(o.b, r, false)
	}
	return o.close()
}

func renderNIMRankings(dst []byte, r *Request) ([]byte, error) {
	var o obj
	o.openModel(dst, r)
	if o.key("query") {
		o.b = append(o.b, `{"text":`...)
		o.b = jsonwire.AppendString(o.b, r.Query)
		o.b = append(o.b, '}')
	}
	if o.key("passages") {
		o.b = append(o.b, '[')
		for i, p := range r.Passages {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			o.b = append(o.b, `{"text":`...)
			o.b = jsonwire.AppendString(o.b, p)
			o.b = append(o.b, '}')
		}
		o.b = append(o.b, ']')
	}
	return o.close()
}

func renderTEIRankings(dst []byte, r *Request) ([]byte, error) {
	var o obj
	o.open(dst, r.Extra)
	o.str("query", r.Query)
	if o.key("texts") {
		o.b = appendStrings(o.b, r.Passages)
	}
	return o.close()
}

func renderCohereRankings(dst []byte, r *Request) ([]byte, error) {
	var o obj
	o.openModel(dst, r)
	o.str("query", r.Query)
	if o.key("documents") {
		o.b = appendStrings(o.b, r.Passages)
	}
	return o.close()
}

// appendStrings writes ss as a JSON array of strings.
func appendStrings(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, t := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonwire.AppendString(dst, t)
	}
	return append(dst, ']')
}

func renderImages(dst []byte, r *Request) ([]byte, error) {
	var o obj
	o.openModel(dst, r)
	if o.key("prompt") {
		o.b = appendPrompt(o.b, r)
	}
	if r.Image.N > 0 {
		o.int("n", r.Image.N)
	}
	if r.Image.Size != "" {
		o.str("size", r.Image.Size)
	}
	if r.Image.ResponseFormat != "" {
		o.str("response_format", r.Image.ResponseFormat)
	}
	if r.Streaming {
		o.bool("stream", true)
	}
	return o.close()
}

// parseList reads an object whose array member key holds the results (embeddings "data",
// NIM "rankings", Cohere "results"): Items counts them. Usage comes from "usage" or Cohere's
// meta.tokens.
func parseList(s *jsonwire.Scanner, d *Delta, key string) shapeError {
	if se, ok := enterTopObject(s); !ok {
		return se
	}
	var sawList, sawError bool
	var object, message jsonwire.Span
	n := 0
	for {
		k, ok := s.Member(&n)
		if !ok {
			break
		}
		switch string(k) {
		case key:
			c, ok := s.Count()
			d.Items += c
			sawList = sawList || ok
		case "usage":
			parseUsage(s, &d.Usage)
		case "meta":
			parseCohereMeta(s, d)
		case "error":
			sawError = parseErrorValue(s, d) || sawError
		case "object":
			object = s.StrSpan()
		case "message":
			message = s.StrSpan()
		default:
			s.Skip()
		}
	}
	s.End()
	if s.Err() != nil {
		return ""
	}
	switch {
	case s.Is(object, "error"):
		errorFromSpan(s, d, message)
	case sawList:
		d.Done = true
	case !sawError:
		return shapeError(`missing "` + key + `"`)
	}
	return ""
}

// parseCohereMeta reads meta.tokens {input_tokens, output_tokens} as usage.
func parseCohereMeta(s *jsonwire.Scanner, d *Delta) {
	if !s.EnterObject() {
		s.Skip()
		return
	}
	n := 0
	for {
		k, ok := s.Member(&n)
		if !ok {
			return
		}
		if string(k) == "tokens" {
			parseUsage(s, &d.Usage)
		} else {
			s.Skip()
		}
	}
}

// parseTEIRankings reads TEI's /rerank answer: a bare array of {index, score}.
func parseTEIRankings(s *jsonwire.Scanner, d *Delta) shapeError {
	switch s.Peek() {
	case '[':
		c, _ := s.Count()
		s.End()
		if s.Err() != nil {
			return "" // malformed: nothing counted, not the end of anything
		}
		d.Items += c
		d.Done = true
		return ""
	case '{':
		// TEI errors: {"error": "...", "error_type": "..."}
		return parseList(s, d, "results")
	}
	if s.Err() == nil {
		s.Skip()
		return "expected a JSON array"
	}
	return ""
}

// parseImages reads an images response ({"data": [...], "usage": {...}}) or a streaming
// event (image_generation.partial_image, image_generation.completed with usage).
func parseImages(s *jsonwire.Scanner, d *Delta) shapeError {
	if se, ok := enterTopObject(s); !ok {
		return se
	}
	var sawData, sawError bool
	var typ jsonwire.Span
	n := 0
	for {
		k, ok := s.Member(&n)
		if !ok {
			break
		}
		switch string(k) {
		case "data":
			c, ok := s.Count()
			d.Items += c
			sawData = sawData || ok
		case "type":
			typ = s.StrSpan()
		case "usage":
			parseUsage(s, &d.Usage)
		case "error":
			sawError = parseErrorValue(s, d) || sawError
		default:
			s.Skip()
		}
	}
	s.End()
	if s.Err() != nil {
		return ""
	}
	if typ.OK {
		d.EndMarker = endImages
	}
	switch {
	case sawData:
		d.Done = true
	case s.Is(typ, "image_generation.completed"):
		// One per image; a stream of n images is done at the last, which the parser cannot
		// tell from the others: each marks the stream ended so far.
		d.Items++
		d.Done = true
	case typ.OK || sawError:
	default:
		return `missing "data"`
	}
	return ""
}
