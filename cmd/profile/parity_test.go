package main

import (
	"strings"
	"testing"
)

// TestAIPerfFlagsAccepted: every flag of the list of AIPerf flags once refused is
// taken: with its meaning (the printed configuration holds it under our name) or with a note
// on stderr saying what happens instead; the accuracy flags say accuracy benchmarks are not
// run. A value AIPerf would refuse is still exit 2, and a typo still gets a suggestion.
func TestAIPerfFlagsAccepted(t *testing.T) {
	cases := []struct {
		args []string
		key  string // the key --print-config shows (our flag's name)
		note string // the note on stderr, for flags without work here
	}{
		{[]string{"--ready-check-timeout", "5"}, "wait-for-model-timeout: 5", ""},
		{[]string{"--transport", "http"}, "transport: http", "HTTP/1.1 with the workers' own client"},
		{[]string{"--transport-type", "http"}, "transport: http", "HTTP/1.1"},
		{[]string{"--hf-subset", "x"}, "hf-subset: x", "--public-dataset is not supported here"},
		{[]string{"--batch-size", "2"}, "prompt-batch-size: 2", ""},
		{[]string{"--batch-size-audio", "1"}, "audio-batch-size: 1", ""},
		{[]string{"--batch-size-image", "1"}, "image-batch-size: 1", ""},
		{[]string{"--batch-size-video", "1"}, "video-batch-size: 1", ""},
		{[]string{"--session-turns-mean", "2"}, "conversation-turn-mean: 2", ""},
		{[]string{"--session-turns-stddev", "1"}, "conversation-turn-stddev: 1", ""},
		{[]string{"--session-turn-delay-mean", "5"}, "conversation-turn-delay-mean: 5", ""},
		{[]string{"--session-turn-delay-stddev", "1"}, "conversation-turn-delay-stddev: 1", ""},
		{[]string{"--session-delay-ratio", "0.5"}, "conversation-turn-delay-ratio: 0.5", ""},
		{[]string{"--profile-export-file", "foo"}, "profile-export-prefix: foo", ""},
		{[]string{"--profile-export-level", "summary"}, "export-level: summary", ""},
		{[]string{"--show-trace-timing"}, "show-trace-timing: true", ""},
		{[]string{"--prefill-concurrency", "2"}, "prefill-concurrency: 2", ""},
		{[]string{"--prefill-concurrency-ramp-duration", "1"}, "prefill-concurrency-ramp-duration: 1", ""},
		{[]string{"--warmup-prefill-concurrency", "1"}, "warmup-prefill-concurrency: 1", ""},
		{[]string{"--warmup-concurrency-ramp-duration", "1"}, "warmup-concurrency-ramp-duration: 1", ""},
		{[]string{"--warmup-prefill-concurrency-ramp-duration", "1"}, "warmup-prefill-concurrency-ramp-duration: 1", ""},
		{[]string{"--warmup-request-rate-ramp-duration", "1"}, "warmup-request-rate-ramp-duration: 1", ""},
		{[]string{"--warmup-grace-period", "10"}, `warmup-grace-period: "10"`, "the profile waits for every warmup response"},
		{[]string{"--warmup-grace-period", "inf"}, "warmup-grace-period: inf", "warmup requests are never cut"},
		{[]string{"--profile-run-disable-warmup-after-first"}, "profile-run-disable-warmup-after-first: true", "every repeat replays the same plan"},
		{[]string{"--set-consistent-seed"}, "set-consistent-seed: true", "one seed"},
		{[]string{"--server-metrics-formats", "json,csv"}, "server-metrics-formats:\n    - json\n    - csv", "server_metrics.jsonl"},
		{[]string{"--max-workers", "4"}, `workers-max: "4"`, "one worker process per CPU"},
		{[]string{"--extra-verbose"}, "extra-verbose: true", "more detail is in the run directory"},
		{[]string{"--record-processor-service-count", "2"}, `record-processors: "2"`, "analyze reads the raw logs"},
		{[]string{"--otel-url", "localhost:4318"}, "otel-url: localhost:4318", ""},
		{[]string{"--accuracy-benchmark", "mmlu"}, "accuracy-benchmark: mmlu", "accuracy benchmarks are not run"},
		{[]string{"--accuracy-tasks", "a,b"}, "accuracy-tasks:", "accuracy benchmarks are not run"},
		{[]string{"--accuracy-n-shots", "5"}, `accuracy-n-shots: "5"`, "accuracy benchmarks are not run"},
		{[]string{"--accuracy-enable-cot"}, "accuracy-enable-cot: true", "accuracy benchmarks are not run"},
		{[]string{"--accuracy-grader", "math"}, "accuracy-grader: math", "accuracy benchmarks are not run"},
		{[]string{"--accuracy-system-prompt", "x"}, "accuracy-system-prompt: x", "accuracy benchmarks are not run"},
		{[]string{"--accuracy-verbose"}, "accuracy-verbose: true", "accuracy benchmarks are not run"},
	}
	for _, c := range cases {
		t.Run(c.args[0], func(t *testing.T) {
			r := profileArgs(t, nil, append([]string{"--model", "m", "--print-config"}, c.args...)...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			set := r.stdout[:strings.Index(r.stdout, "# Defaults:")]
			if !strings.Contains(set, c.key+"\n") {
				t.Errorf("the configuration lacks %q:\n%s", c.key, set)
			}
			if c.note != "" && (!strings.Contains(r.stderr, "accepted: ") || !strings.Contains(r.stderr, c.note)) {
				t.Errorf("stderr lacks the note %q:\n%s", c.note, r.stderr)
			}
		})
	}
	bad := []struct {
		args []string
		want string
	}{
		{[]string{"--transport", "grpc"}, `--transport "grpc": want http`},
		{[]string{"--accuracy-benchmark", "trivia"}, `--accuracy-benchmark "trivia": want mmlu,`},
		{[]string{"--accuracy-n-shots", "40"}, `--accuracy-n-shots "40": want a whole number in [0, 32]`},
		{[]string{"--warmup-grace-period", "-1"}, `--warmup-grace-period "-1": want seconds`},
		{[]string{"--server-metrics-formats", "json,xml"}, `--server-metrics-formats "xml": want json, csv, jsonl, parquet`},
		{[]string{"--max-workers", "0"}, `--workers-max "0": want a whole number >= 1`},
		{[]string{"--prefil-concurrency", "2"}, "unknown flag: --prefil-concurrency (did you mean --prefill-concurrency?)"},
		{[]string{"--accuracy-benchmrk", "mmlu"}, "(did you mean --accuracy-benchmark?)"},
		{[]string{"--sesion-turns-mean", "2"}, "(did you mean --session-turns-mean?)"},
		{[]string{"--stream", "logs", "--otel-url", "x"}, `--stream "logs": want metrics, timing or default`},
		{[]string{"--stream", "metrics"}, "--stream needs --otel-url"},
	}
	for _, c := range bad {
		r := profileArgs(t, nil, append([]string{"--model", "m", "--url", "http://127.0.0.1:9", "--request-count", "1"}, c.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and ~ %q", c.args, r.code, r.stderr, c.want)
		}
	}
}
