package config

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/llmbench/llmbench/redact"
)

// Setting is one flag a config file sets: the values it is given (a list flag takes each,
// a sweep list or a slice flag their comma-joined form) and where the file said so.
type Setting struct {
	// Flag is the flag's name (an alias is resolved when it is set).
	Flag string
	// Values are the flag values, in order; Join sets them as one comma-separated value.
	Values []string
	Join   bool
	// Key and Line name the file's key, for errors.
	Key  string
	Line int
}

// Items are the values to set the flag to, one by one: Values, or their comma-joined form.
func (s Setting) Items() []string {
	if s.Join {
		return []string{strings.Join(s.Values, ",")}
	}
	return s.Values
}

// Error is a config file error at a line (0: the file as a whole).
type Error struct {
	Path string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("--config %s line %d: %s", e.Path, e.Line, e.Msg)
	}
	return fmt.Sprintf("--config %s: %s", e.Path, e.Msg)
}

// Flag is what a reader knows of one of the command's flags.
type Flag struct {
	// Name is the canonical name (an alias resolved).
	Name string
	// Repeatable: the flag takes one item per value, so a file's list repeats it rather than
	// joining its items with commas (a sweep list, a slice flag).
	Repeatable bool
	// Hidden flags are no config keys.
	Hidden bool
}

// Flags are the command's flags as the readers see them.
type Flags interface {
	// Lookup finds the flag of name, an alias or a canonical name.
	Lookup(name string) (Flag, bool)
	// Suggest is the flag or alias nearest to a misspelt name, or "" when none is near.
	Suggest(name string) string
}

// maxBytes bounds a config file: a flag file larger than this is not a config.
const maxBytes = 4 << 20

// Read reads the config file at path into the settings it makes for flags; getenv resolves
// ${VAR} and ${VAR:default} in values, as AIPerf does.
func Read(path string, flags Flags, getenv func(string) string) ([]Setting, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("--config %s: %w", path, err)
	}
	if len(data) > maxBytes {
		return nil, &Error{Path: path, Msg: fmt.Sprintf("larger than %d bytes: not a config file", maxBytes)}
	}
	return Parse(data, path, flags, getenv)
}

// Parse parses a config file's bytes (named path in errors) into settings for flags.
func Parse(data []byte, path string, flags Flags, getenv func(string) string) ([]Setting, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &Error{Path: path, Msg: "not YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	if len(doc.Content) == 0 {
		return nil, &Error{Path: path, Msg: "the file is empty"}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, &Error{Path: path, Line: root.Line, Msg: "want a mapping of keys to values"}
	}
	p := &parser{path: path, flags: flags, getenv: getenv}
	if err := p.substitute(root); err != nil {
		return nil, err
	}
	if v2, line := isV2(root); v2 {
		if err := p.v2(root); err != nil {
			return nil, err
		}
		return p.out, nil
	} else if line > 0 {
		return nil, &Error{Path: path, Line: line, Msg: `schemaVersion: only AIPerf's config v2 ("2.0") is read`}
	}
	if err := p.flagKeys(root); err != nil {
		return nil, err
	}
	return p.out, nil
}

// parser collects the settings of one file.
type parser struct {
	path   string
	flags  Flags
	getenv func(string) string
	out    []Setting
}

