package export

import (
	"fmt"
	"github.com/llmbench/llmbench/analyze/servertime"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/analyze/judge"
	"github.com/llmbench/llmbench/analyze/output"
	"github.com/llmbench/llmbench/columnar"
	"github.com/llmbench/llmbench/internal/errline"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/tokenizer"
)

// Export file names are AIPerf's: the prefix (--profile-export-prefix) and these endings.
const (
	DefaultExportPrefix = "profile_export"
	SuffixJSON          = "_aiperf.json"
	SuffixCSV           = "_aiperf.csv"
	SuffixRecords       = ".jsonl"
	SuffixSlicesJSON    = "_aiperf_timeslices.json"
	SuffixSlicesCSV     = "_aiperf_timeslices.csv"
)

// The export levels (--export-level): what Run writes besides the summary files.
const (
	LevelSummary = "summary" // the AIPerf JSON and CSV only
	LevelRecords = "records" // also the per-request JSONL
	LevelRaw     = "raw"     // as records: the run directory's raw logs hold every byte
)

// FormatParquet is --export parquet: requests.parquet and chunks.parquet (package columnar).
const FormatParquet = "parquet"

// Exit statuses of Run and Compare.
const (
	ExitOK       = 0 // every gate holds
	ExitGate     = 1 // a gate, the error-rate bound, a damaged log, a missing shard, an incomplete run or the claim failed
	ExitBadInput = 2 // bad input, said in one line on stderr
)

// Options are one analysis: its inputs, what it writes where, and what it judges. The
// command fills them from analyze's flags, once checked.
type Options struct {
	// RunDirs are the run directories analysed together (the shards of one plan).
	RunDirs []string
	// Analysis are analyze's options; Run sets their RunDirs and TempDir, and their
	// LoadTokenizer from LoadTokenizer when it is nil.
	Analysis analyze.Options
	// OutputDir is where the exports go; "" is the first run directory, or, for an
	// analysis with a selection, grouping or user metrics, its folder under the first run
	// directory's selections/ (SelectionDir).
	OutputDir string
	// ExportPrefix names every export (DefaultExportPrefix + the suffixes above).
	ExportPrefix string
	// Level is the export level: LevelSummary, LevelRecords or LevelRaw.
	Level string
	// Gates are the release gates: --gate's, then the gates file's.
	Gates []judge.Gate
	// MaxErrorRate is the largest fraction of failed profile requests that passes.
	MaxErrorRate float64
	// Quiet prints only gate failures and errors.
	Quiet bool
	// Color shows the benchmark claim's failed lines in red: stdout is a terminal and
	// NO_COLOR is not set (the command decides, ColorTerminal).
	Color bool
	// Parquet also writes requests.parquet and chunks.parquet (--export parquet), with
	// Analysis.Metrics' metrics and Analysis.GroupBy's groups.
	Parquet bool
	// TraceTiming also prints the HTTP trace timing table after the console table
	// (AIPerf's --show-trace-timing).
	TraceTiming bool
	// NoHTML writes no report.html; HTML, when not "", is where it goes instead of the
	// output directory.
	NoHTML bool
	HTML   string
	// Claim holds the benchmark claim's evidence.
	Claim Claim
	// LoadTokenizer loads a tokenizer by spec (docs/tokenizers.md): for the analysis when
	// Analysis.LoadTokenizer is nil, and for the claim's prefix reuse.
	LoadTokenizer func(spec string) (*tokenizer.Tokenizer, error)
	// ServerTraces are the server metrics registered in Analysis.Metrics (servertime.Register):
	// Run joins the run's server spans to its requests for them. ServerTracesFile is the
	// traces file (--server-traces; "": the run's server_traces.jsonl when it has one).
	ServerTraces     *servertime.Metrics
	ServerTracesFile string
	// Stdout takes the console table, the gates and where the files went; Stderr the
	// failures, one line each.
	Stdout, Stderr io.Writer
}

