package cli

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/plan"
)

// Export file names are AIPerf's: the prefix (--profile-export-prefix) and these endings.
const (
	DefaultExportPrefix = "profile_export"
	SuffixJSON          = "_aiperf.json"
	SuffixCSV           = "_aiperf.csv"
	SuffixRecords       = ".jsonl"
	SuffixSlicesJSON    = "_aiperf_timeslices.json"
	SuffixSlicesCSV     = "_aiperf_timeslices.csv"
	exitOK, exitGate    = 0, 1
	exitBadInput        = 2
	defaultMaxErrRate   = 0.0
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
		d, err := durationFlag("", f, false) // NaN, infinities and past the bound refused
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

type config struct {
	outputDir       string
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
	perChunk        bool
}

// Analyze is the flag set of `analyze`: what to compute from a run and what to export.
type Analyze struct {
	// FS holds the flags; compose it into a larger set with AddFlagSet.
	FS *pflag.FlagSet
	c  config
	// claim holds the benchmark claim's flags (claim.go).
	claim *claimFlags
	// last is the summary of the last Run that analysed its runs (Last, cli/sweep.go).
	last *analyze.Summary
	// html holds report.html's flags (report.go).
	html *htmlFlags
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
	fs.StringVar(&c.exportPrefix, "profile-export-prefix", DefaultExportPrefix, "name every export PREFIX_aiperf.json, PREFIX_aiperf.csv, PREFIX.jsonl, ... (AIPerf's)")
	fs.StringVar(&c.exportLevel, "export-level", "records", "summary (JSON and CSV only), records (also the per-request JSONL) or raw (as records: the run directory's raw logs hold every byte)")
	fs.BoolVar(&c.httpTrace, "export-http-trace", false, "add each request's trace_data to the JSONL: send, headers, first and last read and connect times (wall-clock ns), every read as [ns, bytes], AIPerf's durations")
	fs.BoolVar(&c.perChunk, "export-per-chunk-data", false, "add each request's response chunks (every read as [ns, bytes]) to the JSONL as trace_data; inter_chunk_latency lists are always there")
	a.claim = addClaimFlags(fs) // the benchmark claim's flags (claim.go)
	a.html = addHTMLFlags(fs)   // report.html (report.go)
	return a
}

// checked are the analyze flags once checked: what the gates and SLOs parse to.
type checked struct {
	goodput []analyze.SLO
	gates   []analyze.Gate // --gate, then the --gates file's
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
	case "summary", "records", "raw":
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
	if err := a.html.checkDir(); err != nil {
		return nil, err
	}
	out := &checked{}
	if Changed(a.FS, "goodput") {
		slos, err := analyze.ParseGoodput(c.goodput)
		if err != nil {
			return nil, err
		}
		out.goodput = slos
	}
	for _, g := range c.gates {
		gate, err := analyze.ParseGate(g)
		if err != nil {
			return nil, err
		}
		out.gates = append(out.gates, gate)
	}
	gates, err := a.claim.gates(out.gates) // --gates FILE (claim.go)
	if err != nil {
		return nil, err
	}
	out.gates = gates
	if err := a.claim.check(); err != nil { // the claim's files (claim.go)
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

func (ck *checked) checkStreaming() error {
	for _, s := range ck.goodput {
		if s.Metric.NeedsStream() {
			return fmt.Errorf("--goodput %s: the plan does not stream, so the run has no %s values (plan with --streaming)", s, s.Metric.Tag)
		}
	}
	for _, g := range ck.gates {
		if g.Metric.NeedsStream() {
			return fmt.Errorf("--gate %q: the plan does not stream, so the run has no %s values (plan with --streaming)", g.Expr, g.Metric.Tag)
		}
	}
	return nil
}

// Run analyses the run directories dirs, writes the exports and prints the console table
// and the gates on stdout. Exit status: 0 every gate holds, 1 a gate fails or a log is
// damaged, 2 bad input (one line "analyze: ..." on stderr).
func (a *Analyze) Run(dirs []string, stdout, stderr io.Writer) int {
	c := a.c
	a.last = nil
	undo := func() {} // removes the output folders this Run created while they are empty, on bad input
	bad := func(format string, args ...any) int {
		fmt.Fprintln(stderr, OneLine("analyze", fmt.Errorf(format, args...)))
		undo()
		return exitBadInput
	}
	ck, err := a.check()
	if err != nil {
		return bad("%v", err)
	}
	fileJSON, fileCSV, fileRecords := c.exportPrefix+SuffixJSON, c.exportPrefix+SuffixCSV, c.exportPrefix+SuffixRecords
	fileSlicesJSON, fileSlicesCSV := c.exportPrefix+SuffixSlicesJSON, c.exportPrefix+SuffixSlicesCSV
	opts := analyze.Options{
		RunDirs: dirs, PlanPath: c.plan, UseServerTokenCount: c.serverTokens,
		TokenizerSpec: c.tokenizer, SliceDuration: c.sliceDuration, MaxScheduleLag: c.maxScheduleLag,
		MaxWorkerCPU: c.maxWorkerCPUPct / 100, Parallelism: c.parallelism,
		ExportHTTPTrace: c.httpTrace, ExportPerChunkData: c.perChunk,
		LoadTokenizer: loadTokenizer,
	}
	opts.Goodput = ck.goodput
	gates := ck.gates
	out := c.outputDir
	outFlag := "--output-dir"
	if out == "" {
		out, outFlag = dirs[0], "RUN_DIR"
	}
	// Nothing is written over an input of the analysis (a run's files, the plan...): the
	// outputs are checked before anything is written, and again once the analysis knows
	// every input, before the first is renamed into place.
	outputs := []output{{outFlag, filepath.Join(out, fileJSON)}, {outFlag, filepath.Join(out, fileCSV)}}
	if c.exportLevel != "summary" {
		outputs = append(outputs, output{outFlag, filepath.Join(out, fileRecords)})
	}
	if c.sliceDuration > 0 {
		outputs = append(outputs, output{outFlag, filepath.Join(out, fileSlicesJSON)}, output{outFlag, filepath.Join(out, fileSlicesCSV)})
	}
	if p := a.html.target(out); p != "" {
		outputs = append(outputs, output{"--html", p})
		if err := a.html.checkDir(); err != nil {
			return bad("%v", err)
		}
	}
	guard := newOutputGuard()
	a.inputsBefore(guard, dirs)
	if err := guard.checkAll(outputs); err != nil {
		return bad("%v", err)
	}
	mkUndo, err := mkdirNew(out)
	if err != nil {
		return bad("--output-dir: %v", err)
	}
	undo = mkUndo
	opts.TempDir = out

	var s *analyze.Summary
	written := []string{fileJSON, fileCSV}
	analyzeChecked := func(w io.Writer) error {
		var err error
		if s, err = analyze.Analyze(opts, a.html.tee(w)); err != nil {
			return err
		}
		// A gate or SLO the run cannot give (it did not stream) is bad input: refused
		// before any export is written.
		if !s.Streaming {
			if err := ck.checkStreaming(); err != nil {
				return err
			}
		}
		inputsAfter(guard, s)
		return guard.checkAll(outputs)
	}
	if c.exportLevel == "summary" {
		err = analyzeChecked(io.Discard)
	} else {
		err = writeFile(filepath.Join(out, fileRecords), analyzeChecked)
		written = append(written, fileRecords)
	}
	if err != nil {
		return bad("%s", strings.TrimPrefix(err.Error(), "analyze: "))
	}
	a.last = s
	if err := a.claim.judge(s, gates, dirs, c.tokenizer); err != nil { // the benchmark claim (claim.go)
		return bad("%s", strings.TrimPrefix(err.Error(), "analyze: "))
	}
	exports := []export{{fileJSON, analyze.WriteAIPerfJSON}, {fileCSV, analyze.WriteAIPerfCSV}}
	if c.sliceDuration > 0 {
		exports = append(exports, export{fileSlicesJSON, analyze.WriteTimeslicesJSON}, export{fileSlicesCSV, analyze.WriteTimeslicesCSV})
		written = append(written, fileSlicesJSON, fileSlicesCSV)
	}
	for _, e := range exports {
		if err := writeFile(filepath.Join(out, e.name), func(w io.Writer) error { return e.write(w, s) }); err != nil {
			return bad("%s", strings.TrimPrefix(err.Error(), "analyze: "))
		}
	}

	if !c.quiet {
		if err := analyze.WriteConsole(stdout, s); err != nil {
			return bad("%v", err)
		}
		fmt.Fprintf(stdout, "Exports in %s: %s\n", out, strings.Join(written, ", "))
	}
	code := exitOK
	report := func(ok bool, line string) {
		a.html.gate(ok, line)
		if !ok {
			code = exitGate
		}
		switch {
		case !ok && c.quiet:
			fmt.Fprintln(stderr, line)
		case !c.quiet:
			fmt.Fprintln(stdout, line)
		}
	}
	er := analyze.CheckErrorRate(s, c.maxErrorRate)
	report(er.OK, fmt.Sprintf("Gate error rate <= %s: %s (%d of %d profile requests failed, %s)",
		strconv.FormatFloat(c.maxErrorRate, 'g', -1, 64), passFail(er.OK), er.Errors, er.Total, pct(er.Rate)))
	for _, r := range analyze.EvaluateGates(s, gates) {
		if r.Missing && r.Why != "" {
			report(false, fmt.Sprintf("Gate %s: FAIL (not evaluable: %s)", r.Gate, r.Why))
			continue
		}
		if r.Missing {
			report(false, fmt.Sprintf("Gate %s: FAIL (the run has no %s values)", r.Gate, r.Gate.Metric.Tag))
			continue
		}
		report(r.OK, fmt.Sprintf("Gate %s: %s (%s = %s %s)", r.Gate, passFail(r.OK), r.Gate.Stat,
			strconv.FormatFloat(math.Round(r.Actual*1e4)/1e4, 'f', -1, 64), r.Gate.Metric.Unit))
	}
	// Damaged logs fail the run even when every gate holds: the results leave out what
	// the damaged logs held. Said on stderr, whatever --quiet, naming the files.
	if len(s.Damaged) > 0 {
		fmt.Fprintf(stderr, "analyze: DAMAGED INPUT: %s could not be read whole; the results leave out what they held (see the notes)\n",
			strings.Join(s.Damaged, ", "))
		code = exitGate
	}
	if err := a.html.write(out, s, c.quiet, stdout); err != nil { // report.html (report.go)
		return bad("%s", strings.TrimPrefix(err.Error(), "analyze: "))
	}
	// A distributed run with shards missing: the rest was analysed, the run is not whole.
	if s.Shards != nil && len(s.Shards.Missing) > 0 {
		fmt.Fprintf(stderr, "analyze: MISSING SHARDS: %d of %d shards present; the results leave out what the missing ones held (see the notes)\n",
			len(s.Shards.Shards), s.Shards.Count)
		code = exitGate
	}
	return a.claim.exit(s, code, stderr) // --require-trustworthy (claim.go)
}

// export is one summary file and the reporter that writes it.
type export struct {
	name  string
	write func(io.Writer, *analyze.Summary) error
}

func passFail(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

func pct(f float64) string { return strconv.FormatFloat(f*100, 'f', 2, 64) + "%" }

// writeFile writes path atomically: a temporary file beside it, renamed into place, so a
// reader never sees half a file and a failed analysis leaves the previous one.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("analyze: %w", err)
	}
	tmp := f.Name()
	if err := write(f); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("analyze: %w", err)
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("analyze: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("analyze: %w", err)
	}
	return nil
}
