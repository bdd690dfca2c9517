package report

import (
	"bytes"
	"math"
	"testing"
)

// fixtureControl is a control value over the fixture run rate-a: 2 from its start, 4 after
// 0.5 s, 3 after 1 s; windows ending at 0.5 s (passed), 1 s (failed), 1.2 s (extended) and
// 1.4 s (passed, but the audit disagrees).
func fixtureControl(t0 int64) *Control {
	ms := int64(1e6)
	return &Control{Variable: "concurrency",
		Steps: []ControlStep{{t0, 2}, {t0 + 500*ms, 4}, {t0 + 1000*ms, 3}},
		Windows: []ControlWindow{{EndUnixNs: t0 + 500*ms, Value: 2, Passed: true, Agrees: true}, {EndUnixNs: t0 + 1000*ms, Value: 4, Agrees: true},
			{EndUnixNs: t0 + 1200*ms, Value: 3, Extended: true, Agrees: true}, {EndUnixNs: t0 + 1400*ms, Value: 3, Passed: true}}}
}

// TestControlChart: the control value is a step line to the end of the run, first in the
// load section; each window a point of its kind at its end.
func TestControlChart(t *testing.T) {
	a := analyseFixture(t, "rate-a", 0)
	s := a.Summary
	p := BuildRun(RunInput{Summary: s, Records: a.Records, Control: fixtureControl(s.StartUnixNs)})
	at := -1
	for i, c := range p.Charts {
		if c.Section == secLoad {
			at = i
			break
		}
	}
	if at < 0 || p.Charts[at].ID != "adaptive_control" || !p.Charts[at].Time {
		t.Fatalf("the control chart is not first in %s: %d", secLoad, at)
	}
	c := p.Charts[at]
	labels := []string{}
	for _, s := range c.Series {
		labels = append(labels, s.Label)
	}
	if want := []string{"concurrency", "window passed", "window failed", "window extended", "audit disagrees"}; len(labels) != len(want) || labels[4] != want[4] || labels[0] != want[0] {
		t.Fatalf("series %v, want %v", labels, want)
	}
	// x: 0, 0.5, 1, 1.2, 1.4 and the run's end; the step holds 2, 4, 3, 3.
	x := c.Data[0]
	end := duration(s)
	want := map[float64][6]float64{0: {2, nan, nan, nan, nan}, 0.5: {4, 2, nan, nan, nan}, 1: {3, nan, 4, nan, nan}, 1.2: {nan, nan, nan, 3, nan},
		1.4: {nan, nan, nan, nan, 3}, end: {3, nan, nan, nan, nan}}
	if len(x) != len(want) {
		t.Fatalf("x %v", x)
	}
	for i, xv := range x {
		w, ok := want[math.Round(xv*1e6)/1e6]
		if !ok && math.Abs(xv-end) < 1e-9 {
			w, ok = want[end]
		}
		if !ok {
			t.Fatalf("x %v", x)
		}
		for k := 0; k < 5; k++ {
			if got := c.Data[k+1][i]; !(got == w[k] || math.IsNaN(got) && math.IsNaN(w[k])) {
				t.Errorf("x %v series %s: %v, want %v", xv, labels[k], got, w[k])
			}
		}
	}
	if q := BuildRun(RunInput{Summary: s, Records: a.Records}); len(q.Charts) != len(p.Charts)-1 {
		t.Errorf("a run without adaptive scale has %d charts, with it %d", len(q.Charts), len(p.Charts))
	}
}

var nan = math.NaN()

// TestBrowserControlChart opens a run page with a control chart: every chart draws.
func TestBrowserControlChart(t *testing.T) {
	bctx := browser(t)
	a := analyseFixture(t, "rate-a", 0)
	path := writeHTML(t, "report.html", func(w *bytes.Buffer) error {
		return WriteRun(w, RunInput{Summary: a.Summary, Records: a.Records, Gates: fixtureGates, Control: fixtureControl(a.Summary.StartUnixNs)})
	})
	res := openPage(t, bctx, path)
	found := false
	for _, c := range res.charts {
		found = found || c.ID == "chart-adaptive_control"
	}
	if !found {
		t.Errorf("the control chart was not drawn: %+v", res.charts)
	}
}
