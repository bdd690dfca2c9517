// Package redact hides credentials in what llmbench records about a run: the replay command
// line and headers in run.json, and the same values that analyze copies into its exports. It
// is the one place that decides what counts as a secret (docs/run-format.md, "Secrets").
//
// A name is a secret's name when, compared case-insensitively, it contains one of
// SecretWords: "Authorization", "X-Custom-Token", "x-api-key", "Cookie", "api_key",
// "client_secret" all are. Header values and URL query values under such names, URL user
// information and the --api-key value are replaced by Value.
package redact

import (
	"net/url"
	"strings"
)

// Value replaces every secret.
const Value = "REDACTED"

// SecretWords are the fragments that make a header or query parameter name a secret's name.
var SecretWords = []string{"auth", "token", "key", "secret", "cookie", "password", "credential", "signature"}

// IsSecretName reports whether a header or query parameter named name carries a credential.
func IsSecretName(name string) bool {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, w := range SecretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
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

// URL returns raw with its user information and the values of query parameters with a
// secret's name replaced. Everything else is kept byte for byte. A string that does not
// parse as a URL but could hold a credential ('@' or '?') is replaced whole.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if strings.ContainsAny(raw, "@?") {
			return Value
		}
		return raw
	}
	if u.User != nil {
		u.User = url.User(Value)
	}
	u.RawQuery = query(u.RawQuery)
	return u.String()
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

// query redacts the values of secret-named parameters of a raw query, keeping the order and
// the escaping of everything else.
func query(raw string) string {
	if raw == "" {
		return raw
	}
	parts := strings.Split(raw, "&")
	for i, p := range parts {
		k, _, hasValue := strings.Cut(p, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		if hasValue && IsSecretName(name) {
			parts[i] = k + "=" + Value
		}
	}
	return strings.Join(parts, "&")
}

// Args returns a copy of a replay command line with secrets replaced: the value of
// --api-key, the values of -H/--header options naming a secret header, and credentials in
// --url/-u values and in any other argument holding "://". The forms "--flag value",
// "--flag=value", "-Hvalue" and "-uvalue" are all handled; arguments after "--" are left alone.
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
		case name == "--url" || a == "-u":
			next(URL)
		case strings.HasPrefix(a, "-u") && !strings.HasPrefix(a, "--"):
			out[i] = attached(a, URL)
		case strings.Contains(a, "://"):
			out[i] = URL(a)
		}
	}
	return out
}

// attached redacts the value of a shorthand flag written with it, "-Hvalue" or "-H=value".
func attached(a string, f func(string) string) string {
	flag, v := a[:2], a[2:]
	if strings.HasPrefix(v, "=") {
		flag, v = a[:3], a[3:]
	}
	return flag + f(v)
}
