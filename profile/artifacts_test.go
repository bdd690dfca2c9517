package profile

import (
	"path/filepath"
	"testing"
)

func TestArtifactName(t *testing.T) {
	cases := []struct {
		model, endpoint string
		s               Stimulus
		want            string
	}{
		{"Qwen/Qwen3-0.6B", "chat", Stimulus{}, "Qwen_Qwen3-0.6B-openai-chat-concurrency1"},
		{"Qwen/Qwen3-0.6B", "chat", Stimulus{Concurrency: 10}, "Qwen_Qwen3-0.6B-openai-chat-concurrency10"},
		{"m", "completions", Stimulus{Rate: 10}, "m-openai-completions-request_rate10"},
		{"m", "chat", Stimulus{Rate: 2.5, Concurrency: 4}, "m-openai-chat-concurrency4-request_rate2.5"},
		{"m", "chat", Stimulus{Fixed: true, Rate: 3}, "m-openai-chat-fixed_schedule"},
		{"m", "chat", Stimulus{UserRate: 1, Users: 15}, "m-openai-chat-user_centric-users15-qps1.0"},
		{"Qwen/Qwen3-0.6B,Qwen/Qwen3-8B", "chat", Stimulus{}, "Qwen_Qwen3-0.6B-openai-chat-concurrency1"}, // a list: its first model
	}
	for _, c := range cases {
		if got := ArtifactName(c.model, c.endpoint, c.s); got != c.want {
			t.Errorf("ArtifactName(%q, %q, %+v) = %q, want %q", c.model, c.endpoint, c.s, got, c.want)
		}
	}
}

// RunName names a sweep or a search by what it varies, one point (or a one-point list) by
// its stimulus.
func TestRunName(t *testing.T) {
	c := func(v float64) Param { return Param{Flag: "concurrency", Name: "concurrency", Value: v} }
	r := func(v float64) Param { return Param{Flag: "request-rate", Name: "request_rate", Value: v} }
	s := Stimulus{Concurrency: 4}
	for _, tc := range []struct {
		o    SweepOptions
		want string
	}{
		{SweepOptions{}, "m_x-openai-chat-concurrency4"},
		{SweepOptions{Points: []Point{{c(4)}}}, "m_x-openai-chat-concurrency4"},
		{SweepOptions{Points: []Point{{c(1)}, {c(2)}}}, "m_x-openai-chat-concurrency_sweep"},
		{SweepOptions{Points: []Point{{c(1), r(5)}, {c(1), r(10)}}}, "m_x-openai-chat-concurrency_sweep-request_rate_sweep"},
		{SweepOptions{Search: SearchMaxConcurrency}, "m_x-openai-chat-max_concurrency_under_sla"},
	} {
		if got := RunName("m/x", "chat", s, &tc.o); got != tc.want {
			t.Errorf("RunName(%+v) = %q, want %q", tc.o, got, tc.want)
		}
	}
}

func TestNewDirSuffixes(t *testing.T) {
	base := filepath.Join(t.TempDir(), "artifacts", "m-openai-chat-concurrency1")
	for _, want := range []string{base, base + "-2", base + "-3"} {
		got, err := NewDir(base)
		if err != nil || got != want {
			t.Fatalf("newDir = %q, %v; want %q", got, err, want)
		}
	}
}
