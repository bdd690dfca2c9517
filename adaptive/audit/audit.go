// Package audit checks an adaptive-scale run's decisions against its raw logs: every
// adaptive_window event of adaptive_scale_events.jsonl is judged again by package
// adaptive/window, from the per-request records analyze's RequestAnalyzer computes from the
// raw logs (the requests sent inside the window's bounds, wherever they ended, on the clock of
// the per-request export's request_start_ns: window.JudgeStarted, as the controller judges),
// under the SLAs the summary names, and each window's values and decision are compared with
// the event's. It also gives the control value over time, for report.html.
//
// The audit only adds failures: a run whose events disagree with its logs fails analyze's
// gate line, and an audit that agrees never passes a run that failed otherwise.
//
// It imports adaptive (the formats, the SLA spec), adaptive/window (the judgement),
// analyze (RequestAnalyzer, the registry, the plan's endpoint), analyze/rundir (the run
// directories and their logs), mmapds, rawlog and internal/pyjson (its JSON block); never
// replay, export or report.
package audit

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/llmbench/llmbench/adaptive"
	"github.com/llmbench/llmbench/adaptive/window"
	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/analyze/rundir"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
)

// DefaultTolerance is the relative difference allowed between an event's value and the
// recomputed one when the controller judged another set of requests than the logs hold in
// the window (its count differs: a request still running, or not yet in the log, when it
// judged): the ±5 % the acceptance allows. When the counts agree the records are the same and the values
// must be equal (ExactTolerance: the same code over the same values, up to the last bits of
// a float written to JSON and read back).
const DefaultTolerance = 0.05

// ExactTolerance is the relative difference allowed when the same records were judged.
const ExactTolerance = 1e-9

// Options configure an audit.
type Options struct {
	// RunDirs are the run directories analysed together (a distributed run's shards).
	RunDirs []string
	// PlanPath overrides the plan run.json names.
	PlanPath string
	// Tokenizer counts output tokens (the analysis's: analyze.Summary.Counter); nil with
	// UseServerTokenCount or an API without tokens.
	Tokenizer           analyze.TokenCounter
	UseServerTokenCount bool
	// Metrics is the analysis's registry (user metrics an SLA may name); nil: built-ins.
	Metrics *analyze.Registry
	// Tolerance is the relative tolerance when the requests judged differ (0: DefaultTolerance).
	Tolerance float64
}

