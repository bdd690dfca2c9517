package cli

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/config"
	"github.com/llmbench/llmbench/redact"
)

// Config files (--config FILE, -f) set flags: package config reads them into settings, each
// naming its flag; here they are set on the command's flags. A flag given on the command
// line wins over the file.

// ConfigFlags are fs's flags as the config readers see them.
func ConfigFlags(fs *pflag.FlagSet) config.Flags { return configFlags{fs} }

type configFlags struct{ fs *pflag.FlagSet }

func (c configFlags) Lookup(name string) (config.Flag, bool) {
	f := c.fs.Lookup(name)
	if f == nil {
		return config.Flag{}, false
	}
	// A stringArray takes one item per Set; every other list flag takes a comma-joined value.
	return config.Flag{Name: f.Name, Repeatable: f.Value.Type() == "stringArray", Hidden: f.Hidden}, true
}

func (c configFlags) Suggest(name string) string { return Suggest(c.fs, name) }

// ApplyConfig sets on fs each setting whose flag was not given on the command line (set
// names the flags the command line gave); an error names the file's line. A credential that
// is the placeholder --print-config wrote is refused (config.RedactedCredential), not sent.
func ApplyConfig(fs *pflag.FlagSet, settings []config.Setting, set map[string]bool, path string) error {
	for _, s := range settings {
		f := fs.Lookup(s.Flag)
		if f == nil {
			return &config.Error{Path: path, Line: s.Line, Msg: fmt.Sprintf("%s: no flag --%s here", s.Key, s.Flag)}
		}
		if set[f.Name] {
			continue // the command line wins
		}
		for _, v := range s.Items() {
			if config.RedactedCredential(f.Name, v) {
				return &config.Error{Path: path, Line: s.Line, Msg: fmt.Sprintf("%s: the credential is the placeholder --print-config writes (%s): "+
					"give it again (--api-key-file, $OPENAI_API_KEY, -H on the command line)", s.Key, redact.Value)}
			}
			if err := fs.Set(f.Name, v); err != nil {
				return &config.Error{Path: path, Line: s.Line, Msg: fmt.Sprintf("%s: --%s %q: %v", s.Key, f.Name, v, err)}
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

// PrintConfig writes fs's effective configuration (config.Write): the flags in definition
// order, but hidden ones and those skip names (the ones that say what to do with the config
// itself).
func PrintConfig(w io.Writer, fs *pflag.FlagSet, skip func(name string) bool) error {
	var entries []config.Entry
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && !skip(f.Name) {
			entries = append(entries, configEntry(f))
		}
	})
	return config.Write(w, entries)
}

// configEntry is flag f as a config entry.
func configEntry(f *pflag.Flag) config.Entry {
	e := config.Entry{Name: f.Name, Set: f.Changed, Value: f.Value.String()}
	if iv, ok := f.Value.(itemsValue); ok && f.Changed {
		if items := iv.Items(); len(items) > 1 {
			e.Kind, e.Values = config.Items, items
			return e
		}
	}
	if sv, ok := f.Value.(pflag.SliceValue); ok {
		e.Kind, e.Values = config.List, sv.GetSlice()
		return e
	}
	switch f.Value.Type() {
	case "bool", "int", "int64", "uint64", "count", "float64":
		e.Kind = config.Scalar
	}
	return e
}
