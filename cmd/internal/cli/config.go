package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/llmbench/llmbench/redact"
)

// Config files (--config FILE, -f): YAML that sets flags, either keyed by flag names
// (docs/profile.md "Config file"; what --print-config writes) or AIPerf's config v2
// (schemaVersion "2.0" and a benchmark: body, configv2.go), whose keys are mapped onto the
// same flags. A flag given on the command line wins over the file. An unknown key, or one
// this tool has no meaning for, is an error naming the file, the line and the key.

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

// ConfigError is a config file error at a line (0: the file as a whole).
type ConfigError struct {
	Path string
	Line int
	Msg  string
}

func (e *ConfigError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("--config %s line %d: %s", e.Path, e.Line, e.Msg)
	}
	return fmt.Sprintf("--config %s: %s", e.Path, e.Msg)
}

// maxConfigBytes bounds a config file: a flag file larger than this is not a config.
const maxConfigBytes = 4 << 20

// ReadConfigFile reads the config file at path into the settings it makes, for fs; getenv
// resolves ${VAR} and ${VAR:default} in values, as AIPerf does.
func ReadConfigFile(path string, fs *pflag.FlagSet, getenv func(string) string) ([]Setting, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("--config %s: %w", path, err)
	}
	if len(data) > maxConfigBytes {
		return nil, &ConfigError{Path: path, Msg: fmt.Sprintf("larger than %d bytes: not a config file", maxConfigBytes)}
	}
	return ParseConfig(data, path, fs, getenv)
}

// ParseConfig parses a config file's bytes (named path in errors) into settings for fs.
func ParseConfig(data []byte, path string, fs *pflag.FlagSet, getenv func(string) string) ([]Setting, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &ConfigError{Path: path, Msg: "not YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	if len(doc.Content) == 0 {
		return nil, &ConfigError{Path: path, Msg: "the file is empty"}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, &ConfigError{Path: path, Line: root.Line, Msg: "want a mapping of keys to values"}
	}
	p := &configParser{path: path, fs: fs, getenv: getenv}
	if err := p.substitute(root); err != nil {
		return nil, err
	}
	if v2, line := isV2(root); v2 {
		if err := p.v2(root); err != nil {
			return nil, err
		}
		return p.out, nil
	} else if line > 0 {
		return nil, &ConfigError{Path: path, Line: line, Msg: `schemaVersion: only AIPerf's config v2 ("2.0") is read`}
	}
	if err := p.flagKeys(root); err != nil {
		return nil, err
	}
	return p.out, nil
}

// configParser collects the settings of one file.
type configParser struct {
	path   string
	fs     *pflag.FlagSet
	getenv func(string) string
	out    []Setting
}

