package cli

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/adaptive"
	"github.com/llmbench/llmbench/adaptive/controller"
	"github.com/llmbench/llmbench/adaptive/window"
	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/export"
	"github.com/llmbench/llmbench/internal/helptext"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/replay"
)

// adaptiveAliases are AIPerf's other spellings of the adaptive-scale flags.
var adaptiveAliases = map[string]string{
	"adaptive-assessment-period":            "adaptive-scale-assessment-period",
	"adaptive-scale-sustain-duration":       "adaptive-sustain-duration",
	"adaptive-scale-min-completed-requests": "adaptive-min-completed-requests",
	"adaptive-scale-step-policy":            "adaptive-step-policy",
	"adaptive-scale-step-percent":           "adaptive-step-percent",
	"adaptive-scale-base-step":              "adaptive-base-step",
	"adaptive-scale-max-step-multiplier":    "adaptive-max-step-multiplier",
	"adaptive-strategy-type":                "adaptive-scale-strategy-type",
}

func init() {
	for k, v := range adaptiveAliases {
		Aliases[k] = v
	}
}

// Adaptive is AIPerf's in-run adaptive scale flags (profile and replay, through the replay
// flag set): one run that raises the load while every assessment window meets the SLAs,
// finds the boundary and sustains it (package adaptive/controller).
type Adaptive struct {
	fs                             *pflag.FlagSet
	enabled                        *bool
	control, variable              *string
	min, max                       *float64
	slas                           *[]string
	period, sustain                *float64
	minCompleted                   *int
	strategy, policy               *string
	stepPercent, baseStep, maxMult *float64

	// Metrics, when set, gives the run's metric registry (user metrics) the SLAs resolve
	// against; nil: the built-ins.
	Metrics func() (*analyze.Registry, error)
	// last is the controller of the last run Options made (its summary gives the exit status).
	last *controller.Controller
}

func addAdaptiveFlags(fs *pflag.FlagSet) *Adaptive {
	a := &Adaptive{fs: fs}
	a.enabled = fs.Bool("adaptive-scale", false, "in-run adaptive scale: start the control variable at its minimum, raise it while every assessment window meets every --adaptive-scale-sla, bisect to the boundary and sustain it; writes adaptive_scale_events.jsonl and adaptive_scale_summary.json; exit 1 when it fails at the minimum or the run ends before the sustain (docs/profile.md)")
	a.control = fs.String("adaptive-scale-control", "", "with --adaptive-scale, variable:min,max[:type]: concurrency, prefill_concurrency (int) or request_rate (float); the plan is compiled at max")
	a.variable = fs.String("adaptive-control-variable", "", "with --adaptive-scale, the control variable (the expanded form of --adaptive-scale-control)")
	a.min = fs.Float64("adaptive-control-min", 0, "with --adaptive-scale, the control's minimum (expanded form)")
	a.max = fs.Float64("adaptive-control-max", 0, "with --adaptive-scale, the control's maximum (expanded form)")
	a.slas = fs.StringArray("adaptive-scale-sla", nil, "with --adaptive-scale, metric:stat:op:threshold a window must meet (ttft:p95:le:120, error_rate:avg:le:0.01, goodput:avg:ge:5; latencies in ms); repeatable, all must hold")
	a.period = fs.Float64("adaptive-scale-assessment-period", adaptive.DefaultAssessmentPeriod.Seconds(), "with --adaptive-scale, seconds per assessment window")
	a.sustain = fs.Float64("adaptive-sustain-duration", adaptive.DefaultSustainDuration.Seconds(), "with --adaptive-scale, seconds the boundary is held once found")
	a.minCompleted = fs.Int("adaptive-min-completed-requests", adaptive.DefaultMinCompleted, "with --adaptive-scale, the fewest requests a window judges; a window with fewer extends")
	a.strategy = fs.String("adaptive-scale-strategy-type", adaptive.RampUntilFail, "with --adaptive-scale, the strategy: ramp_until_fail")
	a.policy = fs.String("adaptive-step-policy", adaptive.FixedPercentStep, "with --adaptive-scale, the ramp's step: fixed_percent_step (x(1+percent/100)) or sla_margin (base step times the binding SLA's headroom in tenths, up to the multiplier)")
	a.stepPercent = fs.Float64("adaptive-step-percent", adaptive.DefaultStepPercent, "with --adaptive-step-policy fixed_percent_step, the percent each passing window adds")
	a.baseStep = fs.Float64("adaptive-base-step", adaptive.DefaultBaseStep, "with --adaptive-step-policy sla_margin, the base step")
	a.maxMult = fs.Float64("adaptive-max-step-multiplier", adaptive.DefaultMaxStepMultiplier, "with --adaptive-step-policy sla_margin, the most base steps one window adds")
	fs.VisitAll(func(f *pflag.Flag) {
		if strings.HasPrefix(f.Name, "adaptive-") {
			SetGroup(fs, helptext.GroupRepeats, f.Name) // beside --search: the other way to find the boundary
		}
	})
	return a
}

