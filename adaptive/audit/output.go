package audit

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/internal/pyjson"
)

// BlockKey is the audit's member of the JSON export's llmbench block.
const BlockKey = "adaptive_scale_audit"

// show formats a value for a line: 6 significant digits, "none" for NaN.
func show(v float64) string {
	if math.IsNaN(v) {
		return "none"
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

func tolWords(tol float64) string {
	if tol <= ExactTolerance {
		return "equality: the same requests"
	}
	return "±" + strconv.FormatFloat(tol*100, 'g', -1, 64) + "%"
}

func passWord(ok bool) string {
	if ok {
		return "pass"
	}
	return "fail"
}

func joinWhy(why []string) string { return strings.Join(why, "; ") }

// Disagreeing returns the windows that disagree.
func (rep *Report) Disagreeing() []Window {
	var out []Window
	for _, w := range rep.Windows {
		if !w.Agree {
			out = append(out, w)
		}
	}
	return out
}

// Line is the audit's gate line: "Adaptive audit: PASS (...)" or "... FAIL (...)".
func (rep *Report) Line() string {
	judged, extended := 0, 0
	for _, w := range rep.Windows {
		if w.Extended {
			extended++
		} else {
			judged++
		}
	}
	ext := ""
	if extended > 0 {
		ext = fmt.Sprintf(", %d extended (too few requests) recomputed too", extended)
	}
	if rep.OK {
		return fmt.Sprintf("Adaptive audit: PASS (%d windows recomputed from the raw logs: values and decisions agree%s)", judged, ext)
	}
	var why []string
	if bad := rep.Disagreeing(); len(bad) > 0 {
		idx := make([]string, 0, len(bad))
		for _, w := range bad {
			idx = append(idx, strconv.Itoa(w.Index))
		}
		why = append(why, fmt.Sprintf("%d of %d windows disagree with the raw logs: window %s", len(bad), len(rep.Windows), strings.Join(idx, ", ")))
	}
	why = append(why, rep.Problems...)
	return "Adaptive audit: FAIL (" + strings.Join(why, "; ") + ")"
}

// WriteConsole writes the audit's lines: a header, one line per window (times in seconds
// after zeroUnixNs, the benchmark's start) and the notes. The gate line (Line) is the
// caller's to print with the other gates.
func (rep *Report) WriteConsole(w io.Writer, zeroUnixNs int64) error {
	sec := func(ns int64) string {
		x := float64(ns-zeroUnixNs) / 1e9
		if math.Abs(x) < 0.005 {
			x = 0 // a window that opens with the run, a hair before its first send: not "-0.00"
		}
		return strconv.FormatFloat(x, 'f', 2, 64)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Adaptive scale audit of %s: control %s; SLAs %s; %d windows\n", rep.EventsPath, orNone(rep.ControlVariable),
		orNone(strings.Join(rep.SLAs, ", ")), len(rep.Windows))
	for _, win := range rep.Windows {
		v := win.Verdict
		fmt.Fprintf(&b, "  window %d", win.Index)
		if win.Phase != "" {
			fmt.Fprintf(&b, " %s", win.Phase)
		}
		if win.HasValue {
			fmt.Fprintf(&b, " %s %s", orNone(rep.ControlVariable), show(win.ControlValue))
		}
		fmt.Fprintf(&b, " [%s s, %s s): %d requests (event %d), %d straddling (event %d)", sec(win.StartNs), sec(win.EndNs),
			v.Completed, win.EventCompleted, v.Straddling, win.EventStraddling)
		for _, c := range win.Values {
			fmt.Fprintf(&b, "; %s %s %s (event %s)", c.SLA, show(c.Recomputed), c.Unit, show(c.Event))
		}
		switch {
		case win.Extended:
			b.WriteString("; extended, not judged")
		default:
			fmt.Fprintf(&b, "; %s (event %s)", strings.ToUpper(passWord(v.Passed)), strings.ToUpper(passWord(win.EventPassed)))
		}
		switch {
		case !win.Agree:
			fmt.Fprintf(&b, ": DISAGREES: %s\n", win.Why)
		case win.Borderline:
			b.WriteString(": agrees (borderline: within the tolerance, across the threshold)\n")
		default:
			b.WriteString(": agrees\n")
		}
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// JSON is the audit's block of the JSON export (docs/report.md "Adaptive-scale audit").
func (rep *Report) JSON() *pyjson.Object {
	o := &pyjson.Object{}
	o.Add("passed", rep.OK).Add("events_file", rep.EventsPath).Add("summary_file", rep.SummaryPath).
		Add("control_variable", rep.ControlVariable)
	slas := make([]any, 0, len(rep.SLAs))
	for _, s := range rep.SLAs {
		slas = append(slas, s)
	}
	o.Add("slas", slas).Add("tolerance", pyjson.Float(rep.Tolerance))
	problems := make([]any, 0, len(rep.Problems))
	for _, p := range rep.Problems {
		problems = append(problems, p)
	}
	o.Add("problems", problems)
	steps := make([]any, 0, len(rep.Control))
	for _, s := range rep.Control {
		steps = append(steps, (&pyjson.Object{}).Add("at_unix_ns", s.AtUnixNs).Add("value", pyjson.Float(s.Value)))
	}
	o.Add("control", steps)
	wins := make([]any, 0, len(rep.Windows))
	for _, w := range rep.Windows {
		wo := &pyjson.Object{}
		wo.Add("window_index", w.Index).Add("phase", w.Phase)
		if w.HasValue {
			wo.Add("control_value", pyjson.Float(w.ControlValue))
		} else {
			wo.Add("control_value", nil)
		}
		wo.Add("window_start_ns", w.StartNs).Add("window_end_ns", w.EndNs).
			Add("completed_requests", (&pyjson.Object{}).Add("event", w.EventCompleted).Add("recomputed", w.Verdict.Completed)).
			Add("straddling_requests", (&pyjson.Object{}).Add("event", w.EventStraddling).Add("recomputed", w.Verdict.Straddling)).
			Add("same_records", w.SameRecords)
		vals := &pyjson.Object{}
		for _, c := range w.Values {
			vals.Add(c.SLA, (&pyjson.Object{}).Add("event", pyjson.Float(c.Event)).Add("recomputed", pyjson.Float(c.Recomputed)).
				Add("unit", c.Unit).Add("agree", c.Agree))
		}
		wo.Add("sla_values", vals)
		if w.Extended {
			wo.Add("passed", (&pyjson.Object{}).Add("event", nil).Add("recomputed", w.Verdict.Passed))
		} else {
			wo.Add("passed", (&pyjson.Object{}).Add("event", w.EventPassed).Add("recomputed", w.Verdict.Passed))
		}
		wo.Add("binding_sla", (&pyjson.Object{}).Add("event", w.EventBinding).Add("recomputed", w.Verdict.Binding))
		wo.Add("extended", w.Extended).Add("borderline", w.Borderline).Add("agrees", w.Agree).Add("why", w.Why)
		wins = append(wins, wo)
	}
	o.Add("windows", wins)
	return o
}
