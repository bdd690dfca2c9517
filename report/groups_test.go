package report

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/analyze/output"
	"github.com/llmbench/llmbench/tokenizer"
)

// groupedFixture analyses rate-a grouped by the parity of the session (--group-by's
// Grouping, as metricexpr compiles it) over the requests of a --where selection.
func groupedFixture(t *testing.T) *analyze.Summary {
	t.Helper()
	tok, err := tokenizer.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	s, err := analyze.Analyze(analyze.Options{RunDirs: []string{filepath.Join(fixtureRuns, "rate-a")},
		PlanPath: filepath.Join(fixtureRuns, fixturePlans["rate-a"]), Tokenizer: tok, TempDir: t.TempDir(),
		MaxScheduleLag: time.Millisecond, MaxWorkerCPU: 0.9,
		Where: &analyze.Selection{Expr: "session != 3", Keep: func(v *analyze.RequestView) (bool, bool) { return v.Session() != 3, true }},
		GroupBy: &analyze.Grouping{Expr: "session % 2", Key: func(v *analyze.RequestView) (string, bool) {
			return strconv.Itoa(int(v.Session() % 2)), true
		}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRunPageGroups (issue 27): the run page holds each group's table, the console's rows
// of that group, and says how the requests were selected.
func TestRunPageGroups(t *testing.T) {
	s := groupedFixture(t)
	p := BuildRun(RunInput{Summary: s})
	if len(p.Groups) != 2 || len(s.Groups) != 2 {
		t.Fatalf("%d groups on the page, %d in the summary", len(p.Groups), len(s.Groups))
	}
	if !strings.Contains(p.Selection, "--where session != 3") || !strings.Contains(p.Selection, "--group-by session % 2 (2 groups)") {
		t.Errorf("selection %q", p.Selection)
	}
	for i, g := range p.Groups {
		if g.Name != "session % 2 = "+s.Groups[i].Key || !strings.Contains(g.Line, strconv.FormatInt(s.Groups[i].Requests, 10)+" profile requests") {
			t.Errorf("group %d: %q, %q", i, g.Name, g.Line)
		}
		want := output.GroupConsoleRows(s, &s.Groups[i])
		if len(g.Table) != len(want) || len(want) == 0 {
			t.Fatalf("group %d: %d rows, want %d", i, len(g.Table), len(want))
		}
		for k := range want {
			if strings.Join(g.Table[k].Cells, "|") != strings.Join(want[k].Cells, "|") {
				t.Errorf("group %d row %d: %v, want %v", i, k, g.Table[k].Cells, want[k].Cells)
			}
		}
	}
	if strings.Join(p.Groups[0].Table[0].Cells, "|") == strings.Join(p.Groups[1].Table[0].Cells, "|") {
		t.Errorf("both groups show the same first row %v", p.Groups[0].Table[0].Cells)
	}
}

// TestBrowserGroupSelector: in the browser, the group selector switches the metrics table
// to the chosen group's rows and back.
func TestBrowserGroupSelector(t *testing.T) {
	bctx := browser(t)
	s := groupedFixture(t)
	p := BuildRun(RunInput{Summary: s})
	path := filepath.Join(t.TempDir(), "report.html")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteRun(f, RunInput{Summary: s}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	ctx, cancel := chromedp.NewContext(bctx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, browserTimeout)
	defer cancelT()
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+path), chromedp.WaitVisible(chromedp.CSS(`body[data-ready]`))); err != nil {
		t.Fatal(err)
	}
	eval := func(js string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		return v
	}
	const firstRow = `document.querySelector("table.metrics tbody tr").textContent`
	choose := func(v string) string {
		return `(function(){var s=document.getElementById("group-select");s.value="` + v + `";s.dispatchEvent(new Event("change"));return ""})()`
	}
	all := eval(firstRow)
	eval(choose("1"))
	g1, line := eval(firstRow), eval(`document.getElementById("group-line").textContent`)
	eval(choose("-1"))
	back := eval(firstRow)
	if want := strings.Join(p.Groups[1].Table[0].Cells, ""); g1 != want {
		t.Errorf("group 1's first row %q, want %q", g1, want)
	}
	if want := strings.Join(p.Table[0].Cells, ""); all != want || back != want {
		t.Errorf("all requests' first row %q, then %q; want %q", all, back, want)
	}
	if line != p.Groups[1].Line {
		t.Errorf("group line %q, want %q", line, p.Groups[1].Line)
	}
}
