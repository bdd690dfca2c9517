package cli

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/llmbench/llmbench/export"
	"github.com/llmbench/llmbench/report"
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
	out := fs.String("output-dir", ".", "write "+export.FileCompareHTML+" and "+export.FileCompareJSON+" here")
	fail := fs.StringArray("fail-on-regression", nil, "exit 1 when METRIC[.p99]:PCT, e.g. time_to_first_token:10, got significantly worse by PCT% or more (repeatable)")
	alpha := fs.Float64("alpha", 0.05, "Mann–Whitney U significance level")
	minEffect := fs.Float64("min-effect", report.DefaultMinEffectPct, "smallest difference of medians, in percent, called significant")
	maxErr := fs.Float64("max-error-rate", defaultMaxErrRate, "largest fraction of failed profile requests a run may have (0: any failure fails the comparison); the baseline too")
	maxDrop := fs.Float64("max-completed-drop", report.DefaultMaxCompletedDropPct, "exit 1 when a run of the baseline's plan completed more than this many percent fewer requests")
	noHTML := fs.Bool("no-html", false, "do not write "+export.FileCompareHTML)
	quiet := fs.BoolP("quiet", "q", false, "print only regressions and errors")
	var metrics []string
	var metricsFile string
	addUserMetricFlags(fs, &metrics, &metricsFile) // compared like the built-ins
	bad := BadInput(stderr, "analyze compare")
	if code, ok := Parse("analyze compare", fs, args, stderr, Synopsis(stdout, CompareUsage, fs)); !ok {
		return code
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
	reg, traces, err := export.UserMetrics(metrics, metricsFile)
	if err != nil {
		return bad(err)
	}
	opts := report.CompareOptions{Alpha: *alpha, MinEffectPct: *minEffect, MaxErrorRate: *maxErr, MaxCompletedDropPct: *maxDrop}
	for _, f := range *fail {
		t, err := report.ParseThresholdFor(reg, f)
		if err != nil {
			return bad(fmt.Errorf("--fail-on-regression: %s", strings.TrimPrefix(err.Error(), "report: ")))
		}
		opts.FailOn = append(opts.FailOn, t)
	}
	dirs, err := compareDirs(fs.Args())
	if err != nil {
		return bad(err)
	}
	return export.Compare(export.CompareOptions{Dirs: dirs, OutputDir: *out, Compare: opts, Metrics: reg, ServerTraces: traces, NoHTML: *noHTML, Quiet: *quiet,
		LoadTokenizer: openTokenizer, Stdout: stdout, Stderr: stderr})
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
