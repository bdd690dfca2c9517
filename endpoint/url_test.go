package endpoint

import (
	"strings"
	"testing"
)

// Base URLs as users write them: the AIPerf forms (no scheme), an OpenAI SDK base_url ending in
// /v1 (never doubled), a proxy prefix, a query kept on every request.
func TestBaseURL(t *testing.T) {
	for _, c := range []struct{ base, path, want, root string }{
		{"localhost:8000", "/v1/chat/completions", "http://localhost:8000/v1/chat/completions", "http://localhost:8000/metrics"},
		{"http://h:8000/v1", "/v1/chat/completions", "http://h:8000/v1/chat/completions", "http://h:8000/metrics"},
		{"localhost:8000/v1", "/v1/chat/completions", "http://localhost:8000/v1/chat/completions", "http://localhost:8000/metrics"},
		{"https://h/v1/", "/v1/messages", "https://h/v1/messages", "https://h/metrics"},
		{"http://h:8000/v1", "/v1/models", "http://h:8000/v1/models", "http://h:8000/metrics"},
		{"http://h/v1", "/chat/completions", "http://h/v1/chat/completions", "http://h/metrics"},
		{"http://h/v1", "/generate", "http://h/v1/generate", "http://h/metrics"},
		{"http://h/openai/v1", "/v1/responses", "http://h/openai/v1/responses", "http://h/openai/metrics"},
		{"http://h/openai/", "/v1/embeddings", "http://h/openai/v1/embeddings", "http://h/openai/metrics"},
		{"http://h/v1x", "/v1/completions", "http://h/v1x/v1/completions", "http://h/v1x/metrics"},
		{"http://h/v1?api-version=2", "/v1/chat/completions", "http://h/v1/chat/completions?api-version=2", "http://h/metrics?api-version=2"},
		{"http://h?a=1", "/generate?stream=1", "http://h/generate?stream=1&a=1", "http://h/metrics?a=1"},
		{"  HTTP://h:1  ", "v1/completions", "http://h:1/v1/completions", "http://h:1/metrics"},
		{"[::1]:8000/v1", "/v1/completions", "http://[::1]:8000/v1/completions", "http://[::1]:8000/metrics"},
	} {
		b, err := ParseBase(c.base)
		if err != nil {
			t.Errorf("ParseBase(%q): %v", c.base, err)
			continue
		}
		if got := b.URL(c.path); got != c.want {
			t.Errorf("%q + %q = %q, want %q", c.base, c.path, got, c.want)
		}
		if got := b.Origin() + b.RootTarget("/metrics"); got != c.root {
			t.Errorf("%q: root /metrics %q, want %q", c.base, got, c.root)
		}
	}
}

// A URL no request could be sent to is refused, saying what is wrong.
func TestBaseURLRefused(t *testing.T) {
	for _, c := range []struct{ base, want string }{
		{"htp:/bad url", "no spaces"},
		{"htp:/bad", `scheme "htp" without //`},
		{"http://h:8000/a b", "no spaces"},
		{"http://h\t:1", "no spaces"},
		{"ftp://h/x", `scheme must be http or https, not "ftp"`},
		{"http://", "no host"},
		{"http:///v1", "no host"},
		{"http://:8000", "no host"},
		{"h:", `port ""`},
		{"http://h:0", `port "0"`},
		{"http://h:99999/v1", "port"},
		{"http://h:80x", "port"},
		{"http://u:p@h:1", "credentials"},
		{"http://h:1/#x", "fragment"},
		{"", "empty"},
	} {
		_, err := ParseBase(c.base)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseBase(%q) = %v, want an error saying %q", c.base, err, c.want)
		}
	}
}

// A 404's hint names the path tried and, when the base's path is part of it, says so.
func TestNotFoundHint(t *testing.T) {
	for _, c := range []struct{ base, path, want string }{
		{"http://h/api", "/v1/chat/completions", "tried was /api/v1/chat/completions: --url's path /api goes before"},
		{"http://h/v1", "/v1/chat/completions", "tried was /v1/chat/completions: is --endpoint-type right"},
		{"http://h", "/generate?x=1", "tried was /generate: is --endpoint-type right"},
	} {
		b, err := ParseBase(c.base)
		if err != nil {
			t.Fatal(err)
		}
		if got := b.NotFoundHint(c.path); !strings.Contains(got, c.want) {
			t.Errorf("%q %q: %q, want %q", c.base, c.path, got, c.want)
		}
	}
}

// FuzzParseBase: any --url either is refused with an error or gives a base whose request
// target for an OpenAI path starts with one "/", never doubles /v1, and keeps the query.
func FuzzParseBase(f *testing.F) {
	for _, s := range []string{"localhost:8000", "http://h:8000/v1", "https://h/openai/v1/?api-version=1", "htp:/bad url",
		"http://", "http://:8000", "http://u:p@h", "h:70000", "http://h/v1#x", "[::1]:8000/v1/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		b, err := ParseBase(raw)
		if err != nil {
			return
		}
		target := b.Target("/v1/chat/completions")
		if !strings.HasPrefix(target, "/") {
			t.Fatalf("%q: target %q", raw, target)
		}
		if strings.Contains(target, "/v1/v1/") && !strings.Contains(b.Root, "/v1") {
			t.Fatalf("%q: target %q doubles /v1", raw, target)
		}
		if b.Query != "" && !strings.HasSuffix(target, b.Query) {
			t.Fatalf("%q: target %q lost the query %q", raw, target, b.Query)
		}
		if b.Host == "" {
			t.Fatalf("%q: accepted with no host", raw)
		}
	})
}