// Enabled says --adaptive-scale was given.
func (a *Adaptive) Enabled() bool { return *a.enabled }

// Settings are the flags as adaptive.Settings, checked; errors name the flag. Without
// --adaptive-scale, any other adaptive flag is refused.
func (a *Adaptive) Settings() (adaptive.Settings, error) {
	var s adaptive.Settings
	if !*a.enabled {
		var err error
		a.fs.VisitAll(func(f *pflag.Flag) {
			if err == nil && f.Changed && f.Name != "adaptive-scale" && strings.HasPrefix(f.Name, "adaptive-") {
				err = fmt.Errorf("--%s needs --adaptive-scale", f.Name)
			}
		})
		return s, err
	}
	s.Enabled = true
	expanded := Changed(a.fs, "adaptive-control-variable") || Changed(a.fs, "adaptive-control-min") || Changed(a.fs, "adaptive-control-max")
	switch {
	case *a.control != "" && expanded:
		return s, errors.New("--adaptive-scale-control: give the compact form or the expanded --adaptive-control-* flags, not both")
	case *a.control != "":
		if err := s.ParseControl(*a.control); err != nil {
			return s, err
		}
	case expanded:
		s.Variable, s.Min, s.Max = adaptive.NormalizeVariable(*a.variable), *a.min, *a.max
		s.Integer = s.Variable != adaptive.RequestRate
	}
	if *a.strategy != adaptive.RampUntilFail {
		return s, fmt.Errorf("--adaptive-scale-strategy-type %q: want %s", *a.strategy, adaptive.RampUntilFail)
	}
	slas, err := adaptive.ParseSLAs(*a.slas)
	if err != nil {
		return s, fmt.Errorf("--adaptive-scale-sla: %w", err)
	}
	s.SLAs = slas
	for _, x := range []struct {
		name string
		v    float64
		d    *time.Duration
	}{{"adaptive-scale-assessment-period", *a.period, &s.AssessmentPeriod}, {"adaptive-sustain-duration", *a.sustain, &s.SustainDuration}} {
		if math.IsNaN(x.v) || x.v < 0 || x.v > 365*24*3600 {
			return s, fmt.Errorf("--%s %v: want seconds, 0 to 365 days", x.name, x.v)
		}
		*x.d = time.Duration(x.v * float64(time.Second))
	}
	if s.AssessmentPeriod == 0 {
		return s, fmt.Errorf("--adaptive-scale-assessment-period 0: must be positive")
	}
	s.MinCompleted, s.StepPolicy = *a.minCompleted, *a.policy
	s.StepPercent, s.BaseStep, s.MaxStepMultiplier = *a.stepPercent, *a.baseStep, *a.maxMult
	if s.SustainDuration == 0 {
		s.SustainDuration = -1 // given as 0: no sustain (Defaults would fill it)
	}
	s.Defaults()
	if s.SustainDuration < 0 {
		s.SustainDuration = 0
	}
	if err := s.Check(); err != nil {
		return s, err
	}
	if _, err := a.criteria(s); err != nil {
		return s, err
	}
	return s, nil
}

