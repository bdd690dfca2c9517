package replay

import "github.com/llmbench/llmbench/redact"

// Redacted replaces secrets wherever replay records a command line or options (redact.Value).
const Redacted = redact.Value

// RedactArgs returns a copy of a replay command line with every secret replaced, as run.json
// records it (redact.Args).
func RedactArgs(args []string) []string { return redact.Args(args) }

// redactHeader, redactURL and redactText are the redact package's rules under the names the
// coordinator and client use.
func redactHeader(h string) string { return redact.Header(h) }
func redactURL(raw string) string  { return redact.URL(raw) }
func redactText(s string) string   { return redact.Text(s) }
