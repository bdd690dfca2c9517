package chat

import (
	"strings"
	"testing"
)

// TestSettingsOptions: each bad setting is refused with a message naming its flag.
func TestSettingsOptions(t *testing.T) {
	good := func() Settings {
		return Settings{Model: "m", URL: "http://127.0.0.1:1", EndpointType: "chat", TimeoutSeconds: 10, MaxResponseBytes: 1 << 20, UseServerTokenCount: true}
	}
	cases := []struct {
		name string
		edit func(*Settings)
		args []string
		want string
	}{
		{"no model", func(s *Settings) { s.Model = " " }, nil, "--model is required"},
		{"argument without quick", func(*Settings) {}, []string{"hi"}, `unexpected argument "hi"`},
		{"endpoint type", func(s *Settings) { s.EndpointType = "embeddings" }, nil, "--endpoint-type embeddings: chat talks to"},
		{"max tokens", func(s *Settings) { s.MaxTokens = -1 }, nil, "--output-tokens-mean -1"},
		{"timeout", func(s *Settings) { s.TimeoutSeconds = 0 }, nil, "request-timeout-seconds"},
		{"response bytes", func(s *Settings) { s.MaxResponseBytes = 0 }, nil, "--max-response-bytes 0"},
		{"key and key file", func(s *Settings) { s.APIKeySet, s.APIKeyFile = true, "k" }, nil, "mutually exclusive"},
	}
	for _, c := range cases {
		s := good()
		c.edit(&s)
		if _, err := s.Options(c.args, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	s := good()
	s.Quick = true
	o, err := s.Options(nil, func(string) string { return "" })
	if err != nil || o.Prompt != DefaultPrompt || o.Single.Path == "" {
		t.Fatalf("quick without a message: %+v, %v", o, err)
	}
}