// criteria resolves the SLAs against the run's metrics.
func (a *Adaptive) criteria(s adaptive.Settings) (*window.Criteria, error) {
	var reg *analyze.Registry
	if a.Metrics != nil {
		var err error
		if reg, err = a.Metrics(); err != nil {
			return nil, err
		}
	}
	c, err := window.Resolve(s.SLAs, reg)
	if err != nil {
		return nil, fmt.Errorf("--adaptive-scale-sla: %w", err)
	}
	return c, nil
}

// Apply makes o's run adaptive when --adaptive-scale is given: the controller observes it
// (beside an observer already there) and the workers start at the control's minimum. The
// plan (o.Plan) must carry the control's ceiling.
func (a *Adaptive) Apply(o *replay.Options, notice io.Writer) error {
	a.last = nil
	s, err := a.Settings()
	if err != nil || !s.Enabled {
		return err
	}
	crit, err := a.criteria(s)
	if err != nil {
		return err
	}
	p, err := mmapds.Open(o.Plan, mmapds.Options{SkipHash: true})
	if err != nil {
		return err
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
	}
	if ceiling <= 0 {
		return fmt.Errorf("--adaptive-scale-control %s: plan %s has no %s to control (compile it with one, at the control's maximum)", s.Variable, o.Plan, s.Variable)
	}
	if s.Max > ceiling {
		return fmt.Errorf("--adaptive-scale-control %s max %v: plan %s is compiled at %s %v, the most the run can release", s.Variable, s.Max, o.Plan, s.Variable, ceiling)
	}
	if cr, ok := crit.NeedsStream(); ok && !m.Streaming {
		return fmt.Errorf("--adaptive-scale-sla %s: %s needs a streaming run (--streaming)", cr.String(), cr.Tag)
	}
	ep, err := analyze.PlanEndpoint(m)
	if err != nil {
		return fmt.Errorf("plan %s: %w", o.Plan, err)
	}
	ro := analyze.RequestOptions{Endpoint: ep, UseServerTokenCount: true}
	if v, _ := m.Spec["use-server-token-count"].(bool); !v && ep.ProducesTokens && m.Tokenizer != "" {
		if tok, err := loadTokenizer(m.Tokenizer); err == nil {
			ro.Tokenizer, ro.UseServerTokenCount = tok, false
		}
	}
	if a.Metrics != nil {
		ro.Metrics, _ = a.Metrics()
	}
	c := controller.New(controller.Options{Settings: s, Criteria: crit, Request: ro, Ceiling: ceiling, Notice: notice})
	init := c.Initial()
	o.Control = &init
	o.Observer = replay.Observers(o.Observer, c)
	a.last = c
	return nil
}

// Exit is the exit status of an adaptive run after the run's own code: a search that failed
// or did not end exits 1, and a line on w says how it ended. Codes 2 (nothing ran) and 130
// (interrupted by the user) stay.
func (a *Adaptive) Exit(code int, w io.Writer, name string) int {
	sum, ok := a.Status()
	if ok && code == 130 && a.last.StoppedRun() {
		code = 1 // the controller stopped the run: the search failed, nobody interrupted it
	}
	if !ok || code == 2 || code == 130 {
		return code
	}
	b := "none"
	if sum.BoundaryValue != nil {
		b = strconv.FormatFloat(*sum.BoundaryValue, 'g', -1, 64)
	}
	fmt.Fprintf(w, "%s: adaptive scale %s (%s): %s boundary %s, %d of %d sustain windows passed\n",
		name, sum.Status, sum.CompletedReason, sum.ControlVariable, b, sum.SustainWindowsPassed, sum.SustainWindowsTotal)
	return max(code, adaptive.ExitCode(sum.Status))
}

// Status is the adaptive search's status after the last run (complete, failed,
// incomplete), and whether the run was adaptive.
func (a *Adaptive) Status() (adaptive.Summary, bool) {
	if a == nil || a.last == nil {
		return adaptive.Summary{}, false
	}
	return a.last.Summary(), true
}

// MetricRegistry is the registry analyze's --metric and --metrics-file give (nil: none), for
// adaptive scale's SLAs on user metrics.
func (a *Analyze) MetricRegistry() (*analyze.Registry, error) {
	reg, _, err := export.UserMetrics(a.s.Metrics, a.s.MetricsFile) // the server-trace metrics have no spans live
	return reg, err
}
