package mockllm

import (
	"net/http"
	"strconv"

	"github.com/llmbench/llmbench/internal/jsonwire"
)

// serveModels answers GET /v1/models with the models the server plays: the served model
// names (vLLM lists each, the first as every one's root), else Options.Model.
func (s *Server) serveModels(w http.ResponseWriter, r *http.Request, _ apiKind, _ int64) {
	names := s.opts.ServedModelNames
	if len(names) == 0 {
		names = []string{s.opts.Model}
	}
	b := []byte(`{"object":"list","data":[`)
	for i, name := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = jsonwire.AppendString(b, name)
		b = append(b, `,"object":"model","created":`...)
		b = strconv.AppendInt(b, monoBase.Unix(), 10)
		b = append(b, `,"owned_by":"mockllm","root":`...)
		b = jsonwire.AppendString(b, s.opts.Model)
		b = append(b, `,"parent":null}`...)
	}
	b = append(b, `]}`...)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	if r.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}
