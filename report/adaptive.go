package report

import (
	"math"

	"github.com/llmbench/llmbench/analyze"
)

// Control is an adaptive-scale run's control value over time (from its events file, as
// package adaptive/audit read it), drawn on the run page beside the latency and throughput
// charts, on their time axis.
type Control struct {
	// Variable is the control variable (concurrency, request_rate, ...).
	Variable string
	// Steps are the value's changes, in order: Value from AtUnixNs on.
	Steps []ControlStep
	// Windows are the assessment windows, each drawn at its end.
	Windows []ControlWindow
}

// ControlStep is the control value from AtUnixNs on.
type ControlStep struct {
	AtUnixNs int64
	Value    float64
}

// ControlWindow is one assessment window: its value, the decision, and whether the audit
// found the decision in agreement with the raw logs.
type ControlWindow struct {
	EndUnixNs int64
	Value     float64
	// Extended: too few requests, nothing decided; else Passed is the decision.
	Extended, Passed, Agrees bool
}

// controlChart draws c: the value as a step line to the end of the run, and each window as
// a point at its end (passed, failed, extended), ringed when the audit disagrees with it.
func controlChart(s *analyze.Summary, c *Control) (Chart, bool) {
	if c == nil || len(c.Steps) == 0 {
		return Chart{}, false
	}
	var sx, sy column
	for _, st := range c.Steps {
		sx, sy = append(sx, sec(s, st.AtUnixNs)), append(sy, st.Value)
	}
	if end := duration(s); end > sx[len(sx)-1] {
		sx, sy = append(sx, end), append(sy, sy[len(sy)-1])
	}
	labels := []string{"window passed", "window failed", "window extended", "audit disagrees"}
	colors := []string{"#2ca02c", "#d62728", "#7f7f7f", "#ff7f0e"}
	xs, ys := []column{sx}, []column{sy}
	series := []Series{{Label: c.Variable, Style: "step"}}
	for k := range labels {
		var x, y column
		for _, w := range c.Windows {
			kind := 1
			switch {
			case !w.Agrees:
				kind = 3
			case w.Extended:
				kind = 2
			case w.Passed:
				kind = 0
			}
			if kind == k {
				x, y = append(x, sec(s, w.EndUnixNs)), append(y, w.Value)
			}
		}
		if len(x) > 0 {
			xs, ys = append(xs, x), append(ys, y)
			series = append(series, Series{Label: labels[k], Style: "points", Color: colors[k]})
		}
	}
	for i := range xs {
		sortByX(xs[i], ys[i])
	}
	return Chart{ID: "adaptive_control", Section: secLoad, Title: "Adaptive scale: " + c.Variable + " over time", Time: true,
		Caption: "The control value the adaptive-scale controller set, and each assessment window at its end: green passed every SLA, red failed one, grey had too few requests; orange marks a window whose values or decision the audit could not recompute from the raw logs (see the gate line).",
		X:       Axis{Label: "time since start (s)"}, Y: Axis{Label: c.Variable}, Series: series, Data: align(xs, ys)}, true
}

// sortByX sorts the points (x, y) by x, keeping the order of equal x (a step drawn at the
// instant of a change).
func sortByX(x, y column) {
	for i := 1; i < len(x); i++ {
		for j := i; j > 0 && (x[j] < x[j-1] || math.IsNaN(x[j-1])); j-- {
			x[j], x[j-1] = x[j-1], x[j]
			y[j], y[j-1] = y[j-1], y[j]
		}
	}
}

// withControl puts the control chart first in the load section (the throughput charts), or
// last when the page has none.
func withControl(charts []Chart, s *analyze.Summary, c *Control) []Chart {
	ch, ok := controlChart(s, c)
	if !ok {
		return charts
	}
	for i, x := range charts {
		if x.Section == secLoad {
			return append(charts[:i], append([]Chart{ch}, charts[i:]...)...)
		}
	}
	return append(charts, ch)
}
