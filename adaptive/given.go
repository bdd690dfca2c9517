package adaptive

import (
	"errors"
	"fmt"

	"github.com/llmbench/llmbench/internal/timespan"
)

// Given are the adaptive-scale options as a command line (or config file) gives them, before
// they are checked: AIPerf's --adaptive-scale-* flags, times in seconds. Settings turns them
// into Settings; its errors name the flag.
type Given struct {
	Enabled bool
	// Control is the compact variable:min,max[:type]; Variable, Min and Max the expanded
	// form, used when Expanded (one of them was given).
	Control       string
	Variable      string
	Min, Max      float64
	Expanded      bool
	SLAs          []string
	PeriodSeconds float64
	// SustainSeconds 0 means no sustain.
	SustainSeconds                           float64
	MinCompleted                             int
	Strategy, StepPolicy                     string
	StepPercent, BaseStep, MaxStepMultiplier float64
	// Others are the names of the other adaptive flags given: without Enabled, the first
	// is refused (it would do nothing).
	Others []string
}

// Settings checks g and returns its Settings (the zero Settings when not enabled).
func (g Given) Settings() (Settings, error) {
	var s Settings
	if !g.Enabled {
		if len(g.Others) > 0 {
			return s, fmt.Errorf("--%s needs --adaptive-scale", g.Others[0])
		}
		return s, nil
	}
	s.Enabled = true
	switch {
	case g.Control != "" && g.Expanded:
		return s, errors.New("--adaptive-scale-control: give the compact form or the expanded --adaptive-control-* flags, not both")
	case g.Control != "":
		if err := s.ParseControl(g.Control); err != nil {
			return s, err
		}
	case g.Expanded:
		s.Variable, s.Min, s.Max = NormalizeVariable(g.Variable), g.Min, g.Max
		s.Integer = s.Variable != RequestRate
	}
	if g.Strategy != RampUntilFail {
		return s, fmt.Errorf("--adaptive-scale-strategy-type %q: want %s", g.Strategy, RampUntilFail)
	}
	slas, err := ParseSLAs(g.SLAs)
	if err != nil {
		return s, fmt.Errorf("--adaptive-scale-sla: %w", err)
	}
	s.SLAs = slas
	if s.AssessmentPeriod, err = timespan.Seconds("adaptive-scale-assessment-period", g.PeriodSeconds, false); err != nil {
		return s, err
	}
	if s.SustainDuration, err = timespan.Seconds("adaptive-sustain-duration", g.SustainSeconds, true); err != nil {
		return s, err
	}
	s.MinCompleted, s.StepPolicy = g.MinCompleted, g.StepPolicy
	s.StepPercent, s.BaseStep, s.MaxStepMultiplier = g.StepPercent, g.BaseStep, g.MaxStepMultiplier
	noSustain := s.SustainDuration == 0
	s.Defaults()
	if noSustain {
		s.SustainDuration = 0 // given as 0: no sustain (Defaults would fill it)
	}
	return s, s.Check()
}
