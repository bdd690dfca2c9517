package endpoint

import (
	"bytes"
	"fmt"
	"github.com/llmbench/llmbench/internal/jsonwire"
	"strings"
	"sync/atomic"
	"text/template"
)

// raw and template endpoints: the body comes from the user (verbatim, or a Go text/template),
// so the response shape is not known in advance. It is detected per event, or read from a
// user-given dotted path (Endpoint.ResponseField).

// parseAuto classifies the event by its top-level keys and hands it to the matching parser.
func parseAuto(s *jsonwire.Scanner, d *Delta) shapeError {
	switch s.Peek() {
	case '[':
		// TGI's array-wrapped answer or TEI's rankings array.
		if autoArrayIsTGI(s) {
			return parseTGI(s, d)
		}
		return parseTEIRankings(s, d)
	case '{':
	default:
		if s.Err() == nil {
			s.Skip()
			return "expected a JSON object or array"
		}
		return ""
	}
	var (
		typ, object                                        jsonwire.Span
		choices, output, token, generated, rankings        bool
		results, data, errorKey, usage, delta, contentBlck bool
	)
	s.EnterObject()
	n := 0
	for {
		k, ok := s.Member(&n)
		if !ok {
			break
		}
		switch string(k) {
		case "type":
			typ = s.StrSpan()
			continue
		case "object":
			object = s.StrSpan()
			continue
		case "choices":
			choices = true
		case "output":
			output = true
		case "token":
			token = true
		case "generated_text":
			generated = true
		case "rankings":
			rankings = true
		case "results":
			results = true
		case "data":
			data = true
		case "error":
			errorKey = true
		case "usage":
			usage = true
		case "delta":
			delta = true
		case "content_block":
			contentBlck = true
		}
		s.Skip()
	}
	s.End()
	if s.Err() != nil {
		return ""
	}
	s.Rewind()
	switch {
	case choices || s.Is(object, "chat.completion") || s.Is(object, "chat.completion.chunk") || s.Is(object, "text_completion"):
		return parseOpenAI(s, d, modeAuto)
	case s.HasPrefix(typ, "response.") || s.Is(object, "response") || output:
		return parseResponses(s, d)
	case s.HasPrefix(typ, "image_generation."):
		return parseImages(s, d)
	case s.Is(typ, "error") && !errorKey:
		return parseResponses(s, d)
	case typ.OK && (delta || contentBlck || isAnthropicType(s, typ)):
		return parseAnthropic(s, d)
	case token || generated:
		return parseTGI(s, d)
	case rankings:
		return parseList(s, d, "rankings")
	case results:
		return parseList(s, d, "results")
	case data:
		return parseImages(s, d)
	case errorKey || s.Is(object, "error") || usage:
		return parseOpenAI(s, d, modeAuto)
	}
	return "unrecognized response shape (no choices, output, type, generated_text, token, data, rankings, results or error)"
}

func isAnthropicType(s *jsonwire.Scanner, typ jsonwire.Span) bool {
	switch string(s.SpanBytes(typ)) {
	case "message", "message_start", "message_delta", "message_stop",
		"content_block_start", "content_block_delta", "content_block_stop", "ping", "error":
		return true
	}
	return false
}

// autoArrayIsTGI peeks whether the first element of a top-level array has generated_text.
func autoArrayIsTGI(s *jsonwire.Scanner) bool {
	t := s.Lookahead()
	t.EnterArray()
	n := 0
	if !t.Element(&n) || !t.EnterObject() {
		return false
	}
	m := 0
	for {
		k, ok := t.Member(&m)
		if !ok {
			return false
		}
		if string(k) == "generated_text" {
			return true
		}
		t.Skip()
	}
}

// parseField reads the value at the dotted path (the output text), plus top-level usage and
// error. A path missing from an event (a usage-only chunk, a role-only delta) is an empty
// delta, not an error.
func parseField(s *jsonwire.Scanner, d *Delta, path string) shapeError {
	se := walkPath(s, d, path, true)
	s.End()
	return se
}

func walkPath(s *jsonwire.Scanner, d *Delta, path string, top bool) shapeError {
	if path == "" {
		return takeValue(s, d)
	}
	seg, rest, _ := strings.Cut(path, ".")
	var se shapeError
	switch s.Peek() {
	case '{':
		s.EnterObject()
		n := 0
		for {
			k, ok := s.Member(&n)
			if !ok {
				break
			}
			switch {
			case string(k) == seg:
				if e := walkPath(s, d, rest, false); e != "" && se == "" {
					se = e
				}
			case top && string(k) == "usage":
				parseUsage(s, &d.Usage)
			case top && string(k) == "error":
				parseErrorValue(s, d)
			default:
				s.Skip()
			}
		}
	case '[':
		idx, ok := atoi(seg)
		s.EnterArray()
		n := 0
		for s.Element(&n) {
			if ok && n-1 == idx {
				if e := walkPath(s, d, rest, false); e != "" && se == "" {
					se = e
				}
			} else {
				s.Skip()
			}
		}
	default:
		s.Skip()
	}
	return se
}