func (p *configParser) errf(n *yaml.Node, format string, args ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &ConfigError{Path: p.path, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// envRef is ${VAR} or ${VAR:default}; jinjaRef an AIPerf {{ expression }}.
var (
	envRef   = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}`)
	jinjaRef = regexp.MustCompile(`\{\{.*\}\}`)
)

// substitute replaces ${VAR} and ${VAR:default} in every scalar under n (a required variable
// that is unset is an error); AIPerf's computed {{ }} values are refused.
func (p *configParser) substitute(n *yaml.Node) error {
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
func (p *configParser) flagKeys(root *yaml.Node) error {
	seen := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		name := strings.ReplaceAll(strings.TrimPrefix(k.Value, "--"), "_", "-")
		f := p.fs.Lookup(name)
		if f == nil || f.Hidden {
			msg := fmt.Sprintf("unknown key %q: no such flag", k.Value)
			if s := Suggest(p.fs, name); s != "" {
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
func (p *configParser) scalarList(k, v *yaml.Node) ([]string, error) {
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
func (p *configParser) value(f *pflag.Flag, k, v *yaml.Node) error {
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
		if !isArray(f) {
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
func (p *configParser) mapValues(flag string, k, m *yaml.Node) ([]string, error) {
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

// isArray says whether f takes one item per Set (a repeatable flag).
func isArray(f *pflag.Flag) bool {
	switch f.Value.Type() {
	case "stringArray":
		return true
	}
	return false
}

// ApplyConfig sets on fs each setting whose flag was not given on the command line (set
// names the flags the command line gave); an error names the file's line. A credential that
// is the placeholder --print-config wrote is refused (isRedactedCredential), not sent.
func ApplyConfig(fs *pflag.FlagSet, settings []Setting, set map[string]bool, path string) error {
	for _, s := range settings {
		f := fs.Lookup(s.Flag)
		if f == nil {
			return &ConfigError{Path: path, Line: s.Line, Msg: fmt.Sprintf("%s: no flag --%s here", s.Key, s.Flag)}
		}
		if set[f.Name] {
			continue // the command line wins
		}
		vals := s.Values
		if s.Join {
			vals = []string{strings.Join(s.Values, ",")}
		}
		for _, v := range vals {
			if isRedactedCredential(f.Name, v) {
				return &ConfigError{Path: path, Line: s.Line, Msg: fmt.Sprintf("%s: the credential is the placeholder --print-config writes (%s): "+
					"give it again (--api-key-file, $OPENAI_API_KEY, -H on the command line)", s.Key, redact.Value)}
			}
			if err := fs.Set(f.Name, v); err != nil {
				return &ConfigError{Path: path, Line: s.Line, Msg: fmt.Sprintf("%s: --%s %q: %v", s.Key, f.Name, v, err)}
			}
		}
	}
	return nil
}

// ChangedFlags are the flags of fs given so far (on the command line, before a config file).
func ChangedFlags(fs *pflag.FlagSet) map[string]bool {
	m := map[string]bool{}
	fs.Visit(func(f *pflag.Flag) { m[f.Name] = true })
	return m
}

// itemsValue is a flag value that is a list beneath its single-value String (the sweep
// lists, sweep.go).
type itemsValue interface{ Items() []string }

// PrintConfig writes fs's effective configuration as a config file --config reads: every
// flag set (on the command line or by a file) as a key with its value, in definition order,
// then every other flag as a comment with its default. skip leaves flags out (the ones that
// say what to do with the config itself). No credential is printed: every value goes through
// the command line's redaction (redact.FlagValue: the API key, secret headers' values, URLs'
// credentials), so a config printed to share a setup holds none (a key is given again with
// --api-key, OPENAI_API_KEY or --api-key-file).
func PrintConfig(w io.Writer, fs *pflag.FlagSet, skip func(name string) bool) error {
	var set, defaults strings.Builder
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Hidden || skip(f.Name) {
			return
		}
		var b []byte
		b, err = yaml.Marshal(map[string]any{f.Name: configValue(f)})
		if err != nil {
			return
		}
		if f.Changed {
			set.Write(b)
			return
		}
		for _, l := range strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n") {
			defaults.WriteString("# " + strings.TrimSuffix(l, "\n") + "\n")
		}
	})
	if err != nil {
		return fmt.Errorf("--print-config: %w", err)
	}
	_, err = fmt.Fprintf(w, "# The effective configuration: profile --config FILE reads it back (flags given with it win).\n"+
		"# Keys are flags; the commented keys below the set ones are defaults.\n%s\n# Defaults:\n%s", set.String(), defaults.String())
	return err
}

// configValue is f's value as YAML: a list for repeatable and list flags, a plain scalar for
// numbers and booleans, a string for the others (as its text, so it reads back to the same).
func configValue(f *pflag.Flag) any {
	if iv, ok := f.Value.(itemsValue); ok && f.Changed {
		if items := iv.Items(); len(items) > 1 {
			out := make([]*yaml.Node, len(items))
			for i, it := range items {
				out[i] = &yaml.Node{Kind: yaml.ScalarNode, Value: redact.FlagValue(f.Name, it)}
			}
			return out
		}
	}
	if sv, ok := f.Value.(pflag.SliceValue); ok {
		s := sv.GetSlice()
		if s == nil {
			s = []string{}
		}
		out := make([]string, len(s))
		for i, v := range s {
			out[i] = redact.FlagValue(f.Name, v)
		}
		return out
	}
	v := redact.FlagValue(f.Name, f.Value.String())
	switch f.Value.Type() {
	case "bool", "int", "int64", "uint64", "count", "float64":
		if _, err := strconv.ParseFloat(v, 64); err == nil || v == "true" || v == "false" {
			return &yaml.Node{Kind: yaml.ScalarNode, Value: v}
		}
	}
	return v
}

// isRedactedCredential reports whether flag name's value v holds the placeholder
// redact.Value where a credential goes (the api-key, a secret header's value): a file
// --print-config wrote, whose credentials it hid. The word anywhere else is a value.
func isRedactedCredential(name, v string) bool {
	if !strings.Contains(v, redact.Value) {
		return false
	}
	probe := strings.ReplaceAll(v, redact.Value, "probe-0123456789")
	return redact.FlagValue(name, probe) != probe
}
