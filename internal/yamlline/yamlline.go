// Package yamlline finds the line of a YAML file's error again (analyze --metrics-file,
// --gates): sigs.k8s.io/yaml converts YAML to JSON before decoding, so encoding/json's errors
// know no line. It imports only the standard library.
package yamlline

import (
	"bytes"
	"regexp"
	"strings"
)

// UnknownField finds the field name in encoding/json's "unknown field" error.
var UnknownField = regexp.MustCompile(`unknown field "([^"]*)"`)

// KeyLine is the 1-based line of the first "key:" (possibly after "- ") after line after,
// or 0 when there is none.
func KeyLine(data []byte, key string, after int) int {
	for i, l := range bytes.Split(data, []byte("\n")) {
		if i+1 <= after {
			continue
		}
		t := strings.TrimLeft(string(l), " \t")
		t = strings.TrimLeft(strings.TrimPrefix(t, "-"), " \t")
		t = strings.Trim(strings.SplitN(t, ":", 2)[0], `"'`)
		if t == key && strings.Contains(string(l), ":") {
			return i + 1
		}
	}
	return 0
}
