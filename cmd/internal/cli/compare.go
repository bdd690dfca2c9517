package cli

import (
	"io"

	"github.com/llmbench/llmbench/export"
	"github.com/llmbench/llmbench/report"
)

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
	var s export.CompareSettings
	fs.StringVar(&s.OutputDir, "output-dir", ".", "write "+export.FileCompareHTML+" and "+export.FileCompareJSON+" here")
	fs.StringArrayVar(&s.FailOn, "fail-on-regression", nil, "exit 1 when METRIC[.p99]:PCT, e.g. time_to_first_token:10, got significantly worse by PCT% or more (repeatable)")
	fs.Float64Var(&s.Alpha, "alpha", 0.05, "Mann–Whitney U significance level")
	fs.Float64Var(&s.MinEffectPct, "min-effect", report.DefaultMinEffectPct, "smallest difference of medians, in percent, called significant")
	fs.Float64Var(&s.MaxErrorRate, "max-error-rate", defaultMaxErrRate, "largest fraction of failed profile requests a run may have (0: any failure fails the comparison); the baseline too")
	fs.Float64Var(&s.MaxCompletedDropPct, "max-completed-drop", report.DefaultMaxCompletedDropPct, "exit 1 when a run of the baseline's plan completed more than this many percent fewer requests")
	fs.BoolVar(&s.NoHTML, "no-html", false, "do not write "+export.FileCompareHTML)
	fs.BoolVarP(&s.Quiet, "quiet", "q", false, "print only regressions and errors")
	addUserMetricFlags(fs, &s.Metrics, &s.MetricsFile) // compared like the built-ins
	if code, ok := Parse("analyze compare", fs, args, stderr, Synopsis(stdout, export.CompareUsage, fs)); !ok {
		return code
	}
	o, err := s.Options(fs.Args())
	if err != nil {
		return BadInput(stderr, "analyze compare")(err)
	}
	o.LoadTokenizer, o.Stdout, o.Stderr = openTokenizer, stdout, stderr
	return export.Compare(o)
}
