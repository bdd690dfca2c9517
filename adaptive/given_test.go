package adaptive

import (
	"strings"
	"testing"
	"time"
)

func TestGivenSettings(t *testing.T) {
	ok := Given{Enabled: true, Control: "concurrency:1,64", SLAs: []string{"ttft:p95:le:120"}, PeriodSeconds: 3,
		SustainSeconds: 9, MinCompleted: 10, Strategy: RampUntilFail, StepPolicy: FixedPercentStep, StepPercent: 100,
		BaseStep: 1, MaxStepMultiplier: 4}
	with := func(f func(*Given)) Given { g := ok; f(&g); return g }
	for _, c := range []struct {
		name string
		g    Given
		err  string // "" = no error
		want func(Settings) bool
	}{
		{"off", Given{}, "", func(s Settings) bool { return !s.Enabled }},
		{"off with another flag", Given{Others: []string{"adaptive-scale-sla"}}, "--adaptive-scale-sla needs --adaptive-scale", nil},
		{"compact", ok, "", func(s Settings) bool {
			return s.Enabled && s.Variable == Concurrency && s.Min == 1 && s.Max == 64 && s.Integer &&
				s.AssessmentPeriod == 3*time.Second && s.SustainDuration == 9*time.Second && len(s.SLAs) == 1
		}},
		{"expanded", with(func(g *Given) { g.Control, g.Expanded, g.Variable, g.Min, g.Max = "", true, "request-rate", 1, 8.5 }), "",
			func(s Settings) bool { return s.Variable == RequestRate && !s.Integer && s.Max == 8.5 }},
		{"both forms", with(func(g *Given) { g.Expanded = true }), "not both", nil},
		{"strategy", with(func(g *Given) { g.Strategy = "bisect" }), "--adaptive-scale-strategy-type", nil},
		{"bad sla", with(func(g *Given) { g.SLAs = []string{"ttft:p95"} }), "--adaptive-scale-sla", nil},
		{"period 0", with(func(g *Given) { g.PeriodSeconds = 0 }), "--adaptive-scale-assessment-period 0", nil},
		{"period negative", with(func(g *Given) { g.PeriodSeconds = -1 }), "--adaptive-scale-assessment-period -1", nil},
		{"no sustain", with(func(g *Given) { g.SustainSeconds = 0 }), "", func(s Settings) bool { return s.SustainDuration == 0 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := c.g.Settings()
			switch {
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Fatalf("error %v, want one containing %q", err, c.err)
			case c.err == "" && err != nil:
				t.Fatal(err)
			case c.want != nil && !c.want(s):
				t.Fatalf("settings %+v", s)
			}
		})
	}
}
