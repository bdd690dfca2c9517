package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/adaptive"
	"github.com/llmbench/llmbench/adaptive/controller"
	"github.com/llmbench/llmbench/adaptive/window"
	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/export"
	"github.com/llmbench/llmbench/internal/helptext"
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
	fs *pflag.FlagSet
	g  adaptive.Given

	// Metrics, when set, gives the run's metric registry (user metrics) the SLAs resolve
	// against; nil: the built-ins.
	Metrics func() (*analyze.Registry, error)
	// last is the controller of the last run Options made (its summary gives the exit status).
	last *controller.Controller
}

func addAdaptiveFlags(fs *pflag.FlagSet) *Adaptive {
	a := &Adaptive{fs: fs}
	fs.BoolVar(&a.g.Enabled, "adaptive-scale", false, "in-run adaptive scale: start the control variable at its minimum, raise it while every assessment window meets every --adaptive-scale-sla, bisect to the boundary and sustain it; writes adaptive_scale_events.jsonl and adaptive_scale_summary.json; exit 1 when it fails at the minimum or the run ends before the sustain (docs/profile.md)")
	fs.StringVar(&a.g.Control, "adaptive-scale-control", "", "with --adaptive-scale, variable:min,max[:type]: concurrency, prefill_concurrency, users (int) or request_rate (float); the plan is compiled at max")
	fs.StringVar(&a.g.Variable, "adaptive-control-variable", "", "with --adaptive-scale, the control variable (the expanded form of --adaptive-scale-control)")
	fs.Float64Var(&a.g.Min, "adaptive-control-min", 0, "with --adaptive-scale, the control's minimum (expanded form)")
	fs.Float64Var(&a.g.Max, "adaptive-control-max", 0, "with --adaptive-scale, the control's maximum (expanded form)")
	fs.StringArrayVar(&a.g.SLAs, "adaptive-scale-sla", nil, "with --adaptive-scale, metric:stat:op:threshold a window must meet (ttft:p95:le:120, error_rate:avg:le:0.01, goodput:avg:ge:5; latencies in ms); repeatable, all must hold")
	fs.Float64Var(&a.g.PeriodSeconds, "adaptive-scale-assessment-period", adaptive.DefaultAssessmentPeriod.Seconds(), "with --adaptive-scale, seconds per assessment window")
	fs.Float64Var(&a.g.SustainSeconds, "adaptive-sustain-duration", adaptive.DefaultSustainDuration.Seconds(), "with --adaptive-scale, seconds the boundary is held once found")
	fs.IntVar(&a.g.MinCompleted, "adaptive-min-completed-requests", adaptive.DefaultMinCompleted, "with --adaptive-scale, the fewest requests a window judges; a window with fewer extends")
	fs.StringVar(&a.g.Strategy, "adaptive-scale-strategy-type", adaptive.RampUntilFail, "with --adaptive-scale, the strategy: ramp_until_fail")
	fs.StringVar(&a.g.StepPolicy, "adaptive-step-policy", adaptive.FixedPercentStep, "with --adaptive-scale, the ramp's step: fixed_percent_step (x(1+percent/100)) or sla_margin (base step times the binding SLA's headroom in tenths, up to the multiplier)")
	fs.Float64Var(&a.g.StepPercent, "adaptive-step-percent", adaptive.DefaultStepPercent, "with --adaptive-step-policy fixed_percent_step, the percent each passing window adds")
	fs.Float64Var(&a.g.BaseStep, "adaptive-base-step", adaptive.DefaultBaseStep, "with --adaptive-step-policy sla_margin, the base step")
	fs.Float64Var(&a.g.MaxStepMultiplier, "adaptive-max-step-multiplier", adaptive.DefaultMaxStepMultiplier, "with --adaptive-step-policy sla_margin, the most base steps one window adds")
	fs.VisitAll(func(f *pflag.Flag) {
		if strings.HasPrefix(f.Name, "adaptive-") {
			SetGroup(fs, helptext.GroupRepeats, f.Name) // beside --search: the other way to find the boundary
		}
	})
	return a
}

// Enabled says --adaptive-scale was given.
func (a *Adaptive) Enabled() bool { return a.g.Enabled }

// Settings are the flags as adaptive.Settings, checked (adaptive.Given.Settings), their
// SLAs resolved against the run's metrics; errors name the flag.
func (a *Adaptive) Settings() (adaptive.Settings, error) {
	g := a.g
	g.Others = nil
	a.fs.VisitAll(func(f *pflag.Flag) {
		if f.Changed && f.Name != "adaptive-scale" && strings.HasPrefix(f.Name, "adaptive-") {
			g.Others = append(g.Others, f.Name)
		}
	})
	g.Expanded = Changed(a.fs, "adaptive-control-variable") || Changed(a.fs, "adaptive-control-min") || Changed(a.fs, "adaptive-control-max")
	s, err := g.Settings()
	if err != nil || !s.Enabled {
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

// Apply makes o's run adaptive when --adaptive-scale is given (controller.Attach): the
// controller observes it and the workers start at the control's minimum.
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
	at := controller.Attach{Settings: s, Criteria: crit, Tokenizer: loadTokenizer, Notice: notice}
	if a.Metrics != nil {
		at.Metrics, _ = a.Metrics()
	}
	a.last, err = at.To(o)
	return err
}

// Exit is the exit status after the run's own code (controller.Controller.ExitCode).
func (a *Adaptive) Exit(code int, w io.Writer, name string) int {
	return a.last.ExitCode(code, w, name)
}

// MetricRegistry is the registry analyze's --metric and --metrics-file give (nil: none), for
// adaptive scale's SLAs on user metrics.
func (a *Analyze) MetricRegistry() (*analyze.Registry, error) {
	reg, _, err := export.UserMetrics(a.s.Metrics, a.s.MetricsFile) // the server-trace metrics have no spans live
	return reg, err
}
