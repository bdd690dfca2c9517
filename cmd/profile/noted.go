package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// accuracyNote is what every accuracy flag says: AIPerf runs accuracy benchmarks beside the
// profile with them; llmbench measures performance only.
const accuracyNote = "accuracy benchmarks are not run: llmbench measures performance only (the run goes on without one)"

// noted are AIPerf's flags that configure its own processes or collectors, or features with no
// equivalent here: accepted, so command lines carry over, with one line on stderr saying what
// happens here instead. A flag with choices still refuses a value AIPerf would refuse (exit 2).
var noted = []struct {
	name, note, optional string
	isBool, list         bool
	// choices are the values AIPerf accepts (each item of a list); nil: any.
	choices []string
	// check, when set, checks the value as AIPerf would.
	check func(v string) error
}{
	{name: "workers-max", note: "replay runs one worker process per CPU instead (--workers, --cpus)", check: positiveInt},
	{name: "record-processors", note: "analyze reads the raw logs after the run instead (--parallelism)", check: positiveInt},
	{name: "zmq-host", note: "workers talk to the coordinator over pipes, not ZMQ"},
	{name: "zmq-ipc-path", note: "workers talk to the coordinator over pipes, not ZMQ"},
	{name: "zmq-dual-bind", note: "workers talk to the coordinator over pipes, not ZMQ", isBool: true},
	{name: "api-host", note: "there is no live API; progress is on stderr"},
	{name: "api-port", note: "there is no live API; progress is on stderr"},
	{name: "log-level", note: "messages are fixed one-liners on stderr; the run directory keeps the detail",
		choices: []string{"TRACE", "DEBUG", "INFO", "NOTICE", "WARNING", "SUCCESS", "ERROR", "CRITICAL", "trace", "debug", "info", "notice", "warning", "success", "error", "critical"}},
	{name: "extra-verbose", note: "more detail is in the run directory (raw logs, run.json); the output is the same", isBool: true},
	{name: "gpu-telemetry", note: "replay samples local GPUs through NVML by default (--no-gpu-telemetry, --gpu-sample-interval)", optional: "pynvml"},
	{name: "no-server-metrics", note: "server /metrics are not scraped", isBool: true},
	{name: "server-metrics", note: "server /metrics are not scraped", optional: "default"},
	{name: "server-metrics-formats", list: true, choices: []string{"json", "csv", "jsonl", "parquet"},
		note: "the server's metrics are written as server_metrics.jsonl (every scrape) and in profile_export_aiperf.json (llmbench.server_metrics), whatever the formats"},
	{name: "transport", choices: []string{"http"},
		note: "requests go over HTTP/1.1 with the workers' own client, plain or TLS by each --url's scheme"},
	{name: "hf-subset", note: "--public-dataset is not supported here, so there is no HuggingFace subset to pick: give the data with --input-file"},
	{name: "warmup-grace-period", check: graceValue,
		note: "the profile waits for every warmup response (a closed loop; AIPerf's default, infinite) or keeps its planned instants (open loop); warmup requests are never cut"},
	{name: "profile-run-disable-warmup-after-first", isBool: true,
		note: "every repeat replays the same plan, its warmup included, so the runs stay identical"},
	{name: "no-profile-run-disable-warmup-after-first", isBool: true,
		note: "every repeat replays the same plan, its warmup included (as asked)"},
	{name: "set-consistent-seed", isBool: true,
		note: "every run replays one plan compiled from one seed (--random-seed, default 0): the workloads are always identical"},
	{name: "no-set-consistent-seed", isBool: true,
		note: "every run still replays one plan compiled from one seed (--random-seed, default 0): the workloads stay identical"},
	{name: "accuracy-benchmark", note: accuracyNote,
		choices: []string{"mmlu", "mmlu_pro", "aime", "hellaswag", "bigbench", "aime24", "aime25", "math_500", "gsm8k", "gpqa_diamond", "lcb_codegeneration"}},
	{name: "accuracy-tasks", note: accuracyNote, list: true},
	{name: "accuracy-n-shots", note: accuracyNote, check: nShots},
	{name: "accuracy-enable-cot", note: accuracyNote, isBool: true},
	{name: "accuracy-no-enable-cot", note: accuracyNote, isBool: true},
	{name: "accuracy-grader", note: accuracyNote,
		choices: []string{"exact_match", "math", "multiple_choice", "code_execution", "lighteval_expr", "lighteval_latex", "lighteval_gpqa", "lighteval_gsm8k", "mmlu_pro"}},
	{name: "accuracy-system-prompt", note: accuracyNote},
	{name: "accuracy-verbose", note: accuracyNote, isBool: true},
}

// checkNoted refuses a value of a noted flag that AIPerf would refuse: not one of its choices,
// or out of its range.
func checkNoted(f *pflag.Flag) error {
	for _, n := range noted {
		if n.name != f.Name {
			continue
		}
		vals := []string{f.Value.String()}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			vals = sv.GetSlice()
		}
		for _, v := range vals {
			if n.choices != nil && !slices.Contains(n.choices, v) {
				return fmt.Errorf("--%s %q: want %s", f.Name, v, strings.Join(n.choices, ", "))
			}
			if n.check != nil {
				if err := n.check(v); err != nil {
					return fmt.Errorf("--%s %q: %w", f.Name, v, err)
				}
			}
		}
	}
	return nil
}

func positiveInt(v string) error {
	if n, err := strconv.Atoi(v); err != nil || n < 1 {
		return fmt.Errorf("want a whole number >= 1")
	}
	return nil
}

func nShots(v string) error {
	if n, err := strconv.Atoi(v); err != nil || n < 0 || n > 32 {
		return fmt.Errorf("want a whole number in [0, 32]")
	}
	return nil
}

func graceValue(v string) error {
	if strings.EqualFold(v, "inf") || strings.EqualFold(v, "infinite") {
		return nil
	}
	if f, err := strconv.ParseFloat(v, 64); err != nil || !(f >= 0) || f > 365*24*3600 {
		return fmt.Errorf("want seconds in [0, 31536000] or inf")
	}
	return nil
}
