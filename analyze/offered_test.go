package analyze

import (
	"math"
	"testing"
)

// TestOfferedIsThePlansRate: offered_request_rate is the rate of the plan's own instants
// (what was offered), nominal_request_rate the rate asked for, each under its own name. A
// Poisson plan at a nominal 10 req/s drew 11.2; reading the nominal as offered made the
// dispatched rate look like an overshoot.
func TestOfferedIsThePlansRate(t *testing.T) {
	tests := []struct {
		name             string
		sc               scenario
		offered, nominal float64 // -1: absent
	}{
		{"drawn faster than asked", scenario{n: 40, workers: 2, ttft: 5 * ms, itl: ms, tokens: 4, rate: 40, nominal: 50, streaming: true}, 40, 50},
		{"as asked", scenario{n: 40, workers: 2, ttft: 5 * ms, itl: ms, tokens: 4, rate: 20, nominal: 20, streaming: true}, 20, 20},
		{"closed loop", scenario{n: 40, workers: 2, ttft: 5 * ms, itl: ms, tokens: 4, concurrency: 4, streaming: true}, -1, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := analyseDir(t, Options{}, tt.sc.build(t, t.TempDir()))
			for tag, want := range map[string]float64{"offered_request_rate": tt.offered, "nominal_request_rate": tt.nominal} {
				r, ok := s.Result(tag)
				switch {
				case want < 0 && ok:
					t.Errorf("%s = %v, want absent", tag, r.Value)
				case want >= 0 && !ok:
					t.Errorf("%s absent, want %v", tag, want)
				case ok && math.Abs(r.Value-want) > 1e-6:
					t.Errorf("%s = %v, want %v", tag, r.Value, want)
				}
			}
		})
	}
}