// Run analyses o.RunDirs, writes the exports (and report.html) and prints the console table
// and the gates. It returns the summary (nil when the analysis failed) and the exit status:
// ExitOK every gate holds, ExitGate a gate fails, a log is damaged, a shard is missing or the
// run did not complete whole (crashed, interrupted: one line on stderr), ExitBadInput bad input
// (one line "analyze: ..." on stderr; the output folders it created are removed).
func Run(o Options) (*analyze.Summary, int) {
	stdout, stderr := o.Stdout, o.Stderr
	dirs := o.RunDirs
	undo := func() {} // removes the output folders this Run created while they are empty, on bad input
	// last is the summary once the analysis is done: returned whatever fails after it.
	var last *analyze.Summary
	var parquetFiles *columnar.Files // --export parquet: its part files go before the folders
	bad := func(format string, args ...any) (*analyze.Summary, int) {
		fmt.Fprintln(stderr, errline.Format("analyze", fmt.Errorf(format, args...)))
		if parquetFiles != nil {
			parquetFiles.Remove()
		}
		undo()
		return last, ExitBadInput
	}
	fileJSON, fileCSV, fileRecords := o.ExportPrefix+SuffixJSON, o.ExportPrefix+SuffixCSV, o.ExportPrefix+SuffixRecords
	fileSlicesJSON, fileSlicesCSV := o.ExportPrefix+SuffixSlicesJSON, o.ExportPrefix+SuffixSlicesCSV
	opts := o.Analysis
	opts.RunDirs = dirs
	if opts.LoadTokenizer == nil && o.LoadTokenizer != nil {
		opts.LoadTokenizer = func(spec string) (analyze.TokenCounter, error) {
			t, err := o.LoadTokenizer(spec)
			if err != nil {
				return nil, err
			}
			return t, nil
		}
	}
	gates := o.Gates
	out := o.OutputDir
	outFlag := "--output-dir"
	if out == "" {
		out, outFlag = dirs[0], "RUN_DIR"
		// A selected analysis never replaces the run's own exports and report.html: it
		// writes beside them, in a folder named after what it selected (selection.go).
		if sel := SelectionDir(dirs[0], opts); sel != "" {
			out = sel
		}
	}
	page := newPage(o.NoHTML, o.HTML)
	// Nothing is written over an input of the analysis (a run's files, the plan...): the
	// outputs are checked before anything is written, and again once the analysis knows
	// every input, before the first is renamed into place.
	outputs := []outFile{{outFlag, filepath.Join(out, fileJSON)}, {outFlag, filepath.Join(out, fileCSV)}}
	if o.Level != LevelSummary {
		outputs = append(outputs, outFile{outFlag, filepath.Join(out, fileRecords)})
	}
	if opts.SliceDuration > 0 {
		outputs = append(outputs, outFile{outFlag, filepath.Join(out, fileSlicesJSON)}, outFile{outFlag, filepath.Join(out, fileSlicesCSV)})
	}
	if o.Parquet {
		outputs = append(outputs, outFile{outFlag, filepath.Join(out, columnar.FileRequests)}, outFile{outFlag, filepath.Join(out, columnar.FileChunks)})
	}
	if p := page.target(out); p != "" {
		outputs = append(outputs, outFile{"--html", p})
		if err := CheckHTMLDir(o.HTML); err != nil {
			return bad("%v", err)
		}
	}
	guard := newOutputGuard()
	guard.inputsBefore(o, dirs)
	if err := guard.checkAll(outputs); err != nil {
		return bad("%v", err)
	}
	mkUndo, err := mkdirNew(out)
	if err != nil {
		return bad("--output-dir: %v", err)
	}
	undo = mkUndo
	opts.TempDir = out
	join, err := joinTraces(&o, &opts)
	if err != nil {
		return bad("%v", err)
	}

	var s *analyze.Summary
	written := []string{fileJSON, fileCSV}
	if o.Parquet {
		parquetFiles = columnar.New(out, opts.Metrics, opts.GroupBy != nil)
		defer parquetFiles.Remove() // the part files, whatever fails
		opts.Rows = parquetFiles.Part
	}
	analyzeChecked := func(w io.Writer) error {
		var err error
		if s, err = analyze.Analyze(opts, page.tee(w)); err != nil {
			return err
		}
		// A gate or SLO the run cannot give (it did not stream) is bad input: refused
		// before any export is written.
		if !s.Streaming {
			if err := CheckStreaming(opts.Goodput, gates); err != nil {
				return err
			}
		}
		guard.inputsAfter(s)
		return guard.checkAll(outputs)
	}
	if o.Level == LevelSummary {
		err = analyzeChecked(io.Discard)
	} else {
		err = WriteFileAtomic(filepath.Join(out, fileRecords), analyzeChecked)
		written = append(written, fileRecords)
	}
	if err == nil && parquetFiles != nil {
		err = parquetFiles.Finish()
		written = append(written, columnar.FileRequests, columnar.FileChunks)
	}
	if err != nil {
		return bad("%s", strings.TrimPrefix(err.Error(), "analyze: "))
	}
	last = s
	if join != nil {
		s.ServerTraces = join.Counts()
	}
	if err := o.Claim.judge(s, gates, dirs, opts.TokenizerSpec, o.LoadTokenizer); err != nil { // the benchmark claim (benchclaim.go)
		return bad("%s", strings.TrimPrefix(err.Error(), "analyze: "))
	}
	exports := []export{{fileJSON, output.WriteAIPerfJSON}, {fileCSV, output.WriteAIPerfCSV}}
	if opts.SliceDuration > 0 {
		exports = append(exports, export{fileSlicesJSON, output.WriteTimeslicesJSON}, export{fileSlicesCSV, output.WriteTimeslicesCSV})
		written = append(written, fileSlicesJSON, fileSlicesCSV)
	}
	for _, e := range exports {
		if err := WriteFileAtomic(filepath.Join(out, e.name), func(w io.Writer) error { return e.write(w, s) }); err != nil {
			return bad("%s", strings.TrimPrefix(err.Error(), "analyze: "))
		}
	}

	if !o.Quiet {
		if err := output.WriteConsoleColor(stdout, s, o.Color); err != nil {
			return bad("%v", err)
		}
		if o.TraceTiming {
			if err := output.WriteTraceTiming(stdout, s); err != nil {
				return bad("%v", err)
			}
		}
		fmt.Fprintf(stdout, "Exports in %s: %s\n", out, strings.Join(written, ", "))
	}
	code := ExitOK
	report := func(ok bool, line string) {
		page.gate(ok, line)
		if !ok {
			code = ExitGate
		}
		switch {
		case !ok && o.Quiet:
			fmt.Fprintln(stderr, line)
		case !o.Quiet:
			fmt.Fprintln(stdout, line)
		}
	}
	// Each gate's line says what a --where left out of what it judged (never a failure).
	sel := ""
	if n := s.SelectionNote(); n != "" {
		sel = "; " + n
	}
	er := analyze.CheckErrorRate(s, o.MaxErrorRate)
	report(er.OK, fmt.Sprintf("Gate error rate <= %s: %s (%d of %d profile requests failed, %s%s)",
		strconv.FormatFloat(o.MaxErrorRate, 'g', -1, 64), passFail(er.OK), er.Errors, er.Total, pct(er.Rate), sel))
	for _, r := range judge.EvaluateGates(s, gates) {
		if r.Missing && r.Why != "" {
			report(false, fmt.Sprintf("Gate %s: FAIL (not evaluable: %s%s)", r.Gate, r.Why, sel))
			continue
		}
		if r.Missing {
			report(false, fmt.Sprintf("Gate %s: FAIL (the run has no %s values%s)", r.Gate, r.Gate.Metric.Tag, sel))
			continue
		}
		report(r.OK, fmt.Sprintf("Gate %s: %s (%s = %s%s)", r.Gate, passFail(r.OK), r.Gate.Stat,
			strings.TrimSpace(strconv.FormatFloat(math.Round(r.Actual*1e4)/1e4, 'f', -1, 64)+" "+r.Gate.Metric.Unit), sel))
	}
	// Damaged logs fail the run even when every gate holds: the results leave out what
	// the damaged logs held. Said on stderr, whatever --quiet, naming the files.
	if len(s.Damaged) > 0 {
		fmt.Fprintf(stderr, "analyze: DAMAGED INPUT: %s could not be read whole; the results leave out what they held (see the notes)\n",
			strings.Join(s.Damaged, ", "))
		code = ExitGate
	}
	if err := page.write(out, s, o.Quiet, stdout); err != nil { // report.html (page.go)
		return bad("%s", strings.TrimPrefix(err.Error(), "analyze: "))
	}
	// A distributed run with shards missing: the rest was analysed, the run is not whole.
	if s.Shards != nil && len(s.Shards.Missing) > 0 {
		fmt.Fprintf(stderr, "analyze: MISSING SHARDS: %d of %d shards present; the results leave out what the missing ones held (see the notes)\n",
			len(s.Shards.Shards), s.Shards.Count)
		code = ExitGate
	}
	// A run that did not complete whole (crashed, interrupted, a worker that did not finish,
	// nothing measured: judge.Health) fails whatever its gates say, even when the error
	// bound allows every request to fail: its numbers cover only part of the plan. Damaged
	// logs and missing shards have their own lines above.
	if why := incomplete(s, o.MaxErrorRate); why != "" {
		fmt.Fprintf(stderr, "analyze: RUN INCOMPLETE: %s\n", why)
		code = ExitGate
	}
	// Token counts taken from the server that are negative or beyond what the text could
	// encode: the token throughputs rest on them (analyze.UsageCheck, Health's ProblemUsage).
	if u := s.Usage; u.Rests && u.Bad() {
		fmt.Fprintf(stderr, "analyze: INVALID TOKEN COUNTS: %s\n", u)
		code = ExitGate
	}
	return last, o.Claim.exit(s, code, stderr) // --require-trustworthy (benchclaim.go)
}