func (p *parser) errf(n *yaml.Node, format string, args ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &Error{Path: p.path, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// envRef is ${VAR} or ${VAR:default}; jinjaRef an AIPerf {{ expression }}.
var (
	envRef   = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}`)
	jinjaRef = regexp.MustCompile(`\{\{.*\}\}`)
)

// substitute replaces ${VAR} and ${VAR:default} in every scalar under n (a required variable
// that is unset is an error); AIPerf's computed {{ }} values are refused.
func (p *parser) substitute(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		if jinjaRef.MatchString(n.Value) {
			return p.errf(n, "computed values ({{ ... }}) are not supported: write the value")
		}
		var err error
		v := envRef.ReplaceAllStringFunc(n.Value, func(ref string) string {
			m := envRef.FindStringSubmatch(ref)
			if val := p.getenv(m[1]); val != "" {
				return val
			}
			if strings.Contains(ref, ":") {
				return m[2]
			}
			if err == nil {
				err = p.errf(n, "environment variable %s is not set (write ${%s:default} for a default)", m[1], m[1])
			}
			return ""
		})
		if err != nil {
			return err
		}
		if v != n.Value {
			n.Value, n.Tag, n.Style = v, "", 0 // re-typed by its new text, as AIPerf coerces
		}
		return nil
	}
	for _, c := range n.Content {
		if err := p.substitute(c); err != nil {
			return err
		}
	}
	return nil
}

// flagKeys reads a mapping of flag names (canonical, AIPerf aliases, snake_case) to values.
func (p *parser) flagKeys(root *yaml.Node) error {
	seen := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		name := strings.ReplaceAll(strings.TrimPrefix(k.Value, "--"), "_", "-")
		f, ok := p.flags.Lookup(name)
		if !ok || f.Hidden {
			msg := fmt.Sprintf("unknown key %q: no such flag", k.Value)
			if s := p.flags.Suggest(name); s != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", s)
			}
			return p.errf(k, "%s", msg)
		}
		if at, dup := seen[f.Name]; dup {
			return p.errf(k, "%q sets --%s again (line %d set it first)", k.Value, f.Name, at)
		}
		seen[f.Name] = k.Line
		if err := p.value(f, k, v); err != nil {
			return err
		}
	}
	return nil
}

// scalarList is the values of sequence v (key k), each a scalar.
func (p *parser) scalarList(k, v *yaml.Node) ([]string, error) {
	vals := make([]string, 0, len(v.Content))
	for _, e := range v.Content {
		if e.Kind != yaml.ScalarNode {
			return nil, p.errf(e, "%s: want a list of values", k.Value)
		}
		vals = append(vals, e.Value)
	}
	return vals, nil
}

// value adds the setting of flag f by node v (key k).
func (p *parser) value(f Flag, k, v *yaml.Node) error {
	s := Setting{Flag: f.Name, Key: k.Value, Line: k.Line}
	switch v.Kind {
	case yaml.ScalarNode:
		if v.Tag == "!!null" {
			return nil // null: not set
		}
		s.Values = []string{v.Value}
	case yaml.SequenceNode:
		vals, err := p.scalarList(k, v)
		if err != nil {
			return err
		}
		s.Values = vals
		if !f.Repeatable {
			s.Join = true // a sweep list (--concurrency 1,2,4) or a slice flag
		}
	case yaml.MappingNode:
		vals, err := p.mapValues(f.Name, k, v)
		if err != nil {
			return err
		}
		s.Values = vals
	default:
		return p.errf(v, "%s: want a value", k.Value)
	}
	p.out = append(p.out, s)
	return nil
}

// mapValues turns a mapping into the values of a flag that takes key-value items: headers
// ("Name: value"), extra inputs ("key:JSON"), resource attributes ("key=value").
func (p *parser) mapValues(flag string, k, m *yaml.Node) ([]string, error) {
	var sep string
	switch flag {
	case "header":
		sep = ": "
	case "extra-inputs":
		sep = ":"
	case "otel-resource-attributes":
		sep = "="
	default:
		return nil, p.errf(m, "%s: want a value or a list, not a mapping", k.Value)
	}
	var out []string
	for i := 0; i+1 < len(m.Content); i += 2 {
		key, val := m.Content[i], m.Content[i+1]
		s := val.Value
		if flag == "extra-inputs" {
			var v any
			if err := val.Decode(&v); err != nil {
				return nil, p.errf(val, "%s.%s: %v", k.Value, key.Value, err)
			}
			b, err := json.Marshal(v)
			if err != nil {
				return nil, p.errf(val, "%s.%s: %v", k.Value, key.Value, err)
			}
			s = string(b)
		} else if val.Kind != yaml.ScalarNode {
			return nil, p.errf(val, "%s.%s: want a value", k.Value, key.Value)
		}
		out = append(out, key.Value+sep+s)
	}
	return out, nil
}

// RedactedCredential reports whether flag name's value v holds the placeholder
// redact.Value where a credential goes (the api-key, a secret header's value): a file
// --print-config wrote, whose credentials it hid. The word anywhere else is a value.
func RedactedCredential(name, v string) bool {
	if !strings.Contains(v, redact.Value) {
		return false
	}
	probe := strings.ReplaceAll(v, redact.Value, "probe-0123456789")
	return redact.FlagValue(name, probe) != probe
}
