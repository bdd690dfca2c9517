package export

import (
	"fmt"
	"github.com/llmbench/llmbench/analyze/servertime"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/internal/errline"
	"github.com/llmbench/llmbench/internal/numfmt"
	"github.com/llmbench/llmbench/report"
	"github.com/llmbench/llmbench/tokenizer"
)

// Files `analyze compare` writes into its output directory (docs/report.md).
const (
	FileCompareHTML = "compare.html"
	FileCompareJSON = "compare.json"
)

// CompareOptions are one comparison of runs.
type CompareOptions struct {
	// Dirs are the run directories; the first is the baseline.
	Dirs []string
	// OutputDir is where compare.json and compare.html go.
	OutputDir string
	// Compare says what is significant and what fails.
	Compare report.CompareOptions
	// Metrics are the metrics each run is analysed with (user metrics are compared too);
	// nil is the built-ins.
	Metrics *analyze.Registry
	// ServerTraces are the server metrics registered in Metrics: each run is joined to its
	// own server_traces.jsonl for them (nil: not compared).
	ServerTraces *servertime.Metrics
	// NoHTML writes no compare.html; Quiet prints only regressions and errors.
	NoHTML, Quiet bool
	// LoadTokenizer loads the tokenizer of a run's plan (docs/tokenizers.md).
	LoadTokenizer func(spec string) (*tokenizer.Tokenizer, error)
	// Stdout takes the comparison, Stderr the regressions and errors, one line each.
	Stdout, Stderr io.Writer
}

// Compare is `analyze compare` once its flags are checked: it analyses each run directory,
// compares the others with the first (the baseline), writes compare.html and compare.json
// and prints the differences. Exit status: ExitOK, ExitGate when a run failed (failed
// requests beyond the error bound, a crash, an interrupted or incomplete run: the baseline
// too), a run of the baseline's plan completed too few requests, or a regression threshold
// is crossed (one line on stderr each), ExitBadInput on bad input (one line on stderr).
func Compare(o CompareOptions) int {
	stdout, stderr := o.Stdout, o.Stderr
	bad := func(err error) int {
		fmt.Fprintln(stderr, errline.Format("analyze compare", err))
		return ExitBadInput
	}
	if err := os.MkdirAll(o.OutputDir, 0o755); err != nil {
		return bad(fmt.Errorf("--output-dir: %w", err))
	}
	load := func(spec string) (analyze.TokenCounter, error) {
		t, err := o.LoadTokenizer(spec)
		if err != nil {
			return nil, err
		}
		return t, nil
	}
	runs := make([]report.Run, 0, len(o.Dirs))
	for _, d := range o.Dirs {
		var join *servertime.Join
		if o.ServerTraces != nil { // each run's own spans (runs are analysed one at a time)
			var err error
			if join, err = servertime.Open([]string{d}, ""); err != nil {
				return bad(err)
			}
			o.ServerTraces.Bind(join)
		}
		r, err := analyseForCompare(d, o.OutputDir, o.Metrics, load)
		if err != nil {
			return bad(err)
		}
		if join != nil {
			r.Summary.ServerTraces = join.Counts()
		}
		runs = append(runs, r)
	}
	c, err := report.Compare(runs, o.Compare)
	if err != nil {
		return bad(err)
	}
	files := []string{FileCompareJSON}
	if err := WriteFileAtomic(filepath.Join(o.OutputDir, FileCompareJSON), func(w io.Writer) error { return report.WriteCompareJSON(w, c) }); err != nil {
		return bad(err)
	}
	if !o.NoHTML {
		if err := WriteFileAtomic(filepath.Join(o.OutputDir, FileCompareHTML), func(w io.Writer) error { return report.WriteCompare(w, c) }); err != nil {
			return bad(err)
		}
		files = append(files, FileCompareHTML)
	}
	if !o.Quiet {
		printCompare(stdout, c)
		fmt.Fprintf(stdout, "Exports in %s: %s\n", o.OutputDir, strings.Join(files, ", "))
	}
	for _, r := range c.Regressions {
		fmt.Fprintf(stderr, "analyze compare: REGRESSION: %s\n", r.Reason)
	}
	if len(c.Regressions) > 0 {
		return ExitGate
	}
	return ExitOK
}

// analyseForCompare analyses one run directory with analyze's defaults and reg's metrics,
// collecting its records.
func analyseForCompare(dir, tmp string, reg *analyze.Registry, load func(string) (analyze.TokenCounter, error)) (report.Run, error) {
	recs := &report.Records{}
	s, err := analyze.Analyze(analyze.Options{RunDirs: []string{dir}, LoadTokenizer: load, TempDir: tmp, Metrics: reg}, recs)
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
			f := numfmt.Format
			fmt.Fprintf(w, "  %s (%s) %s: p50 %s -> %s (CI of the difference [%s, %s]), p99 %s -> %s (%s): %s\n",
				m.Tag, m.Unit, c.Runs[d.Run].Name, f(float64(m.Runs[0].P50)), f(float64(m.Runs[d.Run].P50)),
				f(float64(d.MedianCI[0])), f(float64(d.MedianCI[1])), f(float64(m.Runs[0].P99)), f(float64(m.Runs[d.Run].P99)),
				numfmt.Percent(float64(d.P99DiffPct)), d.Finding)
		}
	}
	if sw := c.Sweep; sw != nil {
		// The Pareto set and the best points as compare.json and compare.html have them.
		var front, best []string
		for _, p := range sw.Points {
			if p.Pareto {
				front = append(front, p.Name)
			}
		}
		for _, b := range sw.Best {
			best = append(best, fmt.Sprintf("%s %s (%s %s %s)", b.Name, b.Point, b.Metric, numfmt.Format(float64(b.Result)), b.Unit))
		}
		if len(front) == 0 {
			front = []string{"none"}
		}
		fmt.Fprintf(w, "Sweep over %s: %d points; Pareto-optimal on %s: %s (compare.html draws TTFT against throughput and the Pareto)\n",
			sw.Parameter, len(sw.Points), strings.Join(sw.ParetoObjectives, " and "), strings.Join(front, ", "))
		if len(best) > 0 {
			fmt.Fprintf(w, "Best: %s\n", strings.Join(best, "; "))
		}
	}
}
