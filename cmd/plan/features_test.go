package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAIPerfProfileFlags compiles with the AIPerf flags plan added for issue 12 and checks
// what each one plans.
func TestAIPerfProfileFlags(t *testing.T) {
	dir := t.TempDir()
	corpus := filepath.Join(dir, "corpus.txt")
	if err := os.WriteFile(corpus, []byte(strings.Repeat("zebra quartz lantern\n", 50)), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		args  []string
		check func(t *testing.T, j inspectJSON, text string)
	}{
		{"synthetic rankings without an input file", []string{"--model", "rr", "--endpoint-type", "cohere_rankings",
			"--rankings-passages-mean", "3", "--rankings-passages-prompt-token-mean", "10", "--rankings-query-prompt-token-mean", "5"},
			func(t *testing.T, j inspectJSON, _ string) {
				for _, r := range j.Requests {
					var b struct{ Documents []string }
					if err := json.Unmarshal(r.Body, &b); err != nil || len(b.Documents) != 3 {
						t.Fatalf("body %s: want 3 documents (%v)", r.Body, err)
					}
				}
			}},
		{"model list", []string{"--model", "a,b", "--model-selection-strategy", "round_robin", "--dataset-sampling-strategy", "sequential"},
			func(t *testing.T, j inspectJSON, text string) {
				for i, r := range j.Requests {
					var b struct{ Model string }
					_ = json.Unmarshal(r.Body, &b)
					if want := []string{"a", "b"}[i%2]; b.Model != want {
						t.Errorf("request %d: model %q, want %q", i, b.Model, want)
					}
				}
				if !strings.Contains(text, "a,b (one per dataset turn, round_robin)") {
					t.Errorf("inspect does not show the model list:\n%s", text)
				}
			}},
		{"prompt corpus file, batch-size-text alias", []string{"--model", "e", "--endpoint-type", "embeddings", "--prompt-corpus", corpus, "--batch-size-text", "2"},
			func(t *testing.T, j inspectJSON, _ string) {
				for _, r := range j.Requests {
					var b struct{ Input []string }
					if err := json.Unmarshal(r.Body, &b); err != nil || len(b.Input) != 2 {
						t.Fatalf("body %s: want 2 texts (%v)", r.Body, err)
					}
					for _, x := range b.Input {
						if strings.Trim(x, "zebraqutln ") != "" { // the letters of the corpus file only
							t.Fatalf("text %q is not from the corpus file", x)
						}
					}
				}
			}},
		{"warmup sessions at their own rate", []string{"--model", "m", "--request-rate", "10", "--arrival-pattern", "constant",
			"--num-warmup-sessions", "2", "--warmup-request-rate", "2", "--warmup-arrival-pattern", "constant"},
			func(t *testing.T, j inspectJSON, _ string) {
				want := []int64{0, 500e6, 1000e6, 1100e6}
				for i, w := range want {
					if r := j.Requests[i]; r.SendOffsetNs == nil || *r.SendOffsetNs != w {
						t.Errorf("request %d (%s) at %v, want %d", i, r.Phase, r.SendOffsetNs, w)
					}
				}
			}},
		{"trace synthesis", []string{"--model", "m", "--input-file", "../../testdata/dataset/mooncake_small.jsonl", "--custom-dataset-type", "mooncake_trace",
			"--synthesis-output-len-multiplier", "3", "--synthesis-max-osl", "10", "--synthesis-prefix-len-multiplier", "2", "--inter-turn-delay-cap-seconds", "1", "--no-fixed-schedule"},
			func(t *testing.T, j inspectJSON, _ string) {
				if len(j.Requests) == 0 {
					t.Fatal("no requests")
				}
				for _, r := range j.Requests {
					if r.OSL > 10 || r.SendOffsetNs != nil {
						t.Errorf("request %d: osl %d (want <= 10), send offset %v (want a closed loop)", r.Index, r.OSL, r.SendOffsetNs)
					}
				}
			}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.Repeat("p", i+1)+".plan")
			args := append(append([]string{}, c.args...), "-o", out)
			if !slices.Contains(c.args, "--input-file") {
				args = append(args, "--isl", "8", "--request-count", "4")
			}
			if code, _, stderr := runCmd(t, args...); code != 0 {
				t.Fatalf("%q: exit %d: %s", args, code, stderr)
			}
			_, text, _ := runCmd(t, "inspect", out)
			c.check(t, inspect(t, "--requests", "-1", out), text)
		})
	}
	out := filepath.Join(dir, "bad.plan")
	bad := []struct {
		args []string
		want string
	}{
		{[]string{"--synthesis-max-isl", "5"}, "plan: --synthesis-max-isl needs --input-file"},
		{[]string{"--synthesis-output-len-multiplier", "-1"}, "--synthesis-output-len-multiplier must be in (0,1e6]"},
		{[]string{"--prompt-corpus", "random"}, "--prompt-corpus random (random token ids) is not supported"},
		{[]string{"--prompt-corpus", filepath.Join(dir, "none.txt")}, "--prompt-corpus: want shakespeare or a text file"},
		{[]string{"--model-selection-strategy", "weighted"}, "--model-selection-strategy weighted is not supported"},
		{[]string{"--rankings-passages-mean", "2"}, "--rankings-* apply to the *_rankings endpoint types only"},
		{[]string{"--warmup-duration", "3"}, "--warmup-duration alone cannot size a closed-loop warmup"},
		{[]string{"-b", "4"}, "--prompt-batch-size 4 applies to --endpoint-type embeddings"},
	}
	for _, b := range bad {
		args := append([]string{"--model", "m", "-o", out}, b.args...)
		code, _, stderr := runCmd(t, args...)
		if code != 2 || !strings.Contains(stderr, b.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and one line containing %q", b.args, code, stderr, b.want)
		}
	}
}
