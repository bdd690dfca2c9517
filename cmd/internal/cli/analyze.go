package cli

import (
	"errors"
	"fmt"
	"github.com/llmbench/llmbench/analyze/servertime"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/analyze/judge"
	"github.com/llmbench/llmbench/columnar"
	"github.com/llmbench/llmbench/export"
	"github.com/llmbench/llmbench/internal/timespan"
	"github.com/llmbench/llmbench/plan"
)

// Exit statuses (export's) and --max-error-rate's default.
const (
	exitOK            = export.ExitOK
	exitBadInput      = export.ExitBadInput
	defaultMaxErrRate = 0.0
)

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

type analyzeFlags struct {
	outputDir       string
	serverTraces    string // --server-traces
	plan            string
	serverTokens    bool
	goodput         string
	gates           []string
	maxErrorRate    float64
	maxScheduleLag  time.Duration
	sliceDuration   time.Duration
	tokenizer       string
	quiet           bool
	parallelism     int
	maxWorkerCPUPct float64
	exportPrefix    string
	exportLevel     string
	httpTrace       bool
	traceTiming     bool
	perChunk        bool
	exports         []string
}

// Analyze is the flag set of `analyze`: what to compute from a run and what to export.
type Analyze struct {
	// FS holds the flags; compose it into a larger set with AddFlagSet.
	FS *pflag.FlagSet
	c  analyzeFlags
	// claim holds the benchmark claim's flags (benchclaim.go).
	claim *claimFlags
	// html holds report.html's flags (report.go).
	html *htmlFlags
	// user holds --metric and --metrics-file, sel --where and --group-by (usermetrics.go).
	user *userMetricFlags
	sel  *selectionFlags
}

// NewAnalyze defines the analyze flags on a new set.
func NewAnalyze() *Analyze {
	a := &Analyze{FS: NewFlagSet("analyze")}
	fs, c := a.FS, &a.c
	fs.StringVar(&c.outputDir, "output-dir", "", "write exports here instead of the first RUN_DIR")
	fs.StringVar(&c.plan, "plan", "", "plan file (default: the one run.json names)")
	fs.BoolVar(&c.serverTokens, "use-server-token-count", false, "take ISL and OSL from the server's usage fields instead of the plan and tokenizer")
	fs.StringVar(&c.goodput, "goodput", "", `SLOs for goodput, e.g. "time_to_first_token:400 inter_token_latency:20" (display units; each threshold a positive finite number)`)
	fs.StringArrayVar(&c.gates, "gate", nil, "release gate metric.stat<value, e.g. 'time_to_first_token.p99<400' (repeatable; < <= > >= ==; a finite value; server.* and gpu.* names too)")
	fs.Float64Var(&c.maxErrorRate, "max-error-rate", defaultMaxErrRate, "largest fraction of failed profile requests that passes, in [0, 1] (0: any failure fails the run)")
	fs.DurationVar(&c.maxScheduleLag, "max-schedule-lag", time.Millisecond, "verdict bound on the p99 dispatch lag (> 0)")
	fs.Var(secondsFlag{&c.sliceDuration}, "slice-duration", "also summarise per time slice of this length (seconds or a duration; at most 365 days)")
	fs.StringVar(&c.tokenizer, "tokenizer", "", "tokenizer for output lengths (default: the plan's)")
	fs.BoolVarP(&c.quiet, "quiet", "q", false, "print only gate failures and errors")
	fs.IntVar(&c.parallelism, "parallelism", 0, "logs read at once (0: all CPUs)")
	fs.Float64Var(&c.maxWorkerCPUPct, "max-worker-cpu", 90, "verdict bound on a worker's CPU use, percent of one core (a positive finite number)")
	fs.StringVar(&c.exportPrefix, "profile-export-prefix", export.DefaultExportPrefix, "name every export PREFIX_aiperf.json, PREFIX_aiperf.csv, PREFIX.jsonl, ... (AIPerf's)")
	fs.StringVar(&c.exportLevel, "export-level", "records", "summary (JSON and CSV only), records (also the per-request JSONL) or raw (as records: the run directory's raw logs hold every byte)")
	fs.BoolVar(&c.traceTiming, "show-trace-timing", false, "also print the HTTP trace timing table (k6's http_req_* metrics: connecting, sending, waiting, receiving, duration) after the metrics")
	fs.BoolVar(&c.httpTrace, "export-http-trace", false, "add each request's trace_data to the JSONL: send, headers, first and last read and connect times (wall-clock ns), every read as [ns, bytes], AIPerf's durations")
	fs.BoolVar(&c.perChunk, "export-per-chunk-data", false, "add each request's response chunks (every read as [ns, bytes]) to the JSONL as trace_data; inter_chunk_latency lists are always there")
	a.claim = addClaimFlags(fs) // the benchmark claim's flags (benchclaim.go)
	a.html = addHTMLFlags(fs)   // report.html (report.go)
	a.user = addUserMetricFlags(fs)
	a.sel = addSelectionFlags(fs)
	fs.StringVar(&c.serverTraces, "server-traces", "", "join this OTLP traces file's server spans to the requests (the Collector's file exporter output; default: the run's server_traces.jsonl): server_queue_time, server_prefill_time, ... (docs/metrics.md \"Server traces\")")
	fs.StringSliceVar(&c.exports, "export", nil, "also export in these formats: parquet (requests.parquet and chunks.parquet, docs/run-format.md)")
	return a
}

