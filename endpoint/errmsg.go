package endpoint

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/llmbench/llmbench/internal/jsonwire"
)

// MaxErrorMessage bounds ErrorMessage's result, in bytes.
const MaxErrorMessage = 200

// ErrorMessage is the first line of the server's own message in a non-2xx response body of
// any API or route (/metrics, a DCGM exporter, an inference path): a JSON body's "error"
// (a string, or an object's "message"), else its "message", else its "detail" (a string, or
// FastAPI's [{"msg"}] list); an HTML page's <title> (or first <h1>); else the first non-empty
// line of the text. Control characters become spaces, and the result is cut to
// MaxErrorMessage bytes at a character boundary, "…" marking the cut. "" when the body says
// nothing. The caller redacts it (redact.Text) before showing it: a server may echo a URL.
func ErrorMessage(body []byte) string {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return ""
	}
	var msg []byte
	switch body[0] {
	case '{':
		msg = jsonMessage(body)
	case '<':
		msg = htmlMessage(body)
	}
	if msg == nil {
		msg = body
	}
	return firstLine(msg)
}

// jsonMessage finds the message member of a JSON error body; nil when there is none.
func jsonMessage(body []byte) []byte {
	s := jsonwire.NewScanner(body)
	if !s.EnterObject() {
		return nil
	}
	var errMsg, message, detail []byte
	for n := 0; ; {
		key, ok := s.Member(&n)
		if !ok {
			break
		}
		switch string(key) {
		case "error":
			errMsg = messageValue(&s, "message")
		case "message":
			message = messageValue(&s, "message")
		case "detail":
			detail = messageValue(&s, "msg")
		default:
			s.Skip()
		}
	}
	for _, m := range [][]byte{errMsg, message, detail} {
		if len(bytes.TrimSpace(m)) > 0 {
			return m
		}
	}
	return nil
}

// messageValue reads a message-bearing value: a string, an object's field member, or the
// first element of a list of either.
func messageValue(s *jsonwire.Scanner, field string) []byte {
	switch s.Peek() {
	case '"':
		b, _ := s.Str(nil)
		return b
	case '{':
		s.EnterObject()
		var out []byte
		for n := 0; ; {
			key, ok := s.Member(&n)
			if !ok {
				break
			}
			if out == nil && string(key) == field && s.Peek() == '"' {
				out, _ = s.Str(nil)
				continue
			}
			s.Skip()
		}
		return out
	case '[':
		s.EnterArray()
		var out []byte
		for n := 0; s.Element(&n); {
			if out == nil {
				out = messageValue(s, field)
				continue
			}
			s.Skip()
		}
		return out
	}
	s.Skip()
	return nil
}

// htmlMessage is an HTML page's <title> or first <h1> text; nil when it has neither.
func htmlMessage(body []byte) []byte {
	lower := bytes.ToLower(body)
	for _, tag := range []string{"title", "h1"} {
		open := bytes.Index(lower, []byte("<"+tag))
		if open < 0 {
			continue
		}
		gt := bytes.IndexByte(lower[open:], '>')
		if gt < 0 {
			continue
		}
		from := open + gt + 1
		end := bytes.Index(lower[from:], []byte("</"+tag))
		if end < 0 {
			continue
		}
		if t := bytes.TrimSpace(body[from : from+end]); len(t) > 0 {
			return t
		}
	}
	return nil
}

// firstLine is b's first non-empty line, control characters as spaces, cut to
// MaxErrorMessage bytes.
func firstLine(b []byte) string {
	for _, line := range bytes.Split(b, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		s := strings.Map(func(r rune) rune {
			if r < ' ' || r == 0x7f {
				return ' '
			}
			return r
		}, strings.ToValidUTF8(string(line), "\uFFFD"))
		if len(s) <= MaxErrorMessage {
			return s
		}
		cut := MaxErrorMessage - len("…")
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return s[:cut] + "…"
	}
	return ""
}
