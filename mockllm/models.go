package mockllm

import (
	"net/http"
	"strconv"

	"github.com/llmbench/llmbench/internal/jsonwire"
)

// serveModels answers GET /v1/models with the one model the server plays.
func (s *Server) serveModels(w http.ResponseWriter, r *http.Request, _ apiKind, _ int64) {
	b := []byte(`{"object":"list","data":[{"id":`)
	b = jsonwire.AppendString(b, s.opts.Model)
	b = append(b, `,"object":"model","created":`...)
	b = strconv.AppendInt(b, monoBase.Unix(), 10)
	b = append(b, `,"owned_by":"mockllm","root":`...)
	b = jsonwire.AppendString(b, s.opts.Model)
	b = append(b, `,"parent":null}]}`...)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	if r.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}
