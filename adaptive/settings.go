package adaptive

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Control variables, as AIPerf names them.
const (
	Concurrency        = "concurrency"
	PrefillConcurrency = "prefill_concurrency"
	RequestRate        = "request_rate"
	Users              = "users"
)

// Step policies of the ramp (AIPerf's strategy.step_policy), and its one strategy.
const (
	FixedPercentStep = "fixed_percent_step"
	SLAMargin        = "sla_margin"
	RampUntilFail    = "ramp_until_fail"
)

// Defaults, sized so that a 60 s run ramps from 1 past 16, bisects to the boundary and
// sustains it (docs/profile.md, "Adaptive scale").
const (
	DefaultAssessmentPeriod  = 3 * time.Second
	DefaultSustainDuration   = 9 * time.Second
	DefaultMinCompleted      = 10
	DefaultStepPercent       = 100.0
	DefaultBaseStep          = 1.0
	DefaultMaxStepMultiplier = 4.0
)

// Settings are in-run adaptive scale's options (AIPerf's --adaptive-scale-* flags and config
// v2's adaptive_scale block); the zero value is off.
type Settings struct {
	Enabled bool
	// Variable is the control variable; Min and Max its range (Max is the plan's ceiling:
	// the load the plan is compiled at). Integer says the values are whole (concurrency,
	// prefill_concurrency, users); request_rate is a float.
	Variable string
	Min, Max float64
	Integer  bool
	// SLAs are the bounds every window must meet (at least one).
	SLAs []SLA
	// AssessmentPeriod is a window's length; SustainDuration how long the boundary is held.
	AssessmentPeriod, SustainDuration time.Duration
	// MinCompleted is the fewest requests a window judges; a window with fewer extends.
	MinCompleted int
	// StepPolicy is FixedPercentStep (each passing window multiplies the value by
	// 1+StepPercent/100) or SLAMargin (adds BaseStep times a multiplier that grows with the
	// binding SLA's margin, up to MaxStepMultiplier).
	StepPolicy                               string
	StepPercent, BaseStep, MaxStepMultiplier float64
}

// Defaults fills what is unset.
func (s *Settings) Defaults() {
	if s.AssessmentPeriod == 0 {
		s.AssessmentPeriod = DefaultAssessmentPeriod
	}
	if s.SustainDuration == 0 {
		s.SustainDuration = DefaultSustainDuration
	}
	if s.MinCompleted == 0 {
		s.MinCompleted = DefaultMinCompleted
	}
	if s.StepPolicy == "" {
		s.StepPolicy = FixedPercentStep
	}
	if s.StepPercent == 0 {
		s.StepPercent = DefaultStepPercent
	}
	if s.BaseStep == 0 {
		s.BaseStep = DefaultBaseStep
	}
	if s.MaxStepMultiplier == 0 {
		s.MaxStepMultiplier = DefaultMaxStepMultiplier
	}
}

// ControlError is a fault of one option, named by its AIPerf flag.
type ControlError struct {
	Flag, Msg string
}

func (e *ControlError) Error() string { return "--" + e.Flag + ": " + e.Msg }

func bad(flag, format string, a ...any) error {
	return &ControlError{Flag: flag, Msg: fmt.Sprintf(format, a...)}
}