// checked are the analyze flags once checked: what the gates and SLOs parse to.
type checked struct {
	goodput []analyze.SLO
	gates   []judge.Gate // --gate, then the --gates file's
	// reg holds the user metrics (nil: none); where and groupBy are --where and --group-by.
	reg     *analyze.Registry
	traces  *servertime.Metrics // the server metrics in reg (--server-traces)
	where   *analyze.Selection
	groupBy *analyze.Grouping
	parquet bool
}

// Check checks every analyze flag without reading a run: bounds, export names, the gates
// (metrics, statistics, values), the goodput SLOs, the --gates file and the claim's files.
// profile calls it before anything is sent, so a typo never costs a run. Errors name the
// flag.
func (a *Analyze) Check() error {
	_, err := a.check()
	return err
}

func (a *Analyze) check() (*checked, error) {
	c := &a.c
	switch c.exportLevel {
	case export.LevelSummary, export.LevelRecords, export.LevelRaw:
	default:
		return nil, fmt.Errorf("--export-level %q: want summary, records or raw", c.exportLevel)
	}
	if c.exportPrefix == "" || strings.ContainsAny(c.exportPrefix, "/\\") {
		return nil, fmt.Errorf("--profile-export-prefix %q: want a file name prefix without a path", c.exportPrefix)
	}
	switch {
	case !(c.maxErrorRate >= 0 && c.maxErrorRate <= 1): // NaN too
		return nil, fmt.Errorf("--max-error-rate %v: want a fraction between 0 and 1", c.maxErrorRate)
	case c.maxScheduleLag <= 0:
		return nil, fmt.Errorf("--max-schedule-lag %v: must be positive", c.maxScheduleLag)
	case !(c.maxWorkerCPUPct > 0) || math.IsInf(c.maxWorkerCPUPct, 0):
		return nil, fmt.Errorf("--max-worker-cpu %v: want a positive finite percentage of one core", c.maxWorkerCPUPct)
	case c.parallelism < 0:
		return nil, fmt.Errorf("--parallelism %d: must not be negative (0: all CPUs)", c.parallelism)
	case a.html.off && a.html.path != "":
		return nil, fmt.Errorf("--html %s and --no-html contradict each other", a.html.path)
	}
	if err := export.CheckHTMLDir(a.html.path); err != nil {
		return nil, err
	}
	out := &checked{}
	for _, e := range c.exports {
		switch e {
		case export.FormatParquet:
			out.parquet = true
		default:
			return nil, fmt.Errorf("--export %q: want parquet", e)
		}
	}
	reg, traces, err := a.user.registry() // --metric, --metrics-file: checked before any log is read
	if err != nil {
		return nil, err
	}
	out.reg, out.traces = reg, traces
	if out.parquet {
		if err := columnar.Check(reg); err != nil {
			return nil, err
		}
	}
	if out.where, out.groupBy, err = a.sel.compile(reg); err != nil {
		return nil, err
	}
	if Changed(a.FS, "goodput") {
		slos, err := judge.ParseGoodputOf(reg, c.goodput)
		if err != nil {
			return nil, err
		}
		out.goodput = slos
	}
	for _, g := range c.gates {
		gate, err := judge.ParseGateOf(reg, g)
		if err != nil {
			return nil, err
		}
		out.gates = append(out.gates, gate)
	}
	gates, err := a.claim.gates(reg, out.gates) // --gates FILE (benchclaim.go)
	if err != nil {
		return nil, err
	}
	out.gates = gates
	if err := a.claim.check(); err != nil { // the claim's files (benchclaim.go)
		return nil, err
	}
	return out, nil
}

