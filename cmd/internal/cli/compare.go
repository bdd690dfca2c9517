package cli

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/report"
)

// Files `analyze compare` writes into its output directory (docs/report.md).
const (
	FileCompareHTML = "compare.html"
	FileCompareJSON = "compare.json"
)

// CompareUsage is the synopsis of `analyze compare`.
const CompareUsage = "usage: analyze compare [flags] RUN_A RUN_B [RUN...] | DIR_OF_RUNS"

// RunCompare is `analyze compare`: it analyses each run directory, compares the others
// with the first (the baseline), writes compare.html and compare.json and prints the
// differences. Exit status: 0, 1 when a run failed (failed requests beyond
// --max-error-rate, a crash, an interrupted or incomplete run: the baseline too), a run of
// the baseline's plan completed more than --max-completed-drop percent fewer requests, or a
// --fail-on-regression threshold is crossed (one line on stderr each), 2 on bad input (one
// line on stderr).
func RunCompare(args []string, stdout, stderr io.Writer) int {
	fs := NewFlagSet("analyze compare")
	fs.Usage = func() {}
	out := fs.String("output-dir", ".", "write "+FileCompareHTML+" and "+FileCompareJSON+" here")
	fail := fs.StringArray("fail-on-regression", nil, "exit 1 when METRIC[.p99]:PCT, e.g. time_to_first_token:10, got significantly worse by PCT% or more (repeatable)")
	alpha := fs.Float64("alpha", 0.05, "Mann–Whitney U significance level")
	minEffect := fs.Float64("min-effect", report.DefaultMinEffectPct, "smallest difference of medians, in percent, called significant")
	maxErr := fs.Float64("max-error-rate", defaultMaxErrRate, "largest fraction of failed profile requests a run may have (0: any failure fails the comparison); the baseline too")
	maxDrop := fs.Float64("max-completed-drop", report.DefaultMaxCompletedDropPct, "exit 1 when a run of the baseline's plan completed more than this many percent fewer requests")
	noHTML := fs.Bool("no-html", false, "do not write "+FileCompareHTML)
	quiet := fs.BoolP("quiet", "q", false, "print only regressions and errors")
	bad := func(err error) int {
		fmt.Fprintln(stderr, OneLine("analyze compare", err))
		return exitBadInput
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(stdout, "%s\n\n%s", CompareUsage, fs.FlagUsages())
			return exitOK
		}
		return bad(ParseError(fs, err))
	}
	if !(*alpha > 0 && *alpha < 1) { // NaN too
		return bad(fmt.Errorf("--alpha %v: want a level between 0 and 1", *alpha))
	}
	if !(*minEffect > 0) || math.IsInf(*minEffect, 0) {
		return bad(fmt.Errorf("--min-effect %v: want a positive finite percentage", *minEffect))
	}
	if !(*maxErr >= 0 && *maxErr <= 1) {
		return bad(fmt.Errorf("--max-error-rate %v: want a fraction between 0 and 1", *maxErr))
	}
	if !(*maxDrop > 0 && *maxDrop <= 100) {
		return bad(fmt.Errorf("--max-completed-drop %v: want a percentage above 0, at most 100", *maxDrop))
	}
	opts := report.CompareOptions{Alpha: *alpha, MinEffectPct: *minEffect, MaxErrorRate: *maxErr, MaxCompletedDropPct: *maxDrop}
	for _, f := range *fail {
		t, err := report.ParseThreshold(f)
		if err != nil {
			return bad(fmt.Errorf("--fail-on-regression: %s", strings.TrimPrefix(err.Error(), "report: ")))
		}
		opts.FailOn = append(opts.FailOn, t)
	}
	dirs, err := compareDirs(fs.Args())
	if err != nil {
		return bad(err)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return bad(fmt.Errorf("--output-dir: %w", err))
	}
	runs := make([]report.Run, 0, len(dirs))
	for _, d := range dirs {
		r, err := analyseForCompare(d, *out)
		if err != nil {
			return bad(err)
		}
		runs = append(runs, r)
	}
	c, err := report.Compare(runs, opts)
	if err != nil {
		return bad(err)
	}
	files := []string{FileCompareJSON}
	if err := writeFile(filepath.Join(*out, FileCompareJSON), func(w io.Writer) error { return report.WriteCompareJSON(w, c) }); err != nil {
		return bad(err)
	}
	if !*noHTML {
		if err := writeFile(filepath.Join(*out, FileCompareHTML), func(w io.Writer) error { return report.WriteCompare(w, c) }); err != nil {
			return bad(err)
		}
		files = append(files, FileCompareHTML)
	}
	if !*quiet {
		printCompare(stdout, c)
		fmt.Fprintf(stdout, "Exports in %s: %s\n", *out, strings.Join(files, ", "))
	}
	for _, r := range c.Regressions {
		fmt.Fprintf(stderr, "analyze compare: REGRESSION: %s\n", r.Reason)
	}
	if len(c.Regressions) > 0 {
		return exitGate
	}
	return exitOK
}

