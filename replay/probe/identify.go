package probe

import (
	"context"
	"io"
	"net/http"
	"strings"

	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/internal/jsonwire"
	"github.com/llmbench/llmbench/rawlog"
)

// What the server says it is, asked by the preflight after its request: read from pages
// that may be missing, each bounded by preflightGetTimeout, never a reason to refuse a run.

// identify asks what the server says it is: GET /v1/models (owned_by), llama.cpp's
// GET /props (build_info, total_slots) and vLLM's GET /version at the server's root (under
// the base URL's path without its /v1: endpoint.Base). Whatever is not there is left out.
func (p *preflighter) identify(t *rawlog.PreflightTarget, b endpoint.Base) {
	get := func(target string) []byte {
		ctx, cancel := context.WithTimeout(p.stop, preflightGetTimeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.Origin()+target, nil)
		if err != nil {
			return nil
		}
		for _, h := range p.headers {
			if !strings.EqualFold(h[0], "Content-Type") {
				req.Header.Set(h[0], h[1])
			}
		}
		req.Header.Set("User-Agent", p.ua)
		resp, err := (&http.Client{Transport: p.tr, CheckRedirect: noRedirect}).Do(req)
		if err != nil {
			return nil
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(io.LimitReader(resp.Body, preflightBodyLimit))
		if err != nil || resp.StatusCode != http.StatusOK {
			return nil
		}
		if t.Server == "" {
			t.Server = resp.Header.Get("Server")
		}
		return b
	}
	t.ModelsOwnedBy = modelsOwner(get(b.Target("/v1/models")), p.model)
	if page := get(b.RootTarget("/props")); page != nil {
		t.LlamaCppBuild, _ = topString(page, "build_info")
		t.LlamaCppSlots = topInt(page, "total_slots")
	}
	if page := get(b.RootTarget("/version")); page != nil {
		t.VLLMVersion, _ = topString(page, "version")
	}
}

// modelsOwner is the owned_by of model (else of the first model) in a /v1/models list.
func modelsOwner(b []byte, model string) string {
	if b == nil {
		return ""
	}
	s := jsonwire.NewScanner(b)
	if !s.EnterObject() {
		return ""
	}
	first := ""
	for n := 0; ; {
		key, ok := s.Member(&n)
		if !ok {
			break
		}
		if string(key) != "data" || !s.EnterArray() {
			s.Skip()
			continue
		}
		for e := 0; s.Element(&e); {
			if !s.EnterObject() {
				s.Skip()
				continue
			}
			var id, owner []byte
			for k := 0; ; {
				key, ok := s.Member(&k)
				if !ok {
					break
				}
				switch string(key) {
				case "id":
					id, _ = s.Str(nil)
				case "owned_by":
					owner, _ = s.Str(nil)
				default:
					s.Skip()
				}
			}
			if model != "" && string(id) == model {
				return string(owner)
			}
			if first == "" {
				first = string(owner)
			}
		}
	}
	if s.Err() != nil {
		return ""
	}
	return first
}

// topString is a top-level string member of a JSON object.
func topString(b []byte, name string) (string, bool) {
	s := jsonwire.NewScanner(b)
	if !s.EnterObject() {
		return "", false
	}
	for n := 0; ; {
		key, ok := s.Member(&n)
		if !ok {
			return "", false
		}
		if string(key) == name && s.Peek() == '"' {
			v, _ := s.Str(nil)
			return string(v), s.Err() == nil
		}
		s.Skip()
	}
}

// topInt is a top-level integer member of a JSON object; 0 when missing.
func topInt(b []byte, name string) int {
	s := jsonwire.NewScanner(b)
	if !s.EnterObject() {
		return 0
	}
	for n := 0; ; {
		key, ok := s.Member(&n)
		if !ok {
			return 0
		}
		if string(key) == name {
			v, _ := s.Int()
			return v
		}
		s.Skip()
	}
}
