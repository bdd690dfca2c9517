// Package controller is in-run adaptive scale's controller: a replay.Observer in the
// coordinator's process that follows the workers' raw logs as they grow (package logfollow,
// as the live OpenTelemetry export does), computes each finished request's metrics with
// analyze's own per-request code (analyze.RequestAnalyzer), judges assessment windows
// through adaptive/window, searches the control value with Policy (ramp, bisect, sustain)
// and changes it through the run's release gate (replay.RunInfo.Control: the coordinator's
// control message to every worker, which sets replay/schedule's Gate). It writes
// adaptive_scale_events.jsonl as it decides and adaptive_scale_summary.json at the end. It
// never runs on a worker and adds nothing to the workers' hot path.
//
// A window starts when a control value takes effect (the instant the last worker applied
// it) and is judged once it is AssessmentPeriod long and every request sent in it has ended:
// its requests are exactly those sent in it (request_start_ns in [window_start_ns,
// window_end_ns)), all under one control value. A window with fewer than MinCompleted
// requests extends by another period instead of deciding.
//
// It imports adaptive, adaptive/window, analyze, mmapds, rawlog, replay (RunInfo),
// replay/schedule (the gate's variable names) and internal/logfollow.
package controller

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/llmbench/llmbench/adaptive"
	"github.com/llmbench/llmbench/adaptive/window"
	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/internal/logfollow"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay"
	"github.com/llmbench/llmbench/replay/schedule"
)

// Options configure a Controller.
type Options struct {
	Settings adaptive.Settings
	// Criteria are Settings.SLAs resolved (window.Resolve, with the run's user metrics).
	Criteria *window.Criteria
	// Request analyses a finished request (its Endpoint, Tokenizer, Metrics).
	Request analyze.RequestOptions
	// Ceiling is the plan's request rate, for request_rate control (the keep fraction is
	// value/Ceiling); unused otherwise.
	Ceiling float64
	// Notice receives one-line notices (a control that could not be applied); nil discards.
	Notice io.Writer
	// Now is the clock (Unix ns); nil is time.Now.
	Now func() int64
}

// GateOf is the release gate's setting for control value v of s (request_rate: the fraction
// of the plan's arrivals at ceiling; users: the first v users of the plan's user grid).
func GateOf(s *adaptive.Settings, v, ceiling float64) replay.Control {
	switch s.Variable {
	case adaptive.PrefillConcurrency:
		return replay.Control{Variable: schedule.GatePrefill, Value: v}
	case adaptive.RequestRate:
		return replay.Control{Variable: schedule.GateKeep, Value: math.Min(v/ceiling, 1)}
	case adaptive.Users:
		return replay.Control{Variable: schedule.GateUsers, Value: v}
	}
	return replay.Control{Variable: schedule.GateConcurrency, Value: v}
}

// Controller is one run's adaptive scale; it implements replay.Observer. Make one per run.
type Controller struct {
	o      Options
	policy *Policy

	info replay.RunInfo
	ev   *adaptive.EventWriter
	err  error // the first error writing the artifacts

	mu      sync.Mutex
	records []window.Record
	pending map[uint32]int64 // sent and not ended: plan index -> sent (Unix ns)
	stopped bool             // the controller ended the run (failed at the minimum)

	stop, done chan struct{}
	tailDone   chan struct{}
}

// New returns a controller; o.Settings must be checked (with defaults).
func New(o Options) *Controller {
	if o.Now == nil {
		o.Now = func() int64 { return time.Now().UnixNano() }
	}
	return &Controller{o: o, policy: NewPolicy(o.Settings), pending: map[uint32]int64{},
		stop: make(chan struct{}), done: make(chan struct{}), tailDone: make(chan struct{})}
}

// Initial is the release gate's first setting: the control's minimum.
func (c *Controller) Initial() replay.Control {
	return GateOf(&c.o.Settings, c.o.Settings.Min, c.o.Ceiling)
}

// Start begins following the run's logs and judging windows.
func (c *Controller) Start(info replay.RunInfo) {
	c.info = info
	ev, err := adaptive.CreateEvents(info.Dir)
	if err != nil {
		c.err = err
		c.notice(err.Error())
		close(c.tailDone)
		close(c.done)
		return
	}
	c.ev = ev
	go c.tail()
	go c.loop()
}

// Progress is not used: the windows come from the logs.
func (c *Controller) Progress(sent, done, errs int64) {}