// Find returns the events file of the run directories (the first that holds one: a
// directory as given, then its shards), "" when none does.
func Find(dirs []string) string {
	all := append([]string(nil), dirs...)
	if ex, err := rundir.Expand(dirs); err == nil {
		all = append(all, ex...)
	}
	for _, d := range all {
		p := filepath.Join(d, adaptive.EventsFile)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// Report is an audit's outcome.
type Report struct {
	// EventsPath is the events file audited; SummaryPath the summary beside it ("" when
	// there is none).
	EventsPath, SummaryPath string
	Summary                 *adaptive.Summary
	ControlVariable         string
	// SLAs are the summary's SLAs, as written.
	SLAs      []string
	Tolerance float64
	Windows   []Window
	// Problems are what failed the audit outside a window (no summary, an SLA this analysis
	// cannot compute); Notes what it observed without failing it.
	Problems, Notes []string
	// Control is the control value over time: each change, in order.
	Control []Step
	// OK: every judged window agrees and nothing failed the audit.
	OK bool
}

// Step is the control value from AtUnixNs on.
type Step struct {
	AtUnixNs int64
	Value    float64
}

// Window is one adaptive_window event and its recomputation.
type Window struct {
	Index        int
	Phase        string
	ControlValue float64
	HasValue     bool
	StartNs      int64
	EndNs        int64
	// EventCompleted and EventStraddling are the event's counts; Verdict the recomputation.
	EventCompleted, EventStraddling int
	Verdict                         window.Verdict
	// SameRecords: the event judged as many requests as the logs hold in the window, so
	// the values must be equal (ExactTolerance).
	SameRecords bool
	// Extended: the event decided nothing (too few requests: passed is absent).
	Extended bool
	// Values compares each SLA's value.
	Values []Compared
	// EventPassed is the event's decision; EventBinding its binding SLA.
	EventPassed  bool
	EventBinding string
	// Agree: the values agree within the tolerance and the decision is the recomputed one;
	// Why says what disagrees ("" when nothing). Borderline: the decisions differ only
	// because a value within the tolerance lies on the other side of its threshold.
	Agree      bool
	Borderline bool
	Why        string
}

// Compared is one SLA's value in the event and recomputed.
type Compared struct {
	SLA, Unit                   string
	Event, Recomputed           float64
	EventHas, RecomputedHas     bool
	EventPasses, RecomputedPass bool
	Agree                       bool
}

// Run audits the events file at path (Find) against the raw logs of o.RunDirs. Errors are
// about the inputs (an events or summary file that cannot be read, a run directory or plan
// that cannot be opened); what disagrees is in the report.
func Run(path string, o Options) (*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	events, err := adaptive.ReadEvents(f, path)
	f.Close()
	if err != nil {
		return nil, err
	}
	rep := &Report{EventsPath: path, Tolerance: o.Tolerance}
	if rep.Tolerance <= 0 {
		rep.Tolerance = DefaultTolerance
	}
	if err := rep.readSummary(filepath.Join(filepath.Dir(path), adaptive.SummaryFile)); err != nil {
		return nil, err
	}
	rep.control(events)
	var crit *window.Criteria
	if rep.Summary != nil {
		slas, err := adaptive.ParseSLAs(rep.Summary.SLAs)
		if err == nil {
			crit, err = window.Resolve(slas, o.Metrics)
		}
		if err != nil {
			rep.Problems = append(rep.Problems, fmt.Sprintf("%s: %v: its windows cannot be recomputed", rep.SummaryPath, err))
		}
	}
	if crit != nil {
		records, err := Records(o, crit)
		if err != nil {
			return nil, err
		}
		rep.judge(events, crit, records)
	}
	rep.checkSummary(events)
	rep.OK = len(rep.Problems) == 0
	for _, w := range rep.Windows {
		rep.OK = rep.OK && w.Agree
	}
	return rep, nil
}

// readSummary reads the summary beside the events file; a missing one is a problem (the
// SLAs are unknown), an unreadable one an error.
func (rep *Report) readSummary(path string) error {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		rep.Problems = append(rep.Problems, fmt.Sprintf("no %s beside %s: the SLAs its windows were judged by are unknown (a run that ended before its controller wrote it)", adaptive.SummaryFile, rep.EventsPath))
		return nil
	}
	s, err := adaptive.ReadSummary(path)
	if err != nil {
		return err
	}
	rep.Summary, rep.SummaryPath, rep.SLAs, rep.ControlVariable = &s, path, s.SLAs, s.ControlVariable
	return nil
}

// control takes the control value over time from the events: a phase's start, each
// decision's new value, and each window's value where nothing said it before.
func (rep *Report) control(events []adaptive.Event) {
	add := func(at int64, v *float64) {
		if v == nil || at <= 0 {
			return
		}
		if n := len(rep.Control); n > 0 && rep.Control[n-1].Value == *v {
			return
		}
		rep.Control = append(rep.Control, Step{AtUnixNs: at, Value: *v})
	}
	for _, e := range events {
		if rep.ControlVariable == "" {
			rep.ControlVariable = e.ControlVariable
		}
		switch e.Event {
		case adaptive.PhaseStarted, adaptive.SustainStarted:
			add(e.TimestampUnixNs, e.ControlValue)
		case adaptive.Decision:
			add(e.TimestampUnixNs, e.ControlValueAfter)
		case adaptive.Window:
			add(e.WindowStartNs, e.ControlValue)
		}
	}
}

// Records computes the window records of every profile request the run's logs hold that was
// sent, with analyze's RequestAnalyzer, in log order.
func Records(o Options, crit *window.Criteria) ([]window.Record, error) {
	runs, _, err := rundir.Open(o.RunDirs)
	if err != nil {
		return nil, err
	}
	plan, planPath, err := rundir.OpenPlan(o.PlanPath, runs[0])
	if err != nil {
		return nil, err
	}
	defer plan.Close()
	ep, err := analyze.PlanEndpoint(plan.Meta())
	if err != nil {
		return nil, fmt.Errorf("%s: %v", planPath, err)
	}
	ro := analyze.RequestOptions{Endpoint: ep, Tokenizer: o.Tokenizer, UseServerTokenCount: o.UseServerTokenCount, Metrics: o.Metrics}
	if _, err := analyze.NewRequestAnalyzer(ro); err != nil {
		return nil, err
	}
	// The logs are read in parallel, an analyzer each (as analyze reads them), and their
	// records joined in log order.
	logs, _ := rundir.Logs(runs)
	parts := make([][]window.Record, len(logs))
	errs := make([]error, len(logs))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, l := range logs {
		if l.Telemetry || l.Recovery {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			a, _ := analyze.NewRequestAnalyzer(ro) // checked above
			parts[i], errs[i] = readLog(nil, l.Path, runs[l.Run].Manifest.StartUnixNs, plan, a, crit)
		}()
	}
	wg.Wait()
	var out []window.Record
	for i := range parts {
		if errs[i] != nil {
			return nil, errs[i]
		}
		out = append(out, parts[i]...)
	}
	return out, nil
}

// readLog appends the records of the log at path. A log that cannot be read whole keeps what
// was read before the damage (analyze reports the damage and fails the run).
func readLog(out []window.Record, path string, wall int64, plan *mmapds.Plan, a *analyze.RequestAnalyzer, crit *window.Criteria) ([]window.Record, error) {
	r, err := rawlog.Open(path)
	if err != nil {
		return out, nil // analyze says why the log cannot be read
	}
	defer r.Close()
	for {
		k, err := r.Next()
		if err == io.EOF || err != nil {
			return out, nil
		}
		if k != rawlog.KindRequest {
			continue
		}
		q := r.Request()
		rec, _, err := plan.Record(int(q.Index))
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		if rec.Phase != mmapds.PhaseProfile {
			continue // warmup: before adaptive scale's windows, as the controller leaves it out
		}
		if w, ok := crit.RecordOf(a.Analyze(q, &rec), q, wall); ok {
			out = append(out, w)
		}
	}
}

// judge recomputes each window event.
func (rep *Report) judge(events []adaptive.Event, crit *window.Criteria, records []window.Record) {
	for _, e := range events {
		if e.Event != adaptive.Window {
			continue
		}
		w := Window{Index: e.WindowIndex, Phase: e.Phase, StartNs: e.WindowStartNs, EndNs: e.WindowEndNs,
			EventCompleted: e.CompletedRequests, EventStraddling: e.StraddlingRequests, EventBinding: e.BindingSLA}
		if e.ControlValue != nil {
			w.ControlValue, w.HasValue = *e.ControlValue, true
		}
		if e.WindowEndNs <= e.WindowStartNs {
			w.Why = fmt.Sprintf("window_end_ns %d is not after window_start_ns %d", e.WindowEndNs, e.WindowStartNs)
			rep.Windows = append(rep.Windows, w)
			continue
		}
		w.Verdict = crit.JudgeStarted(records, window.Bounds{StartNs: e.WindowStartNs, EndNs: e.WindowEndNs})
		w.SameRecords = w.Verdict.Completed == e.CompletedRequests
		w.Extended = e.Passed == nil
		if !w.Extended {
			w.EventPassed = *e.Passed
		}
		rep.compare(&w, e)
		rep.Windows = append(rep.Windows, w)
	}
}

// compare fills w's comparison with event e and its agreement.
func (rep *Report) compare(w *Window, e adaptive.Event) {
	tol := rep.Tolerance
	if w.SameRecords {
		tol = ExactTolerance
	}
	var why []string
	valuesAgree, eventSays, borderline := true, true, true
	for _, v := range w.Verdict.Values {
		c := Compared{SLA: v.Criterion.Spelling, Unit: v.Criterion.Unit, Recomputed: v.Value, RecomputedHas: !math.IsNaN(v.Value), RecomputedPass: v.Passed}
		c.Event, c.EventHas = e.SLAValues[c.SLA]
		if !c.EventHas {
			c.Event = math.NaN()
		}
		c.EventPasses = v.Criterion.Holds(c.Event)
		eventSays = eventSays && c.EventPasses
		switch {
		case c.EventHas != c.RecomputedHas:
			why = append(why, fmt.Sprintf("%s: the event has %s, the logs give %s", c.SLA, show(c.Event), show(c.Recomputed)))
		case !c.EventHas || near(c.Event, c.Recomputed, tol):
			c.Agree = true
		default:
			why = append(why, fmt.Sprintf("%s: the event has %s, the logs give %s (beyond %s)", c.SLA, show(c.Event), show(c.Recomputed), tolWords(tol)))
		}
		valuesAgree = valuesAgree && c.Agree
		if c.EventPasses != c.RecomputedPass && !(c.Agree && c.EventHas) {
			borderline = false
		}
		w.Values = append(w.Values, c)
	}
	if w.Extended {
		w.Agree = valuesAgree
		w.Why = joinWhy(why)
		return
	}
	if w.EventPassed != eventSays {
		why = append(why, fmt.Sprintf("the event says %s, but its own values %s", passWord(w.EventPassed), passWord(eventSays)))
	}
	decisionAgrees := w.EventPassed == w.Verdict.Passed
	if !decisionAgrees && valuesAgree && borderline && !w.SameRecords {
		// The controller's requests differ from the logs' and a value within the
		// tolerance crosses its threshold: both decisions are right for what each saw.
		w.Borderline, decisionAgrees = true, true
	}
	if !decisionAgrees {
		why = append(why, fmt.Sprintf("the event says %s, the logs say %s", passWord(w.EventPassed), passWord(w.Verdict.Passed)))
	}
	if w.SameRecords && e.BindingSLA != "" && e.BindingSLA != w.Verdict.Binding {
		why = append(why, fmt.Sprintf("binding SLA %s in the event, %s from the logs", e.BindingSLA, w.Verdict.Binding))
	}
	w.Agree = len(why) == 0
	w.Why = joinWhy(why)
}

// checkSummary checks the summary's tallies against the window events (each judged window
// counted at its control value: the candidates, in the order first tried; the sustain
// windows): the summary must say what its events say. The events' decisions themselves are
// checked against the logs window by window.
func (rep *Report) checkSummary(events []adaptive.Event) {
	s := rep.Summary
	if s == nil {
		return
	}
	var cands []adaptive.Candidate
	sustain, sustainPassed := 0, 0
	for _, e := range events {
		if e.Event != adaptive.Window || e.Passed == nil || e.ControlValue == nil {
			continue
		}
		i := slices.IndexFunc(cands, func(c adaptive.Candidate) bool { return c.Value == *e.ControlValue })
		if i < 0 {
			cands = append(cands, adaptive.Candidate{Value: *e.ControlValue})
			i = len(cands) - 1
		}
		cands[i].Windows++
		if *e.Passed {
			cands[i].WindowsPassed++
		}
		if e.Phase == "sustain" {
			sustain++
			if *e.Passed {
				sustainPassed++
			}
		}
	}
	short := func(c []adaptive.Candidate) string {
		var b strings.Builder
		for i, x := range c {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s: %d of %d passed", show(x.Value), x.WindowsPassed, x.Windows)
		}
		return b.String()
	}
	mine := make([]adaptive.Candidate, len(s.Candidates))
	for i, c := range s.Candidates {
		mine[i] = adaptive.Candidate{Value: c.Value, Windows: c.Windows, WindowsPassed: c.WindowsPassed}
	}
	if !slices.Equal(mine, cands) {
		rep.Problems = append(rep.Problems, fmt.Sprintf("%s: candidates %s, but its window events give %s", rep.SummaryPath, short(mine), short(cands)))
	}
	if s.SustainWindowsTotal != sustain || s.SustainWindowsPassed != sustainPassed {
		rep.Problems = append(rep.Problems, fmt.Sprintf("%s: %d of %d sustain windows passed, but its window events give %d of %d",
			rep.SummaryPath, s.SustainWindowsPassed, s.SustainWindowsTotal, sustainPassed, sustain))
	}
}

// near reports whether a and b differ by at most tol of the larger magnitude.
func near(a, b, tol float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b))
}
