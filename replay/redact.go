package replay

import (
	"net/url"
	"strings"
)

// Redacted replaces secrets wherever replay records a command line or options.
const Redacted = "REDACTED"

// secretHeaders are header names whose values are credentials.
var secretHeaders = map[string]bool{
	"authorization":       true,
	"proxy-authorization": true,
	"x-api-key":           true,
	"api-key":             true,
	"cookie":              true,
}

// IsSecretHeader reports whether a header's value is a credential that must never be written.
func IsSecretHeader(name string) bool {
	return secretHeaders[strings.ToLower(strings.TrimSpace(name))]
}

// redactHeader returns a "Name: value" header with the value replaced when it is a secret.
func redactHeader(h string) string {
	k, _, ok := strings.Cut(h, ":")
	if ok && IsSecretHeader(k) {
		return strings.TrimSpace(k) + ": " + Redacted
	}
	return h
}

// redactURL removes a password from a URL.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = url.User(Redacted)
	return u.String()
}

// RedactArgs returns a copy of a replay command line with secrets replaced: the values of
// --api-key, of -H/--header options naming a credential header, and passwords in URLs.
// Both "--flag value" and "--flag=value" forms, and "-Hvalue", are handled.
func RedactArgs(args []string) []string {
	out := make([]string, len(args))
	copy(out, args)
	for i := 0; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			break
		}
		name, value, hasValue := strings.Cut(a, "=")
		switch {
		case name == "--api-key":
			if hasValue {
				out[i] = name + "=" + Redacted
			} else if i+1 < len(out) {
				out[i+1] = Redacted
				i++
			}
		case name == "--header" || a == "-H":
			if hasValue {
				out[i] = name + "=" + redactHeader(value)
			} else if i+1 < len(out) {
				out[i+1] = redactHeader(out[i+1])
				i++
			}
		case strings.HasPrefix(a, "-H") && !strings.HasPrefix(a, "--"):
			v := strings.TrimPrefix(a[2:], "=")
			out[i] = "-H" + redactHeader(v)
		case name == "--url" || name == "-u":
			if hasValue {
				out[i] = name + "=" + redactURL(value)
			} else if i+1 < len(out) {
				out[i+1] = redactURL(out[i+1])
				i++
			}
		default:
			if strings.Contains(a, "://") {
				out[i] = redactURL(a)
			}
		}
	}
	return out
}