// Finish reads the logs to their end, ends the search (incomplete when it had not ended),
// and writes the summary.
func (c *Controller) Finish() {
	close(c.stop)
	<-c.tailDone
	<-c.done
	if c.ev == nil {
		return
	}
	if c.policy.Phase() != "" {
		c.write(c.terminal(adaptive.StatusIncomplete, ReasonRunEnded))
	}
	if err := c.ev.Close(); err != nil && c.err == nil {
		c.err = err
	}
	if err := adaptive.WriteSummary(c.info.Dir, c.policy.Summary()); err != nil && c.err == nil {
		c.err = err
	}
	if c.err != nil {
		c.notice(c.err.Error())
	}
}

// Summary is the search's summary (after Finish: what adaptive_scale_summary.json holds).
func (c *Controller) Summary() adaptive.Summary { return c.policy.Summary() }

// StoppedRun says that the controller ended the run early, as an interruption does: the
// search failed at the minimum (the run's "interrupted" is then its doing, not the user's).
func (c *Controller) StoppedRun() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopped
}

// Err is the first error writing the artifacts.
func (c *Controller) Err() error { return c.err }

func (c *Controller) notice(s string) {
	if c.o.Notice != nil {
		fmt.Fprintln(c.o.Notice, "adaptive scale: "+s)
	}
}

// judgeEvery is how often the loop looks at the window.
const judgeEvery = 100 * time.Millisecond

// loop judges windows until the search ends or the run does.
func (c *Controller) loop() {
	defer close(c.done)
	s := &c.o.Settings
	period := int64(s.AssessmentPeriod)
	drainCap := max(period, int64(5*time.Second))
	start := c.info.StartUnixNs
	ws := start // the first window opens with the run, under the minimum
	we := ws + period
	index := 0
	v := c.policy.Value()
	c.write(adaptive.Event{Event: adaptive.PhaseStarted, Phase: PhaseRamp, ControlVariable: s.Variable, ControlValue: ptr(v)})
	tick := time.NewTicker(judgeEvery)
	defer tick.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-tick.C:
		}
		now := c.o.Now()
		if now < we {
			continue
		}
		if c.inFlightBefore(we) && now < we+drainCap {
			continue // the window's last requests still run
		}
		index++
		recs := c.window(ws, we)
		verdict := c.o.Criteria.JudgeStarted(recs, window.Bounds{StartNs: ws, EndNs: we})
		e := adaptive.Event{Event: adaptive.Window, Phase: c.policy.Phase(), ControlVariable: s.Variable, ControlValue: ptr(v),
			WindowIndex: index, WindowStartNs: ws, WindowEndNs: we, CompletedRequests: verdict.Completed,
			StraddlingRequests: verdict.Straddling, SLAValues: verdict.SLAValues()}
		if verdict.Completed < s.MinCompleted {
			e.Reason = fmt.Sprintf("%d requests, fewer than %d: the window extends", verdict.Completed, s.MinCompleted)
			c.write(e)
			we += period
			continue
		}
		e.Passed, e.BindingSLA = &verdict.Passed, verdict.Binding
		c.write(e)
		margin := math.NaN()
		for _, x := range verdict.Values {
			if x.Criterion.Spelling == verdict.Binding {
				margin = x.Margin
			}
		}
		phase := c.policy.Phase()
		st := c.policy.Judge(verdict.Passed, margin)
		next := we
		if st.Changed {
			g := GateOf(s, st.Next, c.o.Ceiling)
			applied, err := c.info.Control(g.Variable, g.Value)
			if err != nil {
				c.notice(err.Error())
				c.policy.Abandon(adaptive.StatusIncomplete, ReasonControlFailed)
				c.write(c.terminal(adaptive.StatusIncomplete, ReasonControlFailed+": "+err.Error()))
				return
			}
			next = start + applied
			c.write(adaptive.Event{Event: adaptive.Decision, Phase: phase, ControlVariable: s.Variable,
				ControlValueBefore: ptr(v), ControlValueAfter: ptr(st.Next), LastPassingValue: c.policy.LastPass(),
				FirstFailingValue: c.policy.FirstFail(), BindingSLA: verdict.Binding, SLAValues: verdict.SLAValues()})
			v = st.Next
		}
		if st.Boundary {
			c.write(adaptive.Event{Event: adaptive.BoundaryFound, ControlVariable: s.Variable, BoundaryValue: ptr(st.BoundaryValue),
				LastPassingValue: c.policy.LastPass(), FirstFailingValue: c.policy.FirstFail()})
		}
		if st.SustainStarted {
			c.write(adaptive.Event{Event: adaptive.SustainStarted, Phase: PhaseSustain, ControlVariable: s.Variable, ControlValue: ptr(v),
				BoundaryValue: ptr(st.BoundaryValue)})
		}
		if st.Done {
			c.write(c.terminal(st.Status, st.Reason))
			if st.Status == adaptive.StatusFailed && c.info.Stop != nil {
				c.mu.Lock()
				c.stopped = true
				c.mu.Unlock()
				c.info.Stop() // nothing passes at the minimum: the rest of the run would not either
			}
			return
		}
		ws, we = next, next+period
	}
}

