package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/analyze/benchclaim"
	"github.com/llmbench/llmbench/export"
	"github.com/llmbench/llmbench/internal/timespan"
	"github.com/llmbench/llmbench/plan"
	"github.com/llmbench/llmbench/tokenizer"
)

// defaultMaxErrRate is --max-error-rate's default.
const defaultMaxErrRate = 0.0

// secondsFlag is a duration flag that also takes a bare number of seconds, as AIPerf's
// --slice-duration does.
type secondsFlag struct{ d *time.Duration }

func (s secondsFlag) String() string {
	if s.d == nil || *s.d == 0 {
		return ""
	}
	return s.d.String()
}

func (s secondsFlag) Set(v string) error {
	errRange := errors.New("want a positive duration of at most 365 days")
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		d, err := timespan.Seconds("", f, false) // NaN, infinities and past the bound refused
		if err != nil {
			return errRange
		}
		*s.d = d
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("%q is neither seconds nor a duration such as 10s", v)
	}
	if d <= 0 || d > plan.MaxSpan {
		return errRange
	}
	*s.d = d
	return nil
}

func (secondsFlag) Type() string { return "duration" }

// Analyze is the flag set of `analyze`: what to compute from a run and what to export,
// parsed into export.Settings (which checks them).
type Analyze struct {
	// FS holds the flags; compose it into a larger set with AddFlagSet.
	FS *pflag.FlagSet
	s  export.Settings
}

// AcceptScheduleMissEnv names the environment variable that, set to 1, makes
// --accept-schedule-miss the default: for test suites and CI machines whose load is not what
// they judge (docs/exit-codes.md). The last line still says that the schedule was not kept.
const AcceptScheduleMissEnv = "LLMBENCH_ACCEPT_SCHEDULE_MISS"

// NewAnalyze defines the analyze flags on a new set.
func NewAnalyze() *Analyze {
	a := &Analyze{FS: NewFlagSet("analyze")}
	fs, c := a.FS, &a.s
	fs.StringVar(&c.OutputDir, "output-dir", "", "write exports here instead of the first RUN_DIR")
	fs.StringVar(&c.Plan, "plan", "", "plan file (default: the one run.json names)")
	fs.BoolVar(&c.UseServerTokenCount, "use-server-token-count", false, "take ISL and OSL from the server's usage fields instead of the plan and tokenizer")
	fs.StringVar(&c.Goodput, "goodput", "", `SLOs for goodput, e.g. "time_to_first_token:400 inter_token_latency:20" (display units; each threshold a positive finite number)`)
	fs.StringArrayVar(&c.Gates, "gate", nil, "release gate metric.stat<value, e.g. 'time_to_first_token.p99<400' (repeatable; < <= > >= ==; a finite value; server.* and gpu.* names too)")
	fs.Float64Var(&c.MaxErrorRate, "max-error-rate", defaultMaxErrRate, "largest fraction of failed profile requests that passes, in [0, 1] (0: any failure fails the run)")
	fs.DurationVar(&c.MaxScheduleLag, "max-schedule-lag", time.Millisecond, "verdict bound on the p99 dispatch lag (> 0)")
	fs.Var(secondsFlag{&c.SliceDuration}, "slice-duration", "also summarise per time slice of this length (seconds or a duration; at most 365 days)")
	fs.StringVar(&c.Tokenizer, "tokenizer", "", "tokenizer for output lengths (default: the plan's)")
	fs.BoolVarP(&c.Quiet, "quiet", "q", false, "print only gate failures and errors")
	fs.IntVar(&c.Parallelism, "parallelism", 0, "logs read at once (0: all CPUs)")
	fs.Float64Var(&c.MaxWorkerCPUPct, "max-worker-cpu", 90, "verdict bound on a worker's CPU use, percent of one core (a positive finite number)")
	fs.StringVar(&c.ExportPrefix, "profile-export-prefix", export.DefaultExportPrefix, "name every export PREFIX_aiperf.json, PREFIX_aiperf.csv, PREFIX.jsonl, ... (AIPerf's)")
	fs.StringVar(&c.ExportLevel, "export-level", "records", "summary (JSON and CSV only), records (also the per-request JSONL) or raw (as records: the run directory's raw logs hold every byte)")
	fs.BoolVar(&c.TraceTiming, "show-trace-timing", false, "also print the HTTP trace timing table (k6's http_req_* metrics: connecting, sending, waiting, receiving, duration) after the metrics")
	fs.BoolVar(&c.ExportHTTPTrace, "export-http-trace", false, "add each request's trace_data to the JSONL: send, headers, first and last read and connect times (wall-clock ns), every read as [ns, bytes], AIPerf's durations")
	fs.BoolVar(&c.ExportPerChunk, "export-per-chunk-data", false, "add each request's response chunks (every read as [ns, bytes]) to the JSONL as trace_data; inter_chunk_latency lists are always there")
	// The benchmark claim's flags (docs/metrics.md "The benchmark claim").
	fs.BoolVar(&c.RequireTrustworthy, "require-trustworthy", false, "exit 1 when the benchmark claim is not trustworthy (generator, shape and thresholds each validated)")
	fs.BoolVar(&c.AcceptScheduleMiss, "accept-schedule-miss", os.Getenv(AcceptScheduleMissEnv) == "1", "exit 0 (gates permitting) even when the client did not keep its schedule; by default such a run exits 1, as its numbers describe the client, not the server ($"+AcceptScheduleMissEnv+"=1 sets this default)")
	fs.StringVar(&c.GatesFile, "gates", "", "YAML file of agreed gates (version: 1; gates: each with gate, owner and reason): adds them and marks them agreed")
	fs.StringVar(&c.ValidateShape, "validate-shape", "", "compare the run's ISL, OSL, inter-arrival and prefix reuse with REFERENCE: a dataset file in any --custom-dataset-type (TYPE:PATH to force one), a plan file or another run directory")
	fs.StringVar(&c.GeneratorFile, "generator-validation", "", "generator validation file to reuse (default: RUN_DIR/"+benchclaim.GeneratorValidationName+" when there is one); it counts only for the same plan, machine and workers")
	fs.BoolVar(&c.NoHTML, "no-html", false, "do not write "+export.FileReport)
	fs.StringVar(&c.HTML, "html", "", "write the HTML report to this file (default: "+export.FileReport+" in the output directory)")
	addUserMetricFlags(fs, &c.Metrics, &c.MetricsFile)
	fs.StringVar(&c.Where, "where", "", `compute every metric over the requests this boolean CEL expression holds for, e.g. 'isl > 4096' (same variables as --metric)`)
	fs.StringVar(&c.GroupBy, "group-by", "", `also summarise each group of requests this CEL expression splits them into, e.g. 'turn' (one block per group in the console and JSON, a column in CSV)`)
	fs.StringVar(&c.ServerTraces, "server-traces", "", "join this OTLP traces file's server spans to the requests (the Collector's file exporter output; default: the run's server_traces.jsonl): server_queue_time, server_prefill_time, ... (docs/metrics.md \"Server traces\")")
	fs.StringSliceVar(&c.Exports, "export", nil, "also export in these formats: parquet (requests.parquet and chunks.parquet, docs/run-format.md)")
	return a
}

