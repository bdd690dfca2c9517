// Package redact hides credentials in everything llmbench writes about a run: the replay
// command line, headers and URLs in run.json, the metrics endpoints in server_metrics.jsonl,
// analyze's exports and report, console lines and error messages. It is the one place that
// decides what counts as a secret (docs/run-format.md, "Secrets").
//
// A header or query parameter name is a secret's name when, compared case-insensitively, it
// contains one of SecretWords ("Authorization", "X-Custom-Token", "x-api-key", "Cookie",
// "client_secret", "X-Amz-Signature", "X-Amz-Security-Token", "X-Goog-Credential" all do),
// or one of its words is one of SecretNames ("sig" of an Azure SAS URL, "pwd", "code" of an
// Azure Functions key). Header values and URL query (and fragment) values under such names,
// URL user information and the --api-key value are replaced by Value.
package redact

import (
	"io"
	"net/url"
	"strings"
	"unicode"
)

// Value replaces every secret.
const Value = "REDACTED"

// SecretWords are the fragments that make a header or query parameter name a secret's name
// wherever they occur in it.
var SecretWords = []string{"auth", "token", "key", "secret", "cookie", "passw", "passphrase", "credential", "signature"}

// SecretNames are the short names that make a name a secret's when they are one of its
// words (runs of letters and digits, split at a lower-to-upper case change as well): "sig"
// and "X-Sig" are secrets' names, "signal" is not.
var SecretNames = []string{"sig", "pwd", "pass", "jwt", "sas", "otp", "code"}

// IsSecretName reports whether a header or query parameter named name carries a credential.
func IsSecretName(name string) bool {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, w := range SecretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	for _, w := range words(strings.TrimSpace(name)) {
		for _, s := range SecretNames {
			if strings.EqualFold(w, s) {
				return true
			}
		}
	}
	return false
}

// words splits a name into its runs of letters and digits, also splitting "urlSig" before
// the upper-case letter.
func words(name string) []string {
	var out []string
	start := -1
	prev := rune(0)
	for i, c := range name {
		alnum := unicode.IsLetter(c) || unicode.IsDigit(c)
		switch {
		case !alnum:
			if start >= 0 {
				out = append(out, name[start:i])
				start = -1
			}
		case start < 0:
			start = i
		case unicode.IsUpper(c) && unicode.IsLower(prev):
			out = append(out, name[start:i])
			start = i
		}
		prev = c
	}
	if start >= 0 {
		out = append(out, name[start:])
	}
	return out
}

// Header returns a "Name: value" header with the value replaced when the name is a secret's.
// A string without a colon is returned as it is (it is no header, and holds no value).
func Header(h string) string {
	k, _, ok := strings.Cut(h, ":")
	if ok && IsSecretName(k) {
		return strings.TrimSpace(k) + ": " + Value
	}
	return h
}

// URL returns raw with its user information and the values of query and fragment
// parameters with a secret's name replaced; everything else is kept byte for byte. It works
// on the text, without parsing, so that a string no URL parser accepts, or one without a
// scheme ("user:pw@host:9400/metrics?token=t", as --server-metrics-url takes it), is
// redacted the same way: user information is whatever precedes the last '@' before the
// first '/' after "://" (or after the start when there is no "://").
func URL(raw string) string {
	start := 0
	if i := strings.Index(raw, "://"); i >= 0 {
		start = i + 3
	} else if strings.HasPrefix(raw, "//") {
		start = 2
	}
	head, rest := raw, ""
	if j := strings.IndexByte(raw[start:], '/'); j >= 0 {
		head, rest = raw[:start+j], raw[start+j:]
	}
	if k := strings.LastIndexByte(head[start:], '@'); k >= 0 {
		head = head[:start] + Value + head[start+k:]
	}
	// Query and fragment: in rest, or in head when the URL has no path ("h:1?token=t").
	s := head + rest
	base, frag, hasFrag := strings.Cut(s, "#")
	base, q, hasQuery := strings.Cut(base, "?")
	if !hasQuery && !hasFrag {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(base)
	if hasQuery {
		b.WriteByte('?')
		b.WriteString(query(q))
	}
	if hasFrag {
		b.WriteByte('#')
		b.WriteString(query(frag))
	}
	return b.String()
}

// URLs applies URL to each of us, returning a new slice (nil for nil).
func URLs(us []string) []string {
	if us == nil {
		return nil
	}
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = URL(u)
	}
	return out
}