// terminal is the search's last event.
func (c *Controller) terminal(status, reason string) adaptive.Event {
	kind := map[string]string{adaptive.StatusComplete: adaptive.Complete, adaptive.StatusFailed: adaptive.Failed}[status]
	if kind == "" {
		kind = adaptive.Incomplete
	}
	sum := c.policy.Summary()
	return adaptive.Event{Event: kind, ControlVariable: c.o.Settings.Variable, ControlValue: sum.FinalValue,
		BoundaryValue: sum.BoundaryValue, LastPassingValue: sum.LastPassingValue, FirstFailingValue: sum.FirstFailingValue, Reason: reason}
}

// write writes e stamped with the time; the first error is kept.
func (c *Controller) write(e adaptive.Event) {
	now := max(c.o.Now(), c.info.StartUnixNs) // Start comes just before the start instant
	e.TimestampUnixNs, e.TimestampNs = now, now-c.info.StartUnixNs
	if err := c.ev.Write(e); err != nil && c.err == nil {
		c.err = err
	}
}

// inFlightBefore says whether a request sent before t (Unix ns) has not ended yet.
func (c *Controller) inFlightBefore(t int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, sent := range c.pending {
		if sent < t {
			return true
		}
	}
	return false
}

// window returns the records that overlap [ws, we), and forgets the ones that ended before
// ws (no later window can need them).
func (c *Controller) window(ws, we int64) []window.Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	keep := c.records[:0]
	var out []window.Record
	for _, r := range c.records {
		if r.EndNs < ws && r.StartNs < ws {
			continue
		}
		keep = append(keep, r)
		if r.StartNs < we {
			out = append(out, r)
		}
	}
	c.records = keep
	return out
}

// tail follows every worker log in the run directory until Finish.
func (c *Controller) tail() {
	defer close(c.tailDone)
	plan, err := mmapds.Open(c.info.PlanPath, mmapds.Options{SkipHash: true})
	if err != nil {
		c.notice(err.Error())
		return
	}
	defer plan.Close()
	var wg sync.WaitGroup
	seen := map[string]bool{}
	scan := func() {
		paths, _ := filepath.Glob(filepath.Join(c.info.Dir, "worker-*.rawlog"))
		sort.Strings(paths)
		for _, p := range paths {
			if !seen[p] {
				seen[p] = true
				wg.Add(1)
				go func() {
					defer wg.Done()
					c.follow(p, plan)
				}()
			}
		}
	}
	tick := time.NewTicker(logfollow.PollEvery)
	defer tick.Stop()
	for stopped := false; !stopped; {
		scan()
		select {
		case <-c.stop:
			stopped = true
			scan()
		case <-tick.C:
		}
	}
	wg.Wait()
}

// follow reads one worker log as it grows: its sends (pending until their record comes)
// and its finished profile requests, analysed.
func (c *Controller) follow(path string, plan *mmapds.Plan) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	r, err := rawlog.NewReader(&logfollow.Reader{F: f, Stop: c.stop}, path)
	if err != nil {
		return
	}
	a, err := analyze.NewRequestAnalyzer(c.o.Request)
	if err != nil {
		c.notice(err.Error())
		return
	}
	base := r.Header().StartUnixNs
	for {
		k, err := r.Next()
		if err != nil {
			return
		}
		switch k {
		case rawlog.KindSent:
			s := r.Sent()
			c.mu.Lock()
			c.pending[s.Index] = base + s.TimeNs
			c.mu.Unlock()
		case rawlog.KindRequest:
			q := r.Request()
			rec, _, err := plan.Record(int(q.Index))
			var wr window.Record
			ok := err == nil && rec.Phase == mmapds.PhaseProfile && q.Outcome != rawlog.OutcomeNotSent && q.WriteStartNs >= 0
			if ok {
				wr = c.o.Criteria.Record(a.Analyze(q, &rec), base+q.WriteStartNs, base+q.EndNs)
			}
			c.mu.Lock()
			delete(c.pending, q.Index)
			if ok {
				c.records = append(c.records, wr)
			}
			c.mu.Unlock()
		}
	}
}
