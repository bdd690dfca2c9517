package report

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/analyze/output"
)

// The browser tests open the pages in headless Chromium (Debian's chromium package) with
// the network disabled. Outside CI they skip when chromium is missing; in CI (CI=true) a
// missing browser fails them. LLMBENCH_SCREENSHOTS=DIR also saves each page as a PNG there
// (docs/report-run.png and docs/report-compare.png are made so).

// browserTimeout bounds each page on a loaded 2-core machine; nothing asserts a duration.
const browserTimeout = 120 * time.Second

func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("LLMBENCH_CHROMIUM"), "chromium"} {
		if p == "" {
			continue
		}
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed: CI must run the browser tests (.ci/run installs it with apt-get)")
	}
	t.Skip("chromium is not installed (apt-get install chromium); CI=true makes this a failure")
	return ""
}

// browser starts headless Chromium with a fresh profile and no network.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		// No network: every host resolves to nothing and every proxied request goes nowhere.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"),
		chromedp.Flag("proxy-server", "127.0.0.1:9"),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelA() })
	// Start the browser on a context without a deadline (a deadline would stop it).
	done := make(chan error, 1)
	go func() { _, err := chromedp.Run(ctx, chromedp.Evaluate[int](`1 + 1`)); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("start chromium: %v", err)
		}
	case <-time.After(browserTimeout):
		t.Fatal("chromium did not start")
	}
	return ctx
}

// pageResult is what a page did in the browser.
type pageResult struct {
	requests []string
	console  []string
	charts   []chartPixels
	verdict  string
	readyMs  float64 // performance.now() when the page had drawn (reported, never asserted)
	warnings []string
	diffs    []string
	lanes    int // request bars on the sessions swim lane
	png      []byte
}

type chartPixels struct {
	ID      string `json:"id"`
	Canvas  bool   `json:"canvas"`
	Colored int    `json:"colored"`
}

// pixelsJS counts, per chart, the saturated pixels of its canvas: the series' colours,
// not the white background, the grey grid or the black text.
const pixelsJS = `Array.from(document.querySelectorAll("figure.chart")).map(function (f) {
  var cv = f.querySelector("canvas");
  if (!cv) return {id: f.id, canvas: false, colored: 0};
  var d = cv.getContext("2d").getImageData(0, 0, cv.width, cv.height).data, n = 0;
  for (var i = 0; i < d.length; i += 4)
    if (d[i + 3] > 0 && Math.max(d[i], d[i + 1], d[i + 2]) - Math.min(d[i], d[i + 1], d[i + 2]) > 40) n++;
  return {id: f.id, canvas: true, colored: n};
})`

