package controller

import (
	"fmt"
	"io"
	"strconv"

	"github.com/llmbench/llmbench/adaptive"
	"github.com/llmbench/llmbench/adaptive/window"
	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/replay"
)

// Attach is what a command needs to make a run adaptive, in one call.
type Attach struct {
	// Settings are checked (adaptive.Settings.Check) and enabled; Criteria their SLAs
	// resolved against the run's metrics (window.Resolve).
	Settings adaptive.Settings
	Criteria *window.Criteria
	// Metrics is the run's user-metric registry (nil: the built-ins only).
	Metrics *analyze.Registry
	// Tokenizer loads the plan's tokenizer for counting output tokens; nil, or an error
	// from it, counts them from the server's usage.
	Tokenizer func(spec string) (analyze.TokenCounter, error)
	// Notice receives the controller's one-line notices; nil discards.
	Notice io.Writer
}

// To makes o's run adaptive: the controller observes it (beside an observer already there)
// and the workers start at the control's minimum. The plan (o.Plan) must carry the
// control's ceiling: the load it releases from. Errors name the flag a user gave.
func (a Attach) To(o *replay.Options) (*Controller, error) {
	s := a.Settings
	p, err := mmapds.Open(o.Plan, mmapds.Options{SkipHash: true})
	if err != nil {
		return nil, err
	}
	defer p.Close()
	m := p.Meta()
	ceiling := 0.0
	switch s.Variable {
	case adaptive.Concurrency:
		ceiling = float64(m.Concurrency)
	case adaptive.PrefillConcurrency:
		ceiling = float64(m.PrefillConcurrency)
	case adaptive.RequestRate:
		ceiling = m.OfferedRate
	case adaptive.Users:
		n, _ := m.UserGrid()
		ceiling = float64(n)
	}
	if ceiling <= 0 {
		return nil, fmt.Errorf("--adaptive-scale-control %s: plan %s has no %s to control (compile it with one, at the control's maximum)", s.Variable, o.Plan, s.Variable)
	}
	if s.Max > ceiling {
		return nil, fmt.Errorf("--adaptive-scale-control %s max %v: plan %s is compiled at %s %v, the most the run can release", s.Variable, s.Max, o.Plan, s.Variable, ceiling)
	}
	if cr, ok := a.Criteria.NeedsStream(); ok && !m.Streaming {
		return nil, fmt.Errorf("--adaptive-scale-sla %s: %s needs a streaming run (--streaming)", cr.String(), cr.Tag)
	}
	ep, err := analyze.PlanEndpoint(m)
	if err != nil {
		return nil, fmt.Errorf("plan %s: %w", o.Plan, err)
	}
	ro := analyze.RequestOptions{Endpoint: ep, UseServerTokenCount: true, Metrics: a.Metrics}
	if v, _ := m.Spec["use-server-token-count"].(bool); !v && ep.ProducesTokens && m.Tokenizer != "" && a.Tokenizer != nil {
		if tok, err := a.Tokenizer(m.Tokenizer); err == nil {
			ro.Tokenizer, ro.UseServerTokenCount = tok, false
		}
	}
	c := New(Options{Settings: s, Criteria: a.Criteria, Request: ro, Ceiling: ceiling, Notice: a.Notice})
	init := c.Initial()
	o.Control = &init
	o.Observer = replay.Observers(o.Observer, c)
	return c, nil
}

// ExitCode is the exit status of an adaptive run after the run's own code: a search that
// failed or did not end exits 1, and a line on w (prefixed with the command's name) says how
// it ended. Codes 2 (nothing ran) and 130 (interrupted by the user) stay. A nil Controller
// (the run was not adaptive) returns code.
func (c *Controller) ExitCode(code int, w io.Writer, name string) int {
	if c == nil {
		return code
	}
	if code == 130 && c.StoppedRun() {
		code = 1 // the controller stopped the run: the search failed, nobody interrupted it
	}
	if code == 2 || code == 130 {
		return code
	}
	sum := c.Summary()
	b := "none"
	if sum.BoundaryValue != nil {
		b = strconv.FormatFloat(*sum.BoundaryValue, 'g', -1, 64)
	}
	fmt.Fprintf(w, "%s: adaptive scale %s (%s): %s boundary %s, %d of %d sustain windows passed\n",
		name, sum.Status, sum.CompletedReason, sum.ControlVariable, b, sum.SustainWindowsPassed, sum.SustainWindowsTotal)
	return max(code, adaptive.ExitCode(sum.Status))
}
