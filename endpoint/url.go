package endpoint

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode"
)

// A server's base URL as users write it (--url), and the one place a plan's path is joined
// to it: the requests, the preflight, the readiness probes and the identity pages all ask
// Base for their URLs.
//
// The base URL's path is a prefix the server is mounted under (a proxy's /openai), kept
// before every path, with one exception: a base whose path ends in /v1 is what every OpenAI
// SDK takes as its base_url (http://host:8000/v1), so a plan path that starts with /v1 itself
// (/v1/chat/completions: every OpenAI-style endpoint type) does not get a second one. Both
// http://host:8000 and http://host:8000/v1 then send to /v1/chat/completions, and a custom
// path under a /v1 base (/chat/completions) still goes to /v1/chat/completions. What is at the
// server's root (/metrics, /props, /version) is asked under the base's path without its /v1.

// Base is a parsed base URL.
type Base struct {
	// Scheme is http or https; Host is host[:port] as given.
	Scheme, Host string
	// Path is the URL's escaped path without its trailing slashes; Root is Path without a
	// final /v1 (the server's root under the prefix), the same as Path when it has none.
	Path, Root string
	// Query is the URL's raw query, kept on every request (Azure's ?api-version=...).
	Query string
}

// ParseBase parses a base URL: http:// is added when it has no scheme (as AIPerf does,
// localhost:8000). It refuses what no request could be sent to: spaces or control
// characters, a scheme other than http and https (or one without //), no host, a port that
// is not a number from 1 to 65535, credentials (use --api-key or -H), a fragment. Its errors
// say what is wrong without repeating the URL: the caller names the flag and the URL,
// redacted.
func ParseBase(raw string) (Base, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return Base{}, errors.New("empty")
	}
	if i := strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }); i >= 0 {
		return Base{}, fmt.Errorf("holds %q at byte %d: a URL has no spaces (percent-encode them as %%20)", s[i:i+1], i)
	}
	if !strings.Contains(s, "://") {
		if scheme, _, ok := strings.Cut(s, ":/"); ok && isScheme(scheme) {
			return Base{}, fmt.Errorf("scheme %q without //: want http:// or https:// before the host", scheme)
		}
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // it holds the URL itself
		}
		return Base{}, err
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return Base{}, fmt.Errorf("scheme must be http or https, not %q", u.Scheme)
	case u.Opaque != "" || u.Hostname() == "":
		return Base{}, errors.New("no host: want http[s]://host[:port][/path]")
	case u.User != nil:
		return Base{}, errors.New("credentials in URLs are not supported (use --api-key or -H)")
	case u.Fragment != "" || strings.Contains(s, "#"):
		return Base{}, errors.New("a fragment (#...) is never sent to a server")
	}
	if port := u.Port(); port != "" || strings.HasSuffix(u.Host, ":") {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return Base{}, fmt.Errorf("port %q: want a number from 1 to 65535", port)
		}
	}
	b := Base{Scheme: u.Scheme, Host: u.Host, Query: u.RawQuery, Path: strings.TrimRight(u.EscapedPath(), "/")}
	b.Root, _ = strings.CutSuffix(b.Path, "/v1")
	return b, nil
}

// isScheme says whether s is a URL scheme's syntax (RFC 3986: a letter, then letters, digits,
// +, - or .).
func isScheme(s string) bool {
	for i, r := range s {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || !(r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return false
		}
	}
	return s != ""
}

// Origin is scheme://host: where the server's root is, whatever the base's path.
func (b Base) Origin() string { return b.Scheme + "://" + b.Host }

// Target is the request target (path and query) of the plan path p under b: the base's path
// (without its final /v1 when p starts with /v1), p, and the base's query after any query p
// carries.
func (b Base) Target(p string) string {
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	dir := b.Path
	if dir != b.Root && (p == "/v1" || strings.HasPrefix(p, "/v1/") || strings.HasPrefix(p, "/v1?")) {
		dir = b.Root
	}
	return withQuery(dir+p, b.Query)
}

// RootTarget is the request target of p at the server's root (/metrics, /props, /version):
// under the base's path without its final /v1.
func (b Base) RootTarget(p string) string {
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return withQuery(b.Root+p, b.Query)
}

// withQuery appends query to target, after any query target carries.
func withQuery(target, query string) string {
	switch {
	case query == "":
		return target
	case strings.Contains(target, "?"):
		return target + "&" + query
	}
	return target + "?" + query
}

// URL is the absolute URL of the plan path p under b.
func (b Base) URL(p string) string { return b.Origin() + b.Target(p) }

// NotFoundHint is what to say when the server answered 404 to the plan path p under b: the
// path tried, which part of it is the base's, and what to change.
func (b Base) NotFoundHint(p string) string {
	tried, _, _ := strings.Cut(b.Target(p), "?")
	p, _, _ = strings.Cut(p, "?")
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	if prefix := strings.TrimSuffix(tried, p); prefix != "" && prefix != tried {
		return fmt.Sprintf("the path tried was %s: --url's path %s goes before the plan's %s; give the server's root (%s) or its /v1 base URL (%s/v1) unless it is mounted under %s",
			tried, prefix, p, b.Origin(), b.Origin(), prefix)
	}
	return fmt.Sprintf("the path tried was %s: is --endpoint-type right, or does the server serve this API under another path (--custom-endpoint PATH, or a --url ending in its base path)?", tried)
}