// Check checks enabled settings (Defaults first); errors name the flag.
func (s *Settings) Check() error {
	if !s.Enabled {
		return nil
	}
	switch s.Variable {
	case Concurrency, PrefillConcurrency, RequestRate, Users:
	case "":
		return bad("adaptive-scale-control", "no control variable: give variable:min,max (concurrency:1,64)")
	default:
		return bad("adaptive-scale-control", "unknown variable %q: want concurrency, prefill_concurrency, request_rate or users", s.Variable)
	}
	if !(s.Min > 0) || !(s.Max >= s.Min) || math.IsInf(s.Max, 0) {
		return bad("adaptive-scale-control", "range %v,%v: want 0 < min <= max", s.Min, s.Max)
	}
	if s.Variable != RequestRate && (s.Min != math.Trunc(s.Min) || s.Max != math.Trunc(s.Max)) {
		return bad("adaptive-scale-control", "%s range %v,%v: must be whole numbers", s.Variable, s.Min, s.Max)
	}
	if len(s.SLAs) == 0 {
		return bad("adaptive-scale-sla", "adaptive scale needs at least one SLA (metric:stat:op:threshold, e.g. ttft:p95:le:120)")
	}
	if s.AssessmentPeriod <= 0 {
		return bad("adaptive-scale-assessment-period", "%v: must be positive", s.AssessmentPeriod)
	}
	if s.SustainDuration < 0 {
		return bad("adaptive-sustain-duration", "%v: must not be negative", s.SustainDuration)
	}
	if s.MinCompleted < 1 {
		return bad("adaptive-min-completed-requests", "%d: must be at least 1", s.MinCompleted)
	}
	switch s.StepPolicy {
	case FixedPercentStep, SLAMargin:
	default:
		return bad("adaptive-step-policy", "%q: want %s or %s", s.StepPolicy, FixedPercentStep, SLAMargin)
	}
	if !(s.StepPercent > 0) {
		return bad("adaptive-step-percent", "%v: must be positive", s.StepPercent)
	}
	if !(s.BaseStep > 0) {
		return bad("adaptive-base-step", "%v: must be positive", s.BaseStep)
	}
	if !(s.MaxStepMultiplier >= 1) {
		return bad("adaptive-max-step-multiplier", "%v: must be at least 1", s.MaxStepMultiplier)
	}
	return nil
}

// ParseControl parses AIPerf's compact --adaptive-scale-control VARIABLE:MIN,MAX[:TYPE]
// (concurrency:1,400:int, request_rate:0.5,20:float) into s's Variable, Min, Max and
// Integer. Variable spellings with dashes are accepted (prefill-concurrency).
func (s *Settings) ParseControl(spec string) error {
	parts := strings.Split(strings.TrimSpace(spec), ":")
	if len(parts) < 2 || len(parts) > 3 {
		return bad("adaptive-scale-control", "%q: want variable:min,max[:type] (concurrency:1,64:int)", spec)
	}
	v := NormalizeVariable(parts[0])
	lo, hi, ok := strings.Cut(parts[1], ",")
	if !ok {
		return bad("adaptive-scale-control", "%q: the range is min,max (1,64)", spec)
	}
	mn, err1 := strconv.ParseFloat(strings.TrimSpace(lo), 64)
	mx, err2 := strconv.ParseFloat(strings.TrimSpace(hi), 64)
	if err1 != nil || err2 != nil {
		return bad("adaptive-scale-control", "%q: min and max must be numbers", spec)
	}
	integer := v != RequestRate
	if len(parts) == 3 {
		switch strings.ToLower(strings.TrimSpace(parts[2])) {
		case "int", "integer":
			integer = true
		case "float":
			integer = false
		default:
			return bad("adaptive-scale-control", "%q: type %q: want int or float", spec, parts[2])
		}
	}
	if integer && v == RequestRate {
		integer = false // a rate is a rate; int only rounds its steps, which it does not need
	}
	if !integer && v != RequestRate && v != "" {
		return bad("adaptive-scale-control", "%q: %s is a whole number: type int", spec, v)
	}
	s.Variable, s.Min, s.Max, s.Integer = v, mn, mx, integer
	return nil
}

// NormalizeVariable is a control variable's canonical spelling (lower case, underscores).
func NormalizeVariable(v string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(v)), "-", "_")
}

// ControlSpec is the compact form of s's control, as ParseControl reads it.
func (s *Settings) ControlSpec() string {
	t := "int"
	if !s.Integer {
		t = "float"
	}
	return s.Variable + ":" + strconv.FormatFloat(s.Min, 'g', -1, 64) + "," + strconv.FormatFloat(s.Max, 'g', -1, 64) + ":" + t
}
