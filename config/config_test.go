package config

import (
	"strings"
	"testing"
)

// table is a command's flags as the readers see them, without pflag.
type table map[string]Flag

func (t table) Lookup(name string) (Flag, bool) { f, ok := t[name]; return f, ok }

func (t table) Suggest(name string) string {
	if strings.HasPrefix("model", name) {
		return "model"
	}
	return ""
}

var flags = table{
	"model":       {Name: "model"},
	"concurrency": {Name: "concurrency"},
	"header":      {Name: "header", Repeatable: true},
	"secret":      {Name: "secret", Hidden: true},
	"url":         {Name: "url", Repeatable: true},
}

// TestParse: a list repeats a repeatable flag and joins for another; an unknown or hidden key
// is an error naming the line and the nearest flag; ${VAR:default} is substituted.
func TestParse(t *testing.T) {
	ss, err := Parse([]byte("model: ${M:m}\nconcurrency: [1, 2]\nheader: {X-A: b}\n"), "c.yaml", flags, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range ss {
		got = append(got, s.Flag+"="+strings.Join(s.Items(), "|"))
	}
	if want := "model=m concurrency=1,2 header=X-A: b"; strings.Join(got, " ") != want {
		t.Errorf("settings %q, want %q", strings.Join(got, " "), want)
	}
	for text, want := range map[string]string{
		"mod: x\n":              `--config c.yaml line 1: unknown key "mod": no such flag (did you mean model?)`,
		"model: a\nsecret: b\n": `--config c.yaml line 2: unknown key "secret": no such flag`,
		"model: a\nmodel: b\n":  `--config c.yaml line 2: "model" sets --model again (line 1 set it first)`,
		"model: ${M}\n":         "--config c.yaml line 1: environment variable M is not set (write ${M:default} for a default)",
		"schemaVersion: \"2.0\"\nbenchmark: {endpoint: {timeout: soon}}\n": `--config c.yaml line 2: benchmark.endpoint.timeout "soon": want seconds or a duration such as 30s, 5m`,
	} {
		if _, err := Parse([]byte(text), "c.yaml", flags, func(string) string { return "" }); err == nil || err.Error() != want {
			t.Errorf("%q: error %v, want %q", text, err, want)
		}
	}
}

// TestWrite: set entries are keys, the others commented defaults; credentials are redacted.
func TestWrite(t *testing.T) {
	var b strings.Builder
	err := Write(&b, []Entry{{Name: "model", Set: true, Value: "m"}, {Name: "concurrency", Set: true, Kind: Items, Values: []string{"1", "2"}},
		{Name: "api-key", Set: true, Value: "sk-0123456789"}, {Name: "request-rate", Kind: Scalar, Value: "0"}, {Name: "url", Kind: List}})
	if err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"model: m\n", "concurrency:\n    - 1\n    - 2\n", "api-key: REDACTED\n", "# Defaults:\n# request-rate: 0\n# url: []\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "sk-0123456789") {
		t.Errorf("the key was printed:\n%s", out)
	}
}
