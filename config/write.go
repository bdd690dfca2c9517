package config

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/llmbench/llmbench/redact"
)

// Kind is how an Entry's value is written.
type Kind int

const (
	// Text is a string, quoted where YAML would read it as something else.
	Text Kind = iota
	// Scalar is a number or a boolean: written plain when its text reads as one.
	Scalar
	// Items is a sweep list of more than one item (--concurrency 1,2,4): plain scalars.
	Items
	// List is a slice flag's values: a list of strings, [] when empty.
	List
)

// Entry is one flag as Write prints it.
type Entry struct {
	Name string
	// Set: given on the command line or by a file, a key; else a commented default.
	Set  bool
	Kind Kind
	// Value is the value's text (Text, Scalar); Values the items (Items, List).
	Value  string
	Values []string
}

// Write writes entries, in their order, as a config file that Read reads back: every set
// entry as a key with its value, then every other as a comment with its default. No
// credential is printed: every value goes through the command line's redaction
// (redact.FlagValue: the API key, secret headers' values, URLs' credentials), so a config
// printed to share a setup holds none (a key is given again with --api-key, OPENAI_API_KEY
// or --api-key-file; Apply refuses the placeholder, RedactedCredential).
func Write(w io.Writer, entries []Entry) error {
	var set, defaults strings.Builder
	for _, e := range entries {
		b, err := yaml.Marshal(map[string]any{e.Name: e.yamlValue()})
		if err != nil {
			return fmt.Errorf("--print-config: %w", err)
		}
		if e.Set {
			set.Write(b)
			continue
		}
		for _, l := range strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n") {
			defaults.WriteString("# " + strings.TrimSuffix(l, "\n") + "\n")
		}
	}
	_, err := fmt.Fprintf(w, "# The effective configuration: profile --config FILE reads it back (flags given with it win).\n"+
		"# Keys are flags; the commented keys below the set ones are defaults.\n%s\n# Defaults:\n%s", set.String(), defaults.String())
	return err
}

// yamlValue is e's value, redacted, as YAML: a list for list flags, a plain scalar for
// numbers and booleans, a string for the others (as its text, so it reads back to the same).
func (e Entry) yamlValue() any {
	switch e.Kind {
	case Items:
		out := make([]*yaml.Node, len(e.Values))
		for i, it := range e.Values {
			out[i] = &yaml.Node{Kind: yaml.ScalarNode, Value: redact.FlagValue(e.Name, it)}
		}
		return out
	case List:
		out := make([]string, len(e.Values))
		for i, v := range e.Values {
			out[i] = redact.FlagValue(e.Name, v)
		}
		return out
	}
	v := redact.FlagValue(e.Name, e.Value)
	if e.Kind == Scalar {
		if _, err := strconv.ParseFloat(v, 64); err == nil || v == "true" || v == "false" {
			return &yaml.Node{Kind: yaml.ScalarNode, Value: v}
		}
	}
	return v
}