// query redacts the values of secret-named parameters of a raw query (or fragment), keeping
// the order, the separators ('&' or ';') and the escaping of everything else.
func query(raw string) string {
	if !strings.Contains(raw, "=") {
		return raw
	}
	var b strings.Builder
	b.Grow(len(raw))
	for raw != "" {
		i := strings.IndexAny(raw, "&;")
		p, sep := raw, ""
		if i >= 0 {
			p, sep, raw = raw[:i], raw[i:i+1], raw[i+1:]
		} else {
			raw = ""
		}
		k, _, hasValue := strings.Cut(p, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		if hasValue && IsSecretName(name) {
			p = k + "=" + Value
		}
		b.WriteString(p)
		b.WriteString(sep)
	}
	return b.String()
}

// Text returns s with every URL in it redacted (URL): each word holding "://", and each
// word holding a query with a parameter ("host:9400/metrics?token=t"). Words end at white
// space, quotes and angle brackets; trailing punctuation (".,;:)]}!") stays outside the
// URL. Everything else is kept byte for byte. Error messages and notices go through it
// before they are written anywhere: Go's HTTP client puts the whole URL in its errors.
func Text(s string) string {
	if !strings.Contains(s, "://") && !strings.Contains(s, "?") && !strings.Contains(s, "#") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for s != "" {
		i := strings.IndexFunc(s, isDelim)
		if i == 0 {
			b.WriteByte(s[0]) // every delimiter is one byte
			s = s[1:]
			continue
		}
		w := s
		if i > 0 {
			w, s = s[:i], s[i:]
		} else {
			s = ""
		}
		core := strings.TrimRight(w, ".,;:)]}!")
		if strings.Contains(core, "://") || (strings.ContainsAny(core, "?#") && strings.Contains(core, "=")) {
			b.WriteString(URL(core))
			b.WriteString(w[len(core):])
		} else {
			b.WriteString(w)
		}
	}
	return b.String()
}

// isDelim reports whether c ends a word for Text.
func isDelim(c rune) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\v', '\f', '"', '\'', '`', '<', '>':
		return true
	}
	return false
}

// Writer applies Text to every write before passing it on: a command's stdout and stderr
// go through one, so that no line it prints holds a credential.
type Writer struct{ w io.Writer }

// NewWriter returns a Writer writing to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes Text(p) to the underlying writer; it reports len(p) when that succeeded.
// Each write is redacted on its own, which covers every write that holds whole URLs (the
// fmt functions write each formatted line in one call).
func (x *Writer) Write(p []byte) (int, error) {
	s := Text(string(p))
	if _, err := io.WriteString(x.w, s); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Unwrap returns the writer x writes to (to tell whether it is a terminal).
func (x *Writer) Unwrap() io.Writer { return x.w }

// Args returns a copy of a replay command line with secrets replaced: the value of
// --api-key, the values of -H/--header options naming a secret header, credentials in the
// values of URL flags (--url/-u and every --*-url, --*-urls; --server-metrics=URL and
// --gpu-telemetry=URL, whose value is optional and so only ever attached), with or without
// a scheme, and credentials in any other argument holding "://". The forms "--flag value",
// "--flag=value", "-Hvalue" and "-uvalue" are all handled; arguments after "--" are left
// alone.
func Args(args []string) []string {
	if args == nil {
		return nil
	}
	out := make([]string, len(args))
	copy(out, args)
	for i := 0; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			break
		}
		name, value, hasValue := strings.Cut(a, "=")
		// next redacts the flag's value: after "=", or the following argument.
		next := func(f func(string) string) {
			if hasValue {
				out[i] = name + "=" + f(value)
			} else if i+1 < len(out) {
				out[i+1] = f(out[i+1])
				i++
			}
		}
		switch {
		case name == "--api-key":
			next(func(string) string { return Value })
		case name == "--header" || a == "-H":
			next(Header)
		case strings.HasPrefix(a, "-H") && !strings.HasPrefix(a, "--"):
			out[i] = attached(a, Header)
		case isURLFlag(name) || a == "-u":
			next(URL)
		case (name == "--server-metrics" || name == "--gpu-telemetry") && hasValue:
			out[i] = name + "=" + URL(value)
		case strings.HasPrefix(a, "-u") && !strings.HasPrefix(a, "--"):
			out[i] = attached(a, URL)
		case strings.Contains(a, "://"):
			out[i] = URL(a)
		}
	}
	return out
}

// isURLFlag reports whether a long flag takes a URL as its (required) value: --url and every
// --*-url or --*-urls.
func isURLFlag(name string) bool {
	n := strings.ToLower(name)
	return strings.HasPrefix(n, "--") && (strings.HasSuffix(n, "url") || strings.HasSuffix(n, "urls"))
}

// attached redacts the value of a shorthand flag written with it, "-Hvalue" or "-H=value".
func attached(a string, f func(string) string) string {
	flag, v := a[:2], a[2:]
	if strings.HasPrefix(v, "=") {
		flag, v = a[:3], a[3:]
	}
	return flag + f(v)
}