// openPage loads the HTML file in a new tab and inspects it.
func openPage(t *testing.T, bctx context.Context, path string) pageResult {
	t.Helper()
	ctx, cancel := chromedp.NewContext(bctx)
	defer cancel()
	var mu sync.Mutex
	var res pageResult
	if err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			res.requests = append(res.requests, e.Request.URL)
		case *runtime.EventExceptionThrown:
			res.console = append(res.console, "exception: "+e.ExceptionDetails.Text+" "+fmt.Sprint(e.ExceptionDetails.Exception))
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning || e.Type == runtime.ConsoleAPICalledTypeAssert {
				var args []string
				for _, a := range e.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				res.console = append(res.console, "console."+string(e.Type)+": "+strings.Join(args, " "))
			}
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError || e.Entry.Level == log.EntryLevelWarning {
				res.console = append(res.console, "log "+string(e.Entry.Level)+": "+e.Entry.Text+" "+e.Entry.URL)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	url := "file://" + abs
	tctx, tcancel := context.WithTimeout(ctx, browserTimeout)
	defer tcancel()
	// data-ready is "1" once every chart drew, "error" when the page's script threw.
	if err := chromedp.Do(tctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(`body[data-ready]`))); err != nil {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("open %s: %v (console: %q)", path, err, res.console)
	}
	if ready, err := chromedp.Run(tctx, chromedp.Evaluate[string](`document.body.getAttribute("data-ready")`)); err != nil || ready != "1" {
		time.Sleep(100 * time.Millisecond) // let the exception's event arrive (the message only, no timing asserted)
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("open %s: the page's script failed (data-ready %q, %v): %q", path, ready, err, res.console)
	}
	charts, err := chromedp.Run(tctx, chromedp.Evaluate[[]chartPixels](pixelsJS))
	if err != nil {
		t.Fatal(err)
	}
	res.charts = charts
	if res.readyMs, err = chromedp.Run(tctx, chromedp.Evaluate[float64](`Number(document.body.getAttribute("data-ready-ms"))`)); err != nil {
		t.Fatal(err)
	}
	if res.verdict, err = chromedp.Run(tctx, chromedp.Evaluate[string](`(document.getElementById("verdict") || {textContent: ""}).textContent`)); err != nil {
		t.Fatal(err)
	}
	if res.warnings, err = chromedp.Run(tctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#warning-list li")).map(function (e) { return e.textContent; })`)); err != nil {
		t.Fatal(err)
	}
	if res.diffs, err = chromedp.Run(tctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("table.diffs tbody tr")).map(function (e) { return e.textContent; })`)); err != nil {
		t.Fatal(err)
	}
	if res.lanes, err = chromedp.Run(tctx, chromedp.Evaluate[int](`document.querySelectorAll("#sessions svg rect.req").length`)); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("LLMBENCH_SCREENSHOTS") != "" {
		if res.png, err = chromedp.Run(tctx, chromedp.FullScreenshot(100)); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, u := range res.requests {
		if u != url && !strings.HasPrefix(u, "data:") {
			t.Errorf("the page requested %s", u)
		}
	}
	for _, c := range res.console {
		t.Errorf("browser console: %s", c)
	}
	if len(res.charts) == 0 {
		t.Error("the page drew no chart")
	}
	for _, c := range res.charts {
		if !c.Canvas || c.Colored == 0 {
			t.Errorf("chart %s: canvas %v, %d coloured pixels: it drew nothing", c.ID, c.Canvas, c.Colored)
		}
	}
	return res
}

func writeHTML(t *testing.T, name string, write func(*bytes.Buffer) error) string {
	t.Helper()
	var b bytes.Buffer
	if err := write(&b); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func screenshot(t *testing.T, res pageResult, name string) {
	dir := os.Getenv("LLMBENCH_SCREENSHOTS")
	if dir == "" || len(res.png) == 0 {
		return
	}
	if err := os.WriteFile(filepath.Join(dir, name), res.png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBrowserPages opens the run, compare and sweep pages of the fixture runs.
func TestBrowserPages(t *testing.T) {
	bctx := browser(t)
	a := analyseFixture(t, "rate-a", 500*time.Millisecond)
	b := analyseFixture(t, "rate-b", 0)

	t.Run("run", func(t *testing.T) {
		path := writeHTML(t, "report.html", func(w *bytes.Buffer) error {
			return WriteRun(w, RunInput{Summary: a.Summary, Records: a.Records, Gates: fixtureGates})
		})
		res := openPage(t, bctx, path)
		if want := output.VerdictLine(a.Summary); res.verdict != want {
			t.Errorf("verdict on the page %q, analyze says %q", res.verdict, want)
		}
		if len(res.charts) < 12 {
			t.Errorf("%d charts drawn, want every chart of the run (12 or more)", len(res.charts))
		}
		screenshot(t, res, "report-run.png")
	})
	t.Run("sessions", func(t *testing.T) {
		// A graph plan's run: the sessions section draws a bar per request of every agent.
		s := *a.Summary
		t0 := s.StartUnixNs
		ms := int64(1e6)
		s.Sessions = &analyze.SessionSummary{Sessions: 1, Completed: 1, Lanes: []analyze.SessionLane{{Session: 0, Name: "trace_a", Agents: []analyze.AgentSpan{
			{Agent: 0, Name: "trace_a", Depth: 0, Requests: []analyze.Span{{Send: t0, End: t0 + 50*ms, OK: true}, {Send: t0 + 200*ms, End: t0 + 260*ms, OK: true}}},
			{Agent: 1, Name: "agent_1", Depth: 1, Requests: []analyze.Span{{Send: t0 + 60*ms, End: t0 + 150*ms, OK: false}}},
		}}}}
		path := writeHTML(t, "report.html", func(w *bytes.Buffer) error {
			return WriteRun(w, RunInput{Summary: &s, Records: a.Records, Gates: fixtureGates})
		})
		if res := openPage(t, bctx, path); res.lanes != 3 {
			t.Errorf("%d request bars on the swim lane, want 3", res.lanes)
		}
	})
	t.Run("telemetry only", func(t *testing.T) {
		// No records and no metrics: the page must still draw what it has.
		path := writeHTML(t, "report.html", func(w *bytes.Buffer) error { return WriteRun(w, RunInput{Summary: telemetryOnly()}) })
		if res := openPage(t, bctx, path); len(res.charts) != 2 {
			t.Errorf("%d charts, want the GPU and the KV-cache charts", len(res.charts))
		}
	})
	t.Run("compare", func(t *testing.T) {
		c, err := Compare([]Run{a, b}, CompareOptions{})
		if err != nil {
			t.Fatal(err)
		}
		path := writeHTML(t, "compare.html", func(w *bytes.Buffer) error { return WriteCompare(w, c) })
		res := openPage(t, bctx, path)
		found := false
		for _, d := range res.diffs {
			if strings.HasPrefix(d, "time_to_first_token (ms)") && strings.HasSuffix(d, c.Metrics[0].Diffs[0].Finding) &&
				strings.Contains(d, "significant regression: +") {
				found = true
			}
			if exponent.MatchString(d) || strings.Contains(d, "N/A") {
				t.Errorf("a number for machines on the compare page: %q", d)
			}
		}
		if !found {
			t.Errorf("no significant TTFT row on the compare page: %q", res.diffs)
		}
		screenshot(t, res, "report-compare.png")
	})
	t.Run("sweep", func(t *testing.T) {
		runs := []Run{analyseFixture(t, "conc-1", 0), analyseFixture(t, "conc-2", 0), analyseFixture(t, "conc-4", 0)}
		for i := range runs {
			runs[i].Records = nil // the sweep page needs the summaries only
		}
		path := writeHTML(t, "sweep.html", func(w *bytes.Buffer) error { return WriteSweep(w, "", runs, nil) })
		res := openPage(t, bctx, path)
		if len(res.charts) != 2 {
			t.Errorf("%d sweep charts, want 2 (TTFT vs throughput, Pareto)", len(res.charts))
		}
		if len(res.warnings) != 0 {
			t.Errorf("warnings %q: want none (a sweep's plans differ by design, its bodies do not)", res.warnings)
		}
	})
}

// TestBrowserPageFile checks any page, e.g. make demo's:
// LLMBENCH_REPORT_PAGE=$PWD/bin/demo/run/report.html go test ./report -run TestBrowserPageFile
func TestBrowserPageFile(t *testing.T) {
	path := os.Getenv("LLMBENCH_REPORT_PAGE")
	if path == "" {
		t.Skip("LLMBENCH_REPORT_PAGE names no page")
	}
	res := openPage(t, browser(t), path)
	t.Logf("%s: %d charts drew, %d requests (the page itself); ready %.0f ms after navigation start",
		path, len(res.charts), len(res.requests), res.readyMs)
}

// exponent matches a number in exponent form (1.373e-4, 6.1e+09).
var exponent = regexp.MustCompile(`\d[eE][-+]?\d`)
