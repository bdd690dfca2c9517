package profile

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// accuracyNote is what every accuracy flag says: AIPerf runs accuracy benchmarks beside the
// profile with them; llmbench measures performance only.
const accuracyNote = "accuracy benchmarks are not run: llmbench measures performance only (the run goes on without one)"

// Noted are AIPerf's flags that configure its own processes or collectors, or features with no
// equivalent here: accepted, so command lines carry over, with one line on stderr saying what
// happens here instead. A flag with choices still refuses a value AIPerf would refuse (exit 2).
var Noted = []struct {
	Name, Note, Optional string
	IsBool, List         bool
	// choices are the values AIPerf accepts (each item of a list); nil: any.
	choices []string
	// check, when set, checks the value as AIPerf would.
	check func(v string) error
}{
	{Name: "workers-max", Note: "replay runs one worker process per CPU instead (--workers, --cpus)", check: positiveInt},
	{Name: "record-processors", Note: "analyze reads the raw logs after the run instead (--parallelism)", check: positiveInt},
	{Name: "zmq-host", Note: "workers talk to the coordinator over pipes, not ZMQ"},
	{Name: "zmq-ipc-path", Note: "workers talk to the coordinator over pipes, not ZMQ"},
	{Name: "zmq-dual-bind", Note: "workers talk to the coordinator over pipes, not ZMQ", IsBool: true},
	{Name: "api-host", Note: "there is no live API; progress is on stderr"},
	{Name: "api-port", Note: "there is no live API; progress is on stderr"},
	{Name: "log-level", Note: "messages are fixed one-liners on stderr; the run directory keeps the detail",
		choices: []string{"TRACE", "DEBUG", "INFO", "NOTICE", "WARNING", "SUCCESS", "ERROR", "CRITICAL", "trace", "debug", "info", "notice", "warning", "success", "error", "critical"}},
	{Name: "extra-verbose", Note: "more detail is in the run directory (raw logs, run.json); the output is the same", IsBool: true},
	{Name: "gpu-telemetry", Note: "replay samples local GPUs through NVML by default (--no-gpu-telemetry, --gpu-sample-interval)", Optional: "pynvml"},
	{Name: "no-server-metrics", Note: "server /metrics are not scraped", IsBool: true},
	{Name: "server-metrics", Note: "server /metrics are not scraped", Optional: "default"},
	{Name: "server-metrics-formats", List: true, choices: []string{"json", "csv", "jsonl", "parquet"},
		Note: "the server's metrics are written as server_metrics.jsonl (every scrape) and in profile_export_aiperf.json (llmbench.server_metrics), whatever the formats"},
	{Name: "transport", choices: []string{"http"},
		Note: "requests go over HTTP/1.1 with the workers' own client, plain or TLS by each --url's scheme"},
	{Name: "hf-subset", Note: "--public-dataset is not supported here, so there is no HuggingFace subset to pick: give the data with --input-file"},
	{Name: "warmup-grace-period", check: graceValue,
		Note: "the profile waits for every warmup response (a closed loop; AIPerf's default, infinite) or keeps its planned instants (open loop); warmup requests are never cut"},
	{Name: "profile-run-disable-warmup-after-first", IsBool: true,
		Note: "every repeat replays the same plan, its warmup included, so the runs stay identical"},
	{Name: "no-profile-run-disable-warmup-after-first", IsBool: true,
		Note: "every repeat replays the same plan, its warmup included (as asked)"},
	{Name: "set-consistent-seed", IsBool: true,
		Note: "every run replays one plan compiled from one seed (--random-seed, default 0): the workloads are always identical"},
	{Name: "no-set-consistent-seed", IsBool: true,
		Note: "every run still replays one plan compiled from one seed (--random-seed, default 0): the workloads stay identical"},
	{Name: "accuracy-benchmark", Note: accuracyNote,
		choices: []string{"mmlu", "mmlu_pro", "aime", "hellaswag", "bigbench", "aime24", "aime25", "math_500", "gsm8k", "gpqa_diamond", "lcb_codegeneration"}},
	{Name: "accuracy-tasks", Note: accuracyNote, List: true},
	{Name: "accuracy-n-shots", Note: accuracyNote, check: nShots},
	{Name: "accuracy-enable-cot", Note: accuracyNote, IsBool: true},
	{Name: "accuracy-no-enable-cot", Note: accuracyNote, IsBool: true},
	{Name: "accuracy-grader", Note: accuracyNote,
		choices: []string{"exact_match", "math", "multiple_choice", "code_execution", "lighteval_expr", "lighteval_latex", "lighteval_gpqa", "lighteval_gsm8k", "mmlu_pro"}},
	{Name: "accuracy-system-prompt", Note: accuracyNote},
	{Name: "accuracy-verbose", Note: accuracyNote, IsBool: true},
}

// CheckNoted refuses a value of a noted flag (name, its values as given) that AIPerf would
// refuse: not one of its choices, or out of its range.
func CheckNoted(name string, vals []string) error {
	for _, n := range Noted {
		if n.Name != name {
			continue
		}
		for _, v := range vals {
			if n.choices != nil && !slices.Contains(n.choices, v) {
				return fmt.Errorf("--%s %q: want %s", name, v, strings.Join(n.choices, ", "))
			}
			if n.check != nil {
				if err := n.check(v); err != nil {
					return fmt.Errorf("--%s %q: %w", name, v, err)
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
