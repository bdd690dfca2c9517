package export

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/metricexpr"
)

// TestSelectionLeavesRunExports: an analysis with --where, --group-by or --metric and no
// --output-dir writes into RUN_DIR/selections/<slug>, and the run's own exports and
// report.html stay byte for byte as the full analysis wrote them.
func TestSelectionLeavesRunExports(t *testing.T) {
	dir := copyFixture(t, t.TempDir(), "rate-a", "rate.llmplan")
	var stdout, stderr bytes.Buffer
	if _, code := Run(options(dir, &stdout, &stderr)); code != ExitOK {
		t.Fatalf("full analysis: exit %d: %s", code, stderr.String())
	}
	own := []string{DefaultExportPrefix + SuffixJSON, DefaultExportPrefix + SuffixCSV, DefaultExportPrefix + SuffixRecords, FileReport}
	before := map[string][]byte{}
	for _, f := range own {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		before[f] = b
	}
	reg := analyze.NewRegistry()
	spec, err := metricexpr.ParseMetricFlag("twice_ttft = ttft_ms * 2.0")
	if err != nil {
		t.Fatal(err)
	}
	if err := metricexpr.Register(reg, []metricexpr.MetricSpec{spec}); err != nil {
		t.Fatal(err)
	}
	where, err := metricexpr.Where(reg, "isl > 10")
	if err != nil {
		t.Fatal(err)
	}
	group, err := metricexpr.GroupBy(reg, "turn")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		set  func(*analyze.Options)
		want string // the selection folder's readable part
	}{
		{"where", func(o *analyze.Options) { o.Where = where }, "where_isl_gt_10-"},
		{"group-by", func(o *analyze.Options) { o.GroupBy = group }, "by_turn-"},
		{"metric", func(o *analyze.Options) { o.Metrics = reg }, "metric_twice_ttft-"},
		{"all three", func(o *analyze.Options) { o.Where, o.GroupBy, o.Metrics = where, group, reg }, "where_isl_gt_10-by_turn-metric_twice_ttft-"},
	}
	seen := map[string]string{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			o := options(dir, &stdout, &stderr)
			c.set(&o.Analysis)
			if _, code := Run(o); code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			sel := SelectionDir(dir, o.Analysis)
			if !strings.HasPrefix(filepath.Base(sel), c.want) || filepath.Dir(sel) != filepath.Join(dir, SelectionsDir) {
				t.Errorf("selection folder %s, want %s/%s<hash>", sel, filepath.Join(dir, SelectionsDir), c.want)
			}
			if other, dup := seen[sel]; dup {
				t.Errorf("%s and %s share the folder %s", c.name, other, sel)
			}
			seen[sel] = c.name
			for _, f := range own {
				if _, err := os.Stat(filepath.Join(sel, f)); err != nil {
					t.Errorf("the selection's %s: %v", f, err)
				}
				b, err := os.ReadFile(filepath.Join(dir, f))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(b, before[f]) {
					t.Errorf("the run's own %s changed under %s", f, c.name)
				}
			}
			if !strings.Contains(stdout.String(), "Exports in "+sel+":") {
				t.Errorf("stdout does not say where the exports went (%s):\n%s", sel, stdout.String())
			}
		})
	}
}

// TestSelectionDirNames: different selections never share a folder; the same selection
// always finds its own; no selection is the run directory itself.
func TestSelectionDirNames(t *testing.T) {
	reg := analyze.NewRegistry()
	mk := func(expr string) analyze.Options {
		w, err := metricexpr.Where(reg, expr)
		if err != nil {
			t.Fatal(err)
		}
		return analyze.Options{Where: w}
	}
	if d := SelectionDir("r", analyze.Options{}); d != "" {
		t.Errorf("no selection: %q, want \"\" (the run's own exports)", d)
	}
	a, b := SelectionDir("r", mk("isl > 4096")), SelectionDir("r", mk("isl < 4096"))
	if a == b || !strings.Contains(a, "where_isl_gt_4096-") || !strings.Contains(b, "where_isl_lt_4096-") {
		t.Errorf("isl > 4096 → %s, isl < 4096 → %s", a, b)
	}
	if again := SelectionDir("r", mk("isl > 4096")); again != a {
		t.Errorf("the same selection: %s then %s", a, again)
	}
	long := SelectionDir("r", mk(strings.Repeat("isl > 1 && ", 40)+"true"))
	if n := len(filepath.Base(long)); n > maxSlug+9 {
		t.Errorf("folder name of %d bytes: %s", n, long)
	}
}
