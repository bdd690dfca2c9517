package cli

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/config"
	"github.com/llmbench/llmbench/redact"
)

// TestPrintConfigHidesSecrets: --print-config writes no credential in clear, however short:
// the API key, secret-named headers' values, credentials in URL flags; the rest is kept.
func TestPrintConfigHidesSecrets(t *testing.T) {
	fs := pflag.NewFlagSet("profile", pflag.ContinueOnError)
	fs.String("api-key", "", "")
	fs.StringArrayP("header", "H", nil, "")
	fs.StringSlice("url", nil, "")
	fs.String("otel-url", "", "")
	fs.StringArray("server-metrics-url", nil, "")
	fs.String("model", "", "")
	if err := fs.Parse([]string{"--api-key", "k1", "-H", "X-Upstream-Token: tok1", "-H", "Cookie: s=c1", "-H", "X-Keep: visible1",
		"--url", "http://h:1/v1", "--otel-url", "http://u:otelpw1@c:4318/v1/metrics?token=ot1", "--server-metrics-url", "h:9/m?sig=sg1",
		"--model", "m1"}); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := PrintConfig(&b, fs, func(string) bool { return false }); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, secret := range []string{"k1", "tok1", "c1", "otelpw1", "ot1", "sg1"} {
		if strings.Contains(out, secret) {
			t.Errorf("--print-config printed %q:\n%s", secret, out)
		}
	}
	for _, keep := range []string{"X-Keep: visible1", "http://h:1/v1", "model: m1", "X-Upstream-Token: " + redact.Value, "api-key: " + redact.Value} {
		if !strings.Contains(out, keep) {
			t.Errorf("--print-config lost %q:\n%s", keep, out)
		}
	}
}

// TestConfigRefusesRedactedCredentials: a config file whose credential is the placeholder
// --print-config wrote (api-key: REDACTED, a secret header's REDACTED value) is bad input
// naming the line, not a key "REDACTED" sent to the server; the word elsewhere is kept.
func TestConfigRefusesRedactedCredentials(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"api-key: REDACTED\n", "line 1: api-key: the credential is the placeholder --print-config writes"},
		{"model: m\nheader: ['X-Upstream-Token: REDACTED']\n", "line 2: header"},
		{"extra-inputs: ['api_key:REDACTED']\n", "line 1: extra-inputs"},
		{"system-prompt: REDACTED words stay\nheader: ['X-Note: REDACTED']\n", ""},
	} {
		fs := pflag.NewFlagSet("profile", pflag.ContinueOnError)
		fs.String("api-key", "", "")
		fs.String("model", "", "")
		fs.String("system-prompt", "", "")
		fs.StringArrayP("header", "H", nil, "")
		fs.StringArray("extra-inputs", nil, "")
		settings, err := config.Parse([]byte(c.yaml), "c.yaml", ConfigFlags(fs), func(string) string { return "" })
		if err == nil {
			err = ApplyConfig(fs, settings, nil, "c.yaml")
		}
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.yaml, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: error %v; want one with %q", c.yaml, err, c.want)
		}
	}
}
