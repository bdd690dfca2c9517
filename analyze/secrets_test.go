package analyze

import (
	"reflect"
	"testing"
)

// TestRedactSecretsSpec: the plan's flags carried into every export (input_config.plan.spec)
// lose their credentials as the command line does (an --extra-inputs field under a secret's
// name, a URL's), and keep everything else.
func TestRedactSecretsSpec(t *testing.T) {
	s := &Summary{Spec: map[string]any{
		"extra-inputs":  []any{"api_key:sk-spec-0123456789", "max_tokens:5"},
		"input-file":    "http://u:pw@h/data.jsonl?sig=s1",
		"concurrency":   2.0,
		"system-prompt": "be brief",
	}}
	s.redactSecrets()
	want := map[string]any{
		"extra-inputs":  []any{"api_key:REDACTED", "max_tokens:5"},
		"input-file":    "http://REDACTED@h/data.jsonl?sig=REDACTED",
		"concurrency":   2.0,
		"system-prompt": "be brief",
	}
	if !reflect.DeepEqual(s.Spec, want) {
		t.Errorf("spec %v; want %v", s.Spec, want)
	}
}
