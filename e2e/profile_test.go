package e2e_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestProfileWalkthrough runs the walkthrough's two `aiperf profile` command lines with
// bin/profile in their place, against a fast mockllm, with an empty HuggingFace cache and
// the Hub offline: the builtin tokenizer stands in for Qwen/Qwen3-0.6B with a notice line,
// each run gets its AIPerf-named artifact directory, and the console table is printed.
func TestProfileWalkthrough(t *testing.T) {
	mock := startMock(t, "--ttft", "1ms", "--itl", "0s")
	url := strings.TrimPrefix(mock.URL, "http://") // the walkthrough's localhost:8000 form: a bare host:port
	cases := []struct {
		line, dir string
		requests  int
	}{
		{"--model Qwen/Qwen3-0.6B --endpoint-type chat --streaming --url " + url +
			" --synthetic-input-tokens-mean 128 --output-tokens-mean 128 --concurrency 1 --request-count 32",
			"Qwen_Qwen3-0.6B-openai-chat-concurrency1", 32},
		{"--model Qwen/Qwen3-0.6B --endpoint-type chat --streaming --url " + url +
			" --request-rate 10 --arrival-pattern poisson --synthetic-input-tokens-mean 512 --synthetic-input-tokens-stddev 128" +
			" --output-tokens-mean 128 --output-tokens-stddev 32 --random-seed 42 --request-count 200",
			"Qwen_Qwen3-0.6B-openai-chat-request_rate10", 200},
	}
	work := t.TempDir()
	hf := t.TempDir()
	for _, c := range cases {
		ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
		cmd := exec.CommandContext(ctx, bin.profile, strings.Fields(c.line)...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "HF_HOME="+hf, "HF_HUB_OFFLINE=1", "HF_HUB_CACHE=", "HUGGINGFACE_HUB_CACHE=")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		cancel()
		if err != nil {
			t.Fatalf("profile %s: %v\nstdout:\n%s\nstderr:\n%s", c.line, err, out.String(), errb.String())
		}
		for _, want := range []string{"LLM Metrics", "Time to First Token (ms)", "Request Throughput (requests/sec)", "Exports in artifacts/" + c.dir} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%s: stdout lacks %q:\n%s", c.dir, want, out.String())
			}
		}
		if !strings.Contains(errb.String(), "ships the builtin Qwen3 tokenizer") || !strings.Contains(errb.String(), "profile: artifact directory artifacts/"+c.dir+"\n") {
			t.Errorf("%s: stderr lacks the tokenizer notice or the artifact directory:\n%s", c.dir, errb.String())
		}
		dir := filepath.Join(work, "artifacts", c.dir)
		for _, f := range []string{"plan.llmplan", "run.json", "profile_export_aiperf.json", "profile_export_aiperf.csv", "profile_export.jsonl"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("%s: %v", c.dir, err)
			}
		}
		if n := len(readRecords(t, dir)); n != c.requests {
			t.Errorf("%s: %d records, want %d", c.dir, n, c.requests)
		}
	}
	// The first run's plan, shared: replayed and analysed into a new, suffixed directory.
	shared := filepath.Join(work, "artifacts", cases[0].dir, "plan.llmplan")
	cmd := exec.Command(bin.profile, "--plan", shared, "--url", url, "--ui-type", "none")
	cmd.Dir, cmd.Env = work, append(os.Environ(), "HF_HOME="+hf, "HF_HUB_OFFLINE=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "profile: artifact directory artifacts/"+cases[0].dir+"-2\n") {
		t.Fatalf("profile --plan: %v\n%s", err, out)
	}
	if n := len(readRecords(t, filepath.Join(work, "artifacts", cases[0].dir+"-2"))); n != cases[0].requests {
		t.Errorf("--plan run: %d records, want %d", n, cases[0].requests)
	}
}
