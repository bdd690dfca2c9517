package analyze

import (
	"math"
	"strings"
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

// TestRepeatedBodiesNote: a run whose plan repeats bodies says so beside the server's
// prefix-cache figure; one whose bodies are all distinct says nothing.
func TestRepeatedBodiesNote(t *testing.T) {
	for _, tt := range []struct {
		bodies int
		want   string
	}{
		{0, ""},
		{10, "Repeated bodies: 30 of the 40 profile requests repeat a body sent before (10 distinct bodies, each sent 4.0 times on average): 75.0% of the profile's prompt tokens"},
	} {
		sc := scenario{n: 40, workers: 2, ttft: 5 * ms, itl: ms, tokens: 4, concurrency: 4, streaming: true, bodies: tt.bodies}
		s, _ := analyseDir(t, Options{}, sc.build(t, t.TempDir()))
		var got string
		for _, n := range s.Notes {
			if strings.HasPrefix(n, "Repeated bodies:") {
				got = n
			}
		}
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) || (got != "" && !strings.Contains(got, "prefix-cache hit counters")) {
			t.Errorf("%d bodies: note %q, want one containing %q and the server's side", tt.bodies, got, tt.want)
		}
	}
}
