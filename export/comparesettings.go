package export

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/llmbench/llmbench/report"
)

// CompareUsage is the synopsis of `analyze compare`.
const CompareUsage = "usage: analyze compare [flags] RUN_A RUN_B [RUN...] | DIR_OF_RUNS"

// CompareSettings are `analyze compare`'s options as given (the command's flags, named in
// the errors), before they are checked and turned into CompareOptions.
type CompareSettings struct {
	OutputDir string
	// FailOn are the --fail-on-regression thresholds, METRIC[.STAT]:PCT.
	FailOn []string
	// Alpha, MinEffectPct, MaxErrorRate and MaxCompletedDropPct are report.CompareOptions'.
	Alpha, MinEffectPct, MaxErrorRate, MaxCompletedDropPct float64
	NoHTML, Quiet                                          bool
	// Metrics and MetricsFile are the user metrics (--metric, --metrics-file), compared like
	// the built-ins.
	Metrics     []string
	MetricsFile string
}

// Options checks s, in the command line's order, and makes the comparison of args: run
// directories, or one folder of them (CompareDirs). The caller sets what comes from the
// process: LoadTokenizer, Stdout and Stderr.
func (s CompareSettings) Options(args []string) (CompareOptions, error) {
	switch {
	case !(s.Alpha > 0 && s.Alpha < 1): // NaN too
		return CompareOptions{}, fmt.Errorf("--alpha %v: want a level between 0 and 1", s.Alpha)
	case !(s.MinEffectPct > 0) || math.IsInf(s.MinEffectPct, 0):
		return CompareOptions{}, fmt.Errorf("--min-effect %v: want a positive finite percentage", s.MinEffectPct)
	case !(s.MaxErrorRate >= 0 && s.MaxErrorRate <= 1):
		return CompareOptions{}, fmt.Errorf("--max-error-rate %v: want a fraction between 0 and 1", s.MaxErrorRate)
	case !(s.MaxCompletedDropPct > 0 && s.MaxCompletedDropPct <= 100):
		return CompareOptions{}, fmt.Errorf("--max-completed-drop %v: want a percentage above 0, at most 100", s.MaxCompletedDropPct)
	}
	reg, traces, err := UserMetrics(s.Metrics, s.MetricsFile)
	if err != nil {
		return CompareOptions{}, err
	}
	o := CompareOptions{OutputDir: s.OutputDir, Metrics: reg, ServerTraces: traces, NoHTML: s.NoHTML, Quiet: s.Quiet,
		Compare: report.CompareOptions{Alpha: s.Alpha, MinEffectPct: s.MinEffectPct, MaxErrorRate: s.MaxErrorRate, MaxCompletedDropPct: s.MaxCompletedDropPct}}
	for _, f := range s.FailOn {
		t, err := report.ParseThresholdFor(reg, f)
		if err != nil {
			return CompareOptions{}, fmt.Errorf("--fail-on-regression: %s", strings.TrimPrefix(err.Error(), "report: "))
		}
		o.Compare.FailOn = append(o.Compare.FailOn, t)
	}
	if o.Dirs, err = CompareDirs(args); err != nil {
		return CompareOptions{}, err
	}
	return o, nil
}

// CompareDirs expands the arguments of `analyze compare`: run directories, or one folder
// whose subfolders holding a run.json are the runs (sorted by name).
func CompareDirs(args []string) ([]string, error) {
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
