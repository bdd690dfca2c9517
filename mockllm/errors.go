package mockllm

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/internal/jsonwire"
)

// errStyle is the shape of an API's error body.
type errStyle uint8

const (
	styleOpenAI    errStyle = iota // {"error":{"message","type","param","code"}}
	styleAnthropic                 // {"type":"error","error":{"type","message"}}
	styleTGI                       // {"error","error_type"} (TGI and TEI)
	styleCohere                    // {"message"}
	styleNIM                       // {"detail"} (NIM ranking, FastAPI style)
)

func styleOf(api apiKind) errStyle {
	switch api {
	case apiAnthropic:
		return styleAnthropic
	case apiTGI, apiTEIRerank:
		return styleTGI
	case apiCohereRerank:
		return styleCohere
	case apiNIMRankings:
		return styleNIM
	}
	return styleOpenAI
}

// styleFor picks an error style for an unknown path by its prefix.
func styleFor(path string) errStyle {
	if strings.HasPrefix(path, "/v1/messages") {
		return styleAnthropic
	}
	return styleOpenAI
}

// anthropicErrType maps the mock's error types to Anthropic's names.
func anthropicErrType(typ string, code int) string {
	switch code {
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusInternalServerError:
		return "api_error"
	}
	if typ == "" {
		return "invalid_request_error"
	}
	return typ
}

// writeError writes a JSON error body in the API's shape.
func writeError(w http.ResponseWriter, style errStyle, code int, typ, msg string) {
	b := make([]byte, 0, 128+len(msg))
	switch style {
	case styleAnthropic:
		b = append(b, `{"type":"error","error":{"type":`...)
		b = jsonwire.AppendString(b, anthropicErrType(typ, code))
		b = append(b, `,"message":`...)
		b = jsonwire.AppendString(b, msg)
		b = append(b, `}}`...)
	case styleTGI:
		b = append(b, `{"error":`...)
		b = jsonwire.AppendString(b, msg)
		b = append(b, `,"error_type":`...)
		b = jsonwire.AppendString(b, typ)
		b = append(b, '}')
	case styleCohere:
		b = append(b, `{"message":`...)
		b = jsonwire.AppendString(b, msg)
		b = append(b, '}')
	case styleNIM:
		b = append(b, `{"detail":`...)
		b = jsonwire.AppendString(b, msg)
		b = append(b, '}')
	default:
		b = append(b, `{"error":{"message":`...)
		b = jsonwire.AppendString(b, msg)
		b = append(b, `,"type":`...)
		b = jsonwire.AppendString(b, typ)
		b = append(b, `,"param":null,"code":`...)
		b = strconv.AppendInt(b, int64(code), 10)
		b = append(b, `}}`...)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(code)
	_, _ = w.Write(b)
}