// compareDirs expands the arguments: run directories, or one folder whose subfolders
// holding a run.json are the runs (sorted by name).
func compareDirs(args []string) ([]string, error) {
	if len(args) == 1 {
		if _, err := os.Stat(filepath.Join(args[0], "run.json")); err != nil {
			entries, err := os.ReadDir(args[0])
			if err != nil {
				return nil, fmt.Errorf("%s: %w", args[0], err)
			}
			var dirs []string
			for _, e := range entries {
				d := filepath.Join(args[0], e.Name())
				if _, err := os.Stat(filepath.Join(d, "run.json")); e.IsDir() && err == nil {
					dirs = append(dirs, d)
				}
			}
			slices.Sort(dirs)
			args = dirs
		}
	}
	if len(args) < 2 {
		return nil, fmt.Errorf("want at least two run directories, got %d (%s)", len(args), CompareUsage)
	}
	return args, nil
}

// analyseForCompare analyses one run directory with analyze's defaults, collecting its records.
func analyseForCompare(dir, tmp string) (report.Run, error) {
	recs := &report.Records{}
	s, err := analyze.Analyze(analyze.Options{RunDirs: []string{dir}, LoadTokenizer: loadTokenizer, TempDir: tmp}, recs)
	if err != nil {
		return report.Run{}, fmt.Errorf("%s: %s", dir, strings.TrimPrefix(err.Error(), "analyze: "))
	}
	if err := recs.Close(); err != nil {
		return report.Run{}, fmt.Errorf("%s: %w", dir, err)
	}
	return report.Run{Name: filepath.Base(filepath.Clean(dir)), Summary: s, Records: recs}, nil
}

// printCompare prints the warnings first, then each run's verdict and the differences.
func printCompare(w io.Writer, c *report.ComparePage) {
	for _, x := range c.Warnings {
		fmt.Fprintln(w, "WARNING: "+x)
	}
	for _, r := range c.Runs {
		fmt.Fprintf(w, "Run %s: %s\n", r.Name, r.Verdict)
	}
	fmt.Fprintf(w, "Differences against %s (significant: Mann–Whitney p < %g, bootstrap 95%% CI of the median difference excludes 0, |difference| ≥ %g%%):\n",
		c.Baseline, c.Alpha, c.MinEffectPct)
	switch {
	case len(c.Metrics) == 0 && c.Runs[0].Completed == 0:
		fmt.Fprintf(w, "  none: the baseline %s has no successful request to compare with\n", c.Baseline)
	case len(c.Metrics) == 0:
		fmt.Fprintf(w, "  none: the baseline %s has no per-request metric that is compared (%s)\n", c.Baseline, strings.Join(report.CompareTags(), ", "))
	}
	for _, m := range c.Metrics {
		compared := map[int]bool{}
		for _, d := range m.Diffs {
			compared[d.Run] = true
		}
		for i := 1; i < len(c.Runs); i++ {
			if !compared[i] {
				fmt.Fprintf(w, "  %s (%s) %s: not compared: no successful request of the run has a value\n", m.Tag, m.Unit, c.Runs[i].Name)
			}
		}
		for _, d := range m.Diffs {
			verdict := "not significant"
			switch {
			case d.Regression:
				verdict = "SIGNIFICANT, REGRESSION"
			case d.Significant:
				verdict = "SIGNIFICANT"
			}
			fmt.Fprintf(w, "  %s (%s) %s: p50 %.4g -> %.4g (%+.2f%%, CI [%.4g, %.4g]), p99 %.4g -> %.4g (%+.2f%%), p = %.3g: %s\n",
				m.Tag, m.Unit, c.Runs[d.Run].Name, float64(m.Runs[0].P50), float64(m.Runs[d.Run].P50), float64(d.MedianDiffPct),
				float64(d.MedianCI[0]), float64(d.MedianCI[1]), float64(m.Runs[0].P99), float64(m.Runs[d.Run].P99),
				float64(d.P99DiffPct), float64(d.PValue), verdict)
		}
	}
	if c.Sweep != nil {
		fmt.Fprintf(w, "Sweep over %s: %d points (compare.html draws TTFT against throughput and the Pareto)\n", c.Sweep.Parameter, len(c.Sweep.Points))
	}
}