// takeValue appends the value found at the response field: a string is output text, an
// array counts as Items, a number or boolean is taken as text, null is nothing.
func takeValue(s *jsonwire.Scanner, d *Delta) shapeError {
	switch c := s.Peek(); c {
	case '"':
		d.Content, _ = s.Str(d.Content)
	case '[':
		c, _ := s.Count()
		d.Items += c
	case '{':
		s.Skip()
		return "response field is an object, not text"
	case 'n':
		s.Skip()
	default:
		d.Content = append(d.Content, s.Raw()...)
	}
	return ""
}

// atoi parses a non-negative decimal index without allocating.
func atoi(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// templateCache keeps the last parsed template: a plan renders the same template source a
// million times, and parsing costs far more than executing.
type templateCache struct {
	p atomic.Pointer[parsedTemplate]
}

type parsedTemplate struct {
	src string
	t   *template.Template
	err error
}

func (c *templateCache) get(src string) *parsedTemplate {
	if p := c.p.Load(); p != nil && p.src == src {
		return p
	}
	t, err := template.New("body").Option("missingkey=error").Funcs(template.FuncMap{"json": templateJSON}).Parse(src)
	p := &parsedTemplate{src: src, t: t, err: err}
	c.p.Store(p)
	return p
}

// templateJSON is the template's json function: v as a JSON value (strings quoted and
// escaped), with sorted map keys and no HTML escaping.
func templateJSON(v any) (string, error) {
	var b []byte
	if s, ok := v.(string); ok {
		b = make([]byte, 0, len(s)+len(s)/16+8) // room for a few escapes: one allocation
	}
	b, err := jsonwire.AppendValue(b, v)
	return string(b), err
}

// TemplateData is what a body template sees: {{json .Prompt}}, {{.MaxTokens}},
// {{range .Messages}}{{json .Content}}{{end}}, {{json .Extra}} and so on.
type TemplateData struct {
	Model     string
	Prompt    string // r.Prompt, or the messages' contents joined with a space
	Messages  []Message
	MaxTokens int
	Streaming bool
	Query     string
	Passages  []string
	Texts     []string
	Extra     map[string]any
}

type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

func (e *Endpoint) renderTemplate(dst []byte, r *Request) ([]byte, error) {
	if r.Template == "" {
		return dst, fmt.Errorf("request has no template")
	}
	if e.cache == nil {
		return dst, fmt.Errorf("not obtained from Lookup")
	}
	pt := e.cache.get(r.Template)
	if pt.err != nil {
		return dst, fmt.Errorf("template: %w", pt.err)
	}
	data := TemplateData{
		Model: r.Model, Prompt: r.Prompt, Messages: r.Messages, MaxTokens: r.MaxTokens,
		Streaming: r.Streaming, Query: r.Query, Passages: r.Passages, Texts: r.Texts, Extra: r.Extra,
	}
	if data.Prompt == "" && len(r.Messages) > 0 {
		var sb strings.Builder
		for i := range r.Messages {
			if i > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(r.Messages[i].Content)
		}
		data.Prompt = sb.String()
	}
	w := appendWriter{b: dst}
	start := len(dst)
	if err := pt.t.Execute(&w, &data); err != nil {
		return dst, fmt.Errorf("template: %w", err)
	}
	// The body goes out as application/json: catch a template that forgot {{json}} at plan
	// time rather than as a wall of 400s during the run.
	body := w.b[start:]
	t := jsonwire.NewScanner(body)
	t.Skip()
	t.End()
	if t.Err() != nil {
		return dst, fmt.Errorf("template output is not valid JSON at byte %d (%s): %q", t.Err().Offset, t.Err().Msg, excerpt(body, t.Err().Offset))
	}
	return w.b, nil
}

// excerpt returns up to 40 bytes of b around off, for error messages.
func excerpt(b []byte, off int) []byte {
	lo, hi := max(off-20, 0), min(off+20, len(b))
	if lo > hi {
		lo = hi
	}
	return bytes.TrimSpace(b[lo:hi])
}
