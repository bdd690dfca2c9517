package controller

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/llmbench/llmbench/adaptive"
)

// A synthetic server: a window at value v passes when pass(v, i) (i counts the windows).
func TestPolicy(t *testing.T) {
	for _, tc := range []struct {
		name     string
		s        adaptive.Settings
		pass     func(v float64, i int) bool
		margin   func(v float64) float64
		tried    []float64
		status   string
		reason   string
		boundary float64 // NaN: none
	}{
		{name: "ramp, bisect, sustain", s: settings(adaptive.Concurrency, 1, 64, true),
			pass:  func(v float64, _ int) bool { return v <= 16 },
			tried: []float64{1, 2, 4, 8, 16, 32, 24, 20, 18, 17, 16, 16, 16}, status: adaptive.StatusComplete, reason: ReasonSustained, boundary: 16},
		{name: "boundary between steps", s: settings(adaptive.Concurrency, 2, 40, true),
			pass:  func(v float64, _ int) bool { return v <= 13 },
			tried: []float64{2, 4, 8, 16, 12, 14, 13, 13, 13, 13}, status: adaptive.StatusComplete, reason: ReasonSustained, boundary: 13},
		{name: "fails at the minimum", s: settings(adaptive.Concurrency, 4, 64, true),
			pass:  func(float64, int) bool { return false },
			tried: []float64{4}, status: adaptive.StatusFailed, reason: ReasonFailedAtMin, boundary: math.NaN()},
		{name: "passes at the maximum", s: settings(adaptive.Concurrency, 1, 6, true),
			pass:  func(float64, int) bool { return true },
			tried: []float64{1, 2, 4, 6, 6, 6, 6}, status: adaptive.StatusComplete, reason: ReasonSustained, boundary: 6},
		{name: "sustain fails once: the boundary steps down", s: settings(adaptive.Concurrency, 1, 8, true),
			pass:  func(v float64, i int) bool { return v <= 4 && i != 7 },
			tried: []float64{1, 2, 4, 8, 6, 5, 4, 4, 3, 3, 3}, status: adaptive.StatusComplete, reason: ReasonSustained, boundary: 3},
		{name: "request rate to 5 %", s: settings(adaptive.RequestRate, 1, 100, false),
			pass:   func(v float64, _ int) bool { return v <= 37.3 },
			status: adaptive.StatusComplete, reason: ReasonSustained, boundary: 36},
		{name: "sla margin steps", s: func() adaptive.Settings {
			s := settings(adaptive.Concurrency, 1, 64, true)
			s.StepPolicy, s.BaseStep, s.MaxStepMultiplier = adaptive.SLAMargin, 2, 4
			return s
		}(),
			pass:   func(v float64, _ int) bool { return v <= 20 },
			margin: func(v float64) float64 { return (20 - v) / 20 },
			tried:  []float64{1, 9, 17, 20, 22, 21, 20, 20, 20}, status: adaptive.StatusComplete, reason: ReasonSustained, boundary: 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPolicy(tc.s)
			var tried []float64
			for i := 0; i < 100; i++ {
				v := p.Value()
				tried = append(tried, v)
				m := 0.5
				if tc.margin != nil {
					m = tc.margin(v)
				}
				if st := p.Judge(tc.pass(v, i), m); st.Done {
					if st.Status != tc.status || st.Reason != tc.reason {
						t.Fatalf("done %s (%s), want %s (%s); tried %v", st.Status, st.Reason, tc.status, tc.reason, tried)
					}
					break
				}
			}
			if tc.tried != nil && !slices.Equal(tried, tc.tried) {
				t.Fatalf("tried %v, want %v", tried, tc.tried)
			}
			sum := p.Summary()
			if sum.Status != tc.status {
				t.Fatalf("summary status %s", sum.Status)
			}
			switch {
			case math.IsNaN(tc.boundary):
				if sum.BoundaryValue != nil {
					t.Fatalf("boundary %v, want none", *sum.BoundaryValue)
				}
			case sum.BoundaryValue == nil:
				t.Fatalf("no boundary, want %v", tc.boundary)
			case tc.s.Integer && *sum.BoundaryValue != tc.boundary:
				t.Fatalf("boundary %v, want %v", *sum.BoundaryValue, tc.boundary)
			case !tc.s.Integer && (*sum.BoundaryValue > 37.3 || *sum.BoundaryValue < 37.3*0.95):
				t.Fatalf("boundary %v, want within 5 %% under 37.3", *sum.BoundaryValue)
			}
			if tc.status == adaptive.StatusComplete && sum.SustainWindowsPassed < 3 {
				t.Fatalf("sustain windows passed %d of %d", sum.SustainWindowsPassed, sum.SustainWindowsTotal)
			}
		})
	}
}

// A search the run cut short is incomplete, with what it found so far.
func TestPolicyIncomplete(t *testing.T) {
	p := NewPolicy(settings(adaptive.Concurrency, 1, 64, true))
	p.Judge(true, 1)
	p.Judge(false, -1)
	s := p.Summary()
	if s.Status != adaptive.StatusIncomplete || s.CompletedReason != ReasonRunEnded || *s.LastPassingValue != 1 || *s.FirstFailingValue != 2 {
		t.Fatalf("%+v", s)
	}
	if adaptive.ExitCode(s.Status) != 1 {
		t.Fatal("incomplete exits 0")
	}
}

func settings(v string, lo, hi float64, integer bool) adaptive.Settings {
	sla, _ := adaptive.ParseSLA("ttft:p95:le:120")
	s := adaptive.Settings{Enabled: true, Variable: v, Min: lo, Max: hi, Integer: integer, SLAs: []adaptive.SLA{sla},
		AssessmentPeriod: time.Second, SustainDuration: 3 * time.Second}
	s.Defaults()
	return s
}
