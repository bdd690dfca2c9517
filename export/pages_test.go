package export

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/report"
)

// pageData reads the data JSON inlined in the page at path.
func pageData(t *testing.T, path string) []byte {
	t.Helper()
	html, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data, err := report.PageData(html)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return data
}

// TestRunPageEqualsJSON: report.html's data holds every result of the run with the values of
// profile_export_aiperf.json's metric blocks (avg, min, max, std, p50, p90, p99; a single
// value as avg): the table's cells and the captions (offered, dispatched, completed) are
// formatted from them, so the page and the export cannot tell two stories.
func TestRunPageEqualsJSON(t *testing.T) {
	dir := copyFixture(t, t.TempDir(), "rate-a", "rate.llmplan")
	var stdout, stderr bytes.Buffer
	if _, code := Run(options(dir, &stdout, &stderr)); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var page struct {
		Metrics []report.MetricValues `json:"metrics"`
	}
	if err := json.Unmarshal(pageData(t, filepath.Join(dir, FileReport)), &page); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, DefaultExportPrefix+SuffixJSON))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, m := range page.Metrics {
		seen[m.Tag] = true
		raw, ok := doc[m.Tag]
		if !ok {
			t.Errorf("%s: on the page, not in the JSON", m.Tag)
			continue
		}
		var block map[string]any
		if err := json.Unmarshal(raw, &block); err != nil {
			t.Errorf("%s: %v", m.Tag, err)
			continue
		}
		if block["unit"] != m.Unit {
			t.Errorf("%s: unit %q on the page, %v in the JSON", m.Tag, m.Unit, block["unit"])
		}
		stats := map[string]report.Number{"avg": m.Avg}
		if !m.Single {
			stats["min"], stats["max"], stats["std"], stats["p50"], stats["p90"], stats["p99"] = m.Min, m.Max, m.Std, m.P50, m.P90, m.P99
		}
		for k, got := range stats {
			want, isNum := block[k].(float64)
			switch {
			case !isNum && !math.IsNaN(float64(got)):
				t.Errorf("%s.%s: page %v, JSON %v", m.Tag, k, got, block[k])
			case isNum && float64(got) != want:
				t.Errorf("%s.%s: page %v, JSON %v", m.Tag, k, got, want)
			}
		}
	}
	for _, tag := range []string{"time_to_first_token", "request_throughput", "output_token_throughput", "offered_request_rate",
		"dispatched_request_rate", "completed_request_rate"} {
		if !seen[tag] {
			t.Errorf("%s: not in the page's data", tag)
		}
	}
}

// TestComparePageEqualsJSON: compare.html's data is compare.json, value for value (the
// runs, the differences and their findings, the regressions, the sweep and its Pareto set).
func TestComparePageEqualsJSON(t *testing.T) {
	root := t.TempDir()
	var dirs []string
	for _, n := range []string{"conc-1", "conc-2", "conc-4"} {
		dirs = append(dirs, copyFixture(t, root, n, n+".llmplan"))
	}
	out := filepath.Join(root, "cmp")
	var stdout, stderr bytes.Buffer
	code := Compare(CompareOptions{Dirs: dirs, OutputDir: out, Compare: report.CompareOptions{MaxErrorRate: 0.2}, LoadTokenizer: builtin,
		Stdout: &stdout, Stderr: &stderr})
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var fromPage, fromJSON any
	if err := json.Unmarshal(pageData(t, filepath.Join(out, FileCompareHTML)), &fromPage); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, FileCompareJSON))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &fromJSON); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromPage, fromJSON) {
		t.Errorf("compare.html's data differs from compare.json")
	}
	var c report.ComparePage
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if c.Sweep == nil || len(c.Sweep.ParetoObjectives) != 2 || len(c.Sweep.Best) == 0 {
		t.Fatalf("sweep %+v: want its Pareto axes and best configurations", c.Sweep)
	}
	for _, m := range c.Metrics {
		for _, d := range m.Diffs {
			if d.Finding == "" {
				t.Errorf("%s run %d: no finding", m.Tag, d.Run)
			}
		}
	}
}

// TestCompareConsoleNamesPareto: the console names the Pareto set compare.json holds.
func TestCompareConsoleNamesPareto(t *testing.T) {
	root := t.TempDir()
	var dirs []string
	for _, n := range []string{"conc-1", "conc-2", "conc-4"} {
		dirs = append(dirs, copyFixture(t, root, n, n+".llmplan"))
	}
	var stdout, stderr bytes.Buffer
	if code := Compare(CompareOptions{Dirs: dirs, OutputDir: filepath.Join(root, "cmp"), NoHTML: true, Compare: report.CompareOptions{MaxErrorRate: 0.2},
		LoadTokenizer: builtin, Stdout: &stdout, Stderr: &stderr}); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(root, "cmp", FileCompareJSON))
	if err != nil {
		t.Fatal(err)
	}
	var c report.ComparePage
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	var front []string
	for _, p := range c.Sweep.Points {
		if p.Pareto {
			front = append(front, p.Name)
		}
	}
	want := "Pareto-optimal on " + strings.Join(c.Sweep.ParetoObjectives, " and ") + ": " + strings.Join(front, ", ") + " "
	if len(front) == 0 || !strings.Contains(stdout.String(), want) {
		t.Errorf("stdout does not name the JSON's Pareto set (%q):\n%s", want, stdout.String())
	}
}