// joinTraces joins the run's server spans to its requests (package servertime) for the
// server metrics of o.ServerTraces, registering them in opts.Metrics when the command did
// not; nil when the run carried no trace context and no traces file is given.
func joinTraces(o *Options, opts *analyze.Options) (*servertime.Join, error) {
	j, err := servertime.Open(o.RunDirs, o.ServerTracesFile)
	if err != nil || j == nil {
		return nil, err
	}
	m := o.ServerTraces
	if m == nil {
		if opts.Metrics == nil {
			opts.Metrics = analyze.NewRegistry()
		}
		if m, err = servertime.Register(opts.Metrics); err != nil {
			return nil, err
		}
	}
	m.Bind(j)
	opts.RecordMetadata = j.AppendMetadata
	return j, nil
}

// incomplete is why s is not a whole run (judge.Health's incomplete problems, those of
// damaged logs and missing shards left to their own lines), "" when it is. A run.json
// rebuilt from the logs (status unknown) is judged by the logs: each worker's footer says
// whether it finished.
func incomplete(s *analyze.Summary, maxErrorRate float64) string {
	whole := *s
	whole.Damaged = nil
	if whole.RunStatus == rawlog.StatusUnknown {
		whole.RunStatus = rawlog.StatusComplete
	}
	if s.Shards != nil {
		sh := *s.Shards
		sh.Missing = nil
		whole.Shards = &sh
	}
	var why []string
	for _, p := range judge.Health(&whole, maxErrorRate) {
		if p.Kind == judge.ProblemIncomplete {
			why = append(why, p.Text)
		}
	}
	return strings.Join(why, "; ")
}

// CheckStreaming refuses the goodput SLOs and gates on metrics a run without streamed
// responses has no values for (time_to_first_token, inter_token_latency, ...), naming the
// flag: streaming is the plan's --streaming.
func CheckStreaming(goodput []analyze.SLO, gates []judge.Gate) error {
	for _, s := range goodput {
		if s.Metric.NeedsStream() {
			return fmt.Errorf("--goodput %s: the plan does not stream, so the run has no %s values (plan with --streaming)", s, s.Metric.Tag)
		}
	}
	for _, g := range gates {
		if g.Metric.NeedsStream() {
			return fmt.Errorf("--gate %q: the plan does not stream, so the run has no %s values (plan with --streaming)", g.Expr, g.Metric.Tag)
		}
	}
	return nil
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

// WriteFileAtomic writes path through a temporary file beside it, renamed into place, so a
// reader never sees half a file and a failed write leaves the previous one. Every export,
// page and aggregate is written so; an error of write is returned as it is.
func WriteFileAtomic(path string, write func(io.Writer) error) error {
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
