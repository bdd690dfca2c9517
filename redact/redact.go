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
	"bytes"
	"io"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
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

// Header returns a "Name: value" header with the value replaced when the name is a secret's,
// and otherwise the credentials Text finds in the value hidden (the credential of "Bearer
// KEY" or a base64 "Basic", a URL's user information and secret parameters). A string
// without a colon is returned as it is (it is no header, and holds no value).
func Header(h string) string {
	k, v, ok := strings.Cut(h, ":")
	if !ok {
		return h
	}
	if IsSecretName(k) {
		return strings.TrimSpace(k) + ": " + Value
	}
	return k + ":" + Text(v) // "X-Forward: Bearer KEY", a URL's credentials
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

// Text returns s with every credential in it redacted: every URL (URL), each word holding
// "://", and each word holding a query with a parameter ("host:9400/metrics?token=t");
// the credential of an HTTP authentication header echoed in prose, the word after "Bearer"
// (or after "Basic" when it looks like base64) and the value after "Authorization:",
// "x-api-key:" or "api-key=" (a server's error body often quotes the header it refused),
// after the scheme's name when one comes first ("Authorization: Token KEY"), a word of
// MinSecretLen bytes or more;
// and every value registered with AddSecrets (the API key, secret headers' values).
// Words end at white space, quotes and angle brackets; trailing punctuation (".,;:)]}!")
// stays outside the URL. Everything else is kept byte for byte. Error messages and notices
// go through it before they are written anywhere: Go's HTTP client puts the whole URL in
// its errors.
func Text(s string) string {
	s = knownSecrets(s)
	s = echoedCredentials(s)
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

// MinSecretLen is the shortest value AddSecrets registers: a shorter one would hide
// ordinary words and numbers wherever they occur.
const MinSecretLen = 8

// secrets are the values AddSecrets registered, longest first.
var secrets struct {
	sync.RWMutex
	values []string
}

// AddSecrets registers values this process knows to be credentials (the API key, the values
// of secret-named headers): Text replaces each wherever it occurs, so one a server echoes
// back in an error body is never printed or exported. Values shorter than MinSecretLen,
// after trimming white space, and repeats are ignored. The commands call it when they read
// their flags and environment.
func AddSecrets(values ...string) {
	secrets.Lock()
	defer secrets.Unlock()
	for _, v := range values {
		v = strings.TrimSpace(v)
		if len(v) < MinSecretLen || v == Value || slices.Contains(secrets.values, v) {
			continue
		}
		secrets.values = append(secrets.values, v)
	}
	// Longest first: a secret holding another is replaced whole.
	slices.SortFunc(secrets.values, func(a, b string) int { return len(b) - len(a) })
}

// HeaderSecrets are the credentials a request's headers carry: the value of every
// secret-named header (IsSecretName) or of one whatever its name that starts with a Bearer or
// Basic scheme, and the credential after its scheme ("X" of "Bearer X"), each MinSecretLen
// bytes or longer. AddSecrets and Mask take them.
func HeaderSecrets(headers [][2]string) []string {
	var out []string
	for _, h := range headers {
		v := strings.TrimSpace(h[1])
		scheme, cred, _ := strings.Cut(v, " ")
		if !IsSecretName(h[0]) && !strings.EqualFold(scheme, "bearer") && !strings.EqualFold(scheme, "basic") {
			continue
		}
		for _, s := range []string{v, strings.TrimSpace(cred)} {
			if len(s) >= MinSecretLen && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	// Longest first: a secret holding another is masked whole.
	slices.SortStableFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// Mask overwrites, in place, every occurrence in b of each of secrets (HeaderSecrets'
// values as bytes, longest first) with a mask of the same length: Value, then '*' to the secret's length
// (only '*' for one shorter than Value). The length is kept so that the offsets recorded
// with b (a raw log's read ends) still hold, and b stays valid JSON or SSE wherever the
// secret sat in a string. It allocates nothing; it reports whether it masked anything.
func Mask(b []byte, secrets [][]byte) bool {
	masked := false
	for _, s := range secrets {
		if len(s) == 0 {
			continue
		}
		for i := 0; i+len(s) <= len(b); {
			j := bytes.Index(b[i:], s)
			if j < 0 {
				break
			}
			m := b[i+j : i+j+len(s)]
			n := 0
			if len(m) >= len(Value) {
				n = copy(m, Value)
			}
			for k := n; k < len(m); k++ {
				m[k] = '*'
			}
			masked = true
			i += j + len(s)
		}
	}
	return masked
}

// knownSecrets replaces every registered secret in s.
func knownSecrets(s string) string {
	secrets.RLock()
	defer secrets.RUnlock()
	for _, v := range secrets.values {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, Value)
		}
	}
	return s
}

// echoedHeaders are the header names whose value Text hides where prose quotes them
// ("Authorization: sk-1", "x-api-key=sk-1"), matched case-insensitively at a word start.
var echoedHeaders = []string{"proxy-authorization", "authorization", "x-api-key", "api-key", "api_key", "apikey"}

// echoedCredentials hides the credential after an authentication scheme or a credential
// header's name in prose (Text).
func echoedCredentials(s string) string {
	lower := asciiLower(s) // byte for byte: the indices are s's
	if !strings.Contains(lower, "bearer") && !strings.Contains(lower, "basic") && !strings.Contains(lower, "auth") &&
		!strings.Contains(lower, "key") {
		return s
	}
	var b strings.Builder
	last := 0 // s[:last] is written
	for i := 0; i < len(s); i++ {
		if i > 0 && isWordByte(s[i-1]) {
			continue
		}
		v, w := credentialAt(s, lower, i)
		if v < 0 {
			continue
		}
		b.WriteString(s[last:v])
		b.WriteString(Value)
		last, i = w, w-1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// credentialAt finds a credential introduced at i (a word start): after "Bearer " any word,
// after "Basic " a base64-looking one, after a credential header's name and ':' or '=' any
// word but a scheme's name (the scheme's own turn hides what follows it); a word shorter than
// MinSecretLen is none. It returns the
// credential's bounds s[v:w], v < 0 when there is none or it is already hidden.
func credentialAt(s, lower string, i int) (v, w int) {
	after, scheme, query := -1, "", false
	switch {
	case hasWordAt(lower, i, "bearer"):
		after, scheme = i+len("bearer"), "bearer"
	case hasWordAt(lower, i, "basic"):
		after, scheme = i+len("basic"), "basic"
	default:
		for _, h := range echoedHeaders {
			if j := i + len(h); strings.HasPrefix(lower[i:], h) && j < len(s) && (s[j] == ':' || s[j] == '=') {
				after, query = j+1, s[j] == '='
				break
			}
		}
	}
	if after < 0 {
		return -1, -1
	}
	v = after
	for v < len(s) && (s[v] == ' ' || s[v] == '\t') {
		v++
	}
	if scheme != "" && v == after {
		return -1, -1 // a scheme and its credential are apart
	}
	w = wordEnd(s, v)
	if query {
		// "api_key=KEY&b=2" is a query's parameter: its value ends at the next parameter
		// (or the fragment), which is kept.
		if k := strings.IndexAny(s[v:w], "&;#"); k >= 0 {
			w = v + k
		}
	}
	word := s[v:w]
	if scheme == "" && w < len(s) && s[w] == ' ' && isScheme(word) {
		// "Authorization: Token KEY", "SSWS KEY": the credential is the scheme's next word.
		if v2 := w + 1; v2 < len(s) && !isDelim(rune(s[v2])) {
			v, w = v2, wordEnd(s, v2)
			word = s[v:w]
		}
	}
	switch {
	case len(word) < MinSecretLen || word == Value:
		return -1, -1 // too short to be a credential ("Bearer KEY" of a help text), or hidden
	case scheme == "basic" && !looksBase64(word):
		return -1, -1 // "basic" as a word of prose
	case scheme == "" && (strings.EqualFold(word, "bearer") || strings.EqualFold(word, "basic")):
		return -1, -1
	}
	return v, w
}

// wordEnd is the end of the word of s starting at v: at white space, a quote, an angle
// bracket or a comma, trailing punctuation left outside (as after a URL).
func wordEnd(s string, v int) int {
	w := v
	for w < len(s) && !isDelim(rune(s[w])) && s[w] != ',' {
		w++
	}
	for w > v && strings.IndexByte(".;:)]}!", s[w-1]) >= 0 {
		w--
	}
	return w
}

// isScheme reports whether word looks like an authentication scheme's name (Token, SSWS,
// Digest, ApiKey): letters only, shorter than MinSecretLen.
func isScheme(word string) bool {
	if word == "" || len(word) >= MinSecretLen {
		return false
	}
	for i := 0; i < len(word); i++ {
		if c := word[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// asciiLower is s with ASCII upper-case letters lowered, every other byte kept (so that
// its byte offsets are s's, invalid UTF-8 included).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// hasWordAt reports whether lower holds word at i, not followed by a letter or digit.
func hasWordAt(lower string, i int, word string) bool {
	j := i + len(word)
	return strings.HasPrefix(lower[i:], word) && (j == len(lower) || !isWordByte(lower[j]))
}

// isWordByte reports whether c is an ASCII letter or digit (or '-', '_' inside a name).
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// looksBase64 reports whether w looks like Basic credentials: 8 or more base64 characters
// with a digit, '+', '/' or '=' among them (an English word has none).
func looksBase64(w string) bool {
	if len(w) < 8 {
		return false
	}
	mark := false
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=':
			mark = true
		default:
			return false
		}
	}
	return mark
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
// values of --extra-inputs fields under a secret's name (ExtraInput), credentials in the
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
		case name == "--extra-inputs":
			next(ExtraInput)
		case isURLFlag(name) || a == "-u":
			next(URL)
		case (name == "--server-metrics" || name == "--gpu-telemetry") && hasValue:
			out[i] = name + "=" + URL(value)
		case strings.HasPrefix(a, "-u") && !strings.HasPrefix(a, "--"):
			out[i] = attached(a, URL)
		case strings.Contains(a, "://"):
			out[i] = URL(a)
		case strings.HasPrefix(a, "-") && hasValue && !metricFlags[name]:
			out[i] = name + "=" + KeyValues(value) // --otel-resource-attributes=api_key=KEY
		case !strings.HasPrefix(a, "-") && (i == 0 || !metricFlags[out[i-1]]):
			out[i] = KeyValues(a) // the value of any flag: "--otel-resource-attributes api_key=KEY"
		}
	}
	return out
}

// metricFlags are the flags whose values name metrics and give expressions, not key=value
// pairs: their "time_to_first_token:400" is a token of output, not a credential.
var metricFlags = map[string]bool{"--goodput": true, "--search-sla": true, "--fail-on-regression": true,
	"--gate": true, "--metric": true, "--where": true, "--group-by": true}

// KeyValues returns v, a flag's value, with the value of every key=value or key:value pair
// in it whose key is a secret's name (isSecretField: "api_key=KEY", "auth_token:KEY", but
// not "max_tokens:5") replaced; pairs are separated by commas, as list flags take them
// ("service.name=x,api_key=KEY"). A key is a name (letters, digits, '_', '-', '.'); any
// other text ("a = b", a path, a header's "Name: value" form with spaces in its name) is
// kept. It is the one rule for every flag taking pairs (--otel-resource-attributes,
// --extra-inputs, any other), on the command line (Args) and in a printed or recorded
// configuration (FlagValue).
func KeyValues(v string) string {
	if !strings.ContainsAny(v, "=:") {
		return v
	}
	items := strings.Split(v, ",")
	changed := false
	for i, it := range items {
		j := strings.IndexAny(it, "=:")
		if j <= 0 || !isKey(strings.TrimSpace(it[:j])) || !isSecretField(it[:j]) {
			continue
		}
		if rest := strings.TrimSpace(it[j+1:]); rest == "" || rest == Value {
			continue
		}
		items[i], changed = it[:j+1]+Value, true
	}
	if !changed {
		return v
	}
	return strings.Join(items, ",")
}

// isKey reports whether k is a key of a key=value pair: letters, digits, '_', '-' and '.'.
func isKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; !isWordByte(c) && c != '.' {
			return false
		}
	}
	return true
}

// ExtraInput returns an --extra-inputs value ("k:v", or a JSON object) with the value of a
// field under a secret's name replaced (some servers take the key in the body: "api_key:KEY",
// {"x_token":"KEY"}); token counts ("max_tokens", "min_tokens") are no secrets. In a JSON
// object, string values and bare scalars of top-level and nested fields are replaced.
func ExtraInput(v string) string {
	if strings.HasPrefix(strings.TrimSpace(v), "{") {
		return jsonField.ReplaceAllStringFunc(v, func(m string) string {
			sub := jsonField.FindStringSubmatch(m)
			if !isSecretField(sub[1]) {
				return m
			}
			return sub[0][:len(sub[0])-len(sub[2])] + `"` + Value + `"`
		})
	}
	return KeyValues(v)
}

// jsonField matches a JSON field whose value is a string or a bare scalar: its name, and
// its value.
var jsonField = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"\s*:\s*("(?:[^"\\]|\\.)*"|[-+.\w]+)`)

// isSecretField reports whether a request body field named name carries a credential
// (IsSecretName, but for token counts).
func isSecretField(name string) bool {
	n := strings.ToLower(strings.TrimSpace(name))
	return IsSecretName(n) && !strings.HasSuffix(n, "tokens")
}

// FlagValue is the value v of the flag named name (without its dashes) with its credentials
// replaced as Args replaces them on a command line ("--name=v"): for a configuration printed
// or recorded flag by flag (profile --print-config, the plan's flags in the exports).
func FlagValue(name, v string) string {
	if v == "" {
		return v
	}
	return strings.TrimPrefix(Args([]string{"--" + name + "=" + v})[0], "--"+name+"=")
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

// AddCredentials registers the credentials this process sends, the API key and
// the values of secret-named headers (with and without their scheme, "Bearer X" and "X";
// HeaderSecrets), so that no line or export ever holds one a server echoes back
// (AddSecrets).
func AddCredentials(apiKey string, headers []string) {
	AddSecrets(apiKey)
	var hs [][2]string
	for _, h := range headers {
		if k, v, ok := strings.Cut(h, ":"); ok {
			hs = append(hs, [2]string{k, v})
		}
	}
	AddSecrets(HeaderSecrets(hs)...)
}
