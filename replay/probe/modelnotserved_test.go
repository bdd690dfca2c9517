package probe

import "testing"

// TestModelNotServed: a 404 that blames the model points at --model, one that blames the path
// does not.
func TestModelNotServed(t *testing.T) {
	for _, c := range []struct {
		msg  string
		want bool
	}{
		{"The model `Qwen/Qwen3-8B` does not exist.", true},                         // vLLM, SGLang
		{"The model 'gpt-5' does not exist or you do not have access to it.", true}, // OpenAI
		{`{"error":{"code":"model_not_found"}}`, true},
		{"Model llama not found", true},
		{"Not Found", false},
		{"404 page not found", false},
		{"", false},
	} {
		if got := modelNotServed(c.msg); got != c.want {
			t.Errorf("modelNotServed(%q) = %v, want %v", c.msg, got, c.want)
		}
	}
}
