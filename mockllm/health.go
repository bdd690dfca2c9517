package mockllm

import (
	"net/http"
	"strconv"
)

// serveHealth answers the health probe.
func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request, _ apiKind, _ int64) {
	b := []byte(`{"status":"ok"}`)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	if r.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}
