package cli

import (
	"testing"

	"github.com/llmbench/llmbench/redact"
)

// TestRegisterSecrets: the API key and the values of secret-named headers (with and
// without their scheme) are hidden wherever a server echoes them back, however it quotes
// them; other headers' values are not secrets.
func TestRegisterSecrets(t *testing.T) {
	RegisterSecrets("sk-apikey-0123456789", []string{"Authorization: Bearer hdr-token-0123456789", "X-Upstream-Secret: upstream-0123456789",
		"X-Custom: keep-this-0123456789"})
	for _, c := range []struct{ in, want string }{
		{"your key sk-apikey-0123456789 has expired", "your key REDACTED has expired"},
		{`{"token":"hdr-token-0123456789"}`, `{"token":"REDACTED"}`},
		{"header was upstream-0123456789", "header was REDACTED"},
		{"custom keep-this-0123456789", "custom keep-this-0123456789"},
	} {
		if got := redact.Text(c.in); got != c.want {
			t.Errorf("Text(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}