// addUserMetricFlags defines --metric and --metrics-file (docs/metrics.md "User metrics"),
// the metrics a user defines in CEL (export.UserMetrics), for analyze and analyze compare.
func addUserMetricFlags(fs *pflag.FlagSet, metrics *[]string, file *string) {
	fs.StringArrayVar(metrics, "metric", nil, `user metric 'NAME = EXPR' in CEL over the request's variables, e.g. 'third_event_ms = chunks_ms[2]' (repeatable; docs/metrics.md "User metrics")`)
	fs.StringVar(file, "metrics-file", "", "YAML file of user metrics (version: 1; metrics: each with name, expression, unit, description)")
}

// settings are the flags as given, with whether --goodput was.
func (a *Analyze) settings() *export.Settings {
	a.s.GoodputSet = Changed(a.FS, "goodput")
	return &a.s
}

// Check checks every analyze flag without reading a run (export.Settings.Check): profile
// calls it before anything is sent, so a typo never costs a run. Errors name the flag.
func (a *Analyze) Check() error { return a.settings().Check() }

// CheckStreaming refuses the gates and goodput SLOs on metrics a run without streamed
// responses has no values for (export.Settings.CheckStreaming).
func (a *Analyze) CheckStreaming(streaming bool) error {
	return a.settings().CheckStreaming(streaming)
}

// Run analyses the run directories dirs (export.Run), writes the exports and prints the
// console table and the gates on stdout. Exit status: 0 every gate holds, 1 a gate fails or
// a log is damaged, 2 bad input (one line "analyze: ..." on stderr).
func (a *Analyze) Run(dirs []string, stdout, stderr io.Writer) int {
	o, err := a.Options(dirs, stdout, stderr)
	if err != nil {
		return BadInput(stderr, "analyze")(err)
	}
	_, code := export.Run(o)
	return code
}

// Options checks the analyze flags and converts them into export.Options for the run
// directories dirs, with this process's tokenizer loaders, terminal colour and writers.
func (a *Analyze) Options(dirs []string, stdout, stderr io.Writer) (export.Options, error) {
	o, err := a.settings().Options(dirs)
	if err != nil {
		return export.Options{}, err
	}
	o.Analysis.LoadTokenizer, o.LoadTokenizer = loadTokenizer, openTokenizer
	o.Color, o.Stdout, o.Stderr = ColorTerminal(os.Getenv, os.Stdout), stdout, stderr
	return o, nil
}

// ExportPrefix is --profile-export-prefix: every export's file name starts with it.
func (a *Analyze) ExportPrefix() string { return a.s.ExportPrefix }

// MaxErrorRate is --max-error-rate: the largest fraction of failed profile requests a run
// may have and still pass (analyze's gate) or count (a sweep point, a repeat, a probe).
func (a *Analyze) MaxErrorRate() float64 { return a.s.MaxErrorRate }

// AcceptScheduleMiss is --accept-schedule-miss (or its default from the environment).
func (a *Analyze) AcceptScheduleMiss() bool { return a.s.AcceptScheduleMiss }

// openTokenizer loads a tokenizer as every command does (docs/tokenizers.md), the
// environment's Hugging Face settings with it.
func openTokenizer(spec string) (*tokenizer.Tokenizer, error) {
	return tokenizer.LoadWithOptions(spec, tokenizer.EnvLoadOptions(os.Getenv))
}

// loadTokenizer is openTokenizer as analyze.Options.LoadTokenizer wants it (no typed nil).
func loadTokenizer(spec string) (analyze.TokenCounter, error) {
	t, err := openTokenizer(spec)
	if err != nil {
		return nil, err
	}
	return t, nil
}