// CheckStreaming refuses the gates and goodput SLOs on metrics a run without streamed
// responses has no values for (time_to_first_token, inter_token_latency, ...), naming the
// flag: streaming is the plan's --streaming.
func (a *Analyze) CheckStreaming(streaming bool) error {
	if streaming {
		return nil
	}
	ck, err := a.check()
	if err != nil {
		return err
	}
	return ck.checkStreaming()
}

func (ck *checked) checkStreaming() error { return export.CheckStreaming(ck.goodput, ck.gates) }

// Run analyses the run directories dirs (export.Run), writes the exports and prints the
// console table and the gates on stdout. Exit status: 0 every gate holds, 1 a gate fails or
// a log is damaged, 2 bad input (one line "analyze: ..." on stderr).
func (a *Analyze) Run(dirs []string, stdout, stderr io.Writer) int {
	o, err := a.Options(dirs, stdout, stderr)
	if err != nil {
		fmt.Fprintln(stderr, OneLine("analyze", err))
		return exitBadInput
	}
	_, code := export.Run(o)
	return code
}

// Options checks the analyze flags and converts them into export.Options for the run
// directories dirs.
func (a *Analyze) Options(dirs []string, stdout, stderr io.Writer) (export.Options, error) {
	ck, err := a.check()
	if err != nil {
		return export.Options{}, err
	}
	c := a.c
	return export.Options{
		RunDirs: dirs,
		Analysis: analyze.Options{
			PlanPath: c.plan, UseServerTokenCount: c.serverTokens,
			TokenizerSpec: c.tokenizer, SliceDuration: c.sliceDuration, MaxScheduleLag: c.maxScheduleLag,
			MaxWorkerCPU: c.maxWorkerCPUPct / 100, Parallelism: c.parallelism,
			ExportHTTPTrace: c.httpTrace, ExportPerChunkData: c.perChunk,
			Goodput: ck.goodput, LoadTokenizer: loadTokenizer,
			Metrics: ck.reg, Where: ck.where, GroupBy: ck.groupBy,
		},
		Parquet: ck.parquet, ServerTraces: ck.traces, ServerTracesFile: c.serverTraces,
		OutputDir: c.outputDir, ExportPrefix: c.exportPrefix, Level: c.exportLevel,
		Gates: ck.gates, MaxErrorRate: c.maxErrorRate, Quiet: c.quiet, TraceTiming: c.traceTiming,
		Color:  ColorTerminal(os.Getenv, os.Stdout),
		NoHTML: a.html.off, HTML: a.html.path,
		Claim: export.Claim{RequireTrustworthy: a.claim.requireTrustworthy, AcceptScheduleMiss: a.claim.acceptScheduleMiss, GatesFile: a.claim.gatesFile, Agreed: a.claim.agreed,
			ValidateShape: a.claim.validateShape, GeneratorFile: a.claim.generatorFile},
		LoadTokenizer: openTokenizer, Stdout: stdout, Stderr: stderr,
	}, nil
}

// ExportPrefix is --profile-export-prefix: every export's file name starts with it.
func (a *Analyze) ExportPrefix() string { return a.c.exportPrefix }

// MaxErrorRate is --max-error-rate: the largest fraction of failed profile requests a run
// may have and still pass (analyze's gate) or count (a sweep point, a repeat, a probe).
func (a *Analyze) MaxErrorRate() float64 { return a.c.maxErrorRate }

// AcceptScheduleMiss is --accept-schedule-miss (or its default from the environment).
func (a *Analyze) AcceptScheduleMiss() bool { return a.claim.acceptScheduleMiss }
