package mmapds

import (
	"math"
	"path/filepath"
	"testing"
)

// TestOffer checks the offered rate (the plan's own instants, not the nominal rate) and the
// repeated bodies on small plans written record by record.
func TestOffer(t *testing.T) {
	type rec struct {
		send  int64
		body  int // bodies with the same number are one stored body
		isl   uint32
		phase Phase
	}
	tests := []struct {
		name    string
		recs    []rec
		rate    float64
		bodies  int
		repeats int
		reuse   float64
	}{
		// 4 instants over 1.5 s: 3 gaps, 2 req/s whatever the nominal rate was.
		{"distinct, rate", []rec{{0, 0, 10, PhaseProfile}, {500e6, 1, 10, PhaseProfile}, {1e9, 2, 10, PhaseProfile}, {1.5e9, 3, 10, PhaseProfile}}, 2, 4, 0, 0},
		// A body sent in the warmup and again in the profile is a repeat; 3 of 4 profile
		// requests repeat, 30 of 40 tokens.
		{"repeats across phases", []rec{{0, 0, 10, PhaseWarmup}, {1e9, 0, 10, PhaseProfile}, {2e9, 1, 10, PhaseProfile}, {3e9, 1, 10, PhaseProfile}, {4e9, 0, 10, PhaseProfile}}, 1, 2, 3, 0.75},
		// A closed loop has no instants: no rate.
		{"closed loop", []rec{{NoSendOffset, 0, 5, PhaseProfile}, {NoSendOffset, 1, 15, PhaseProfile}, {NoSendOffset, 1, 15, PhaseProfile}}, 0, 2, 1, 15.0 / 35},
		// Later turns without instants: 2 sessions 1 s apart, 2 turns each: 2 req/s.
		{"later turns", []rec{{0, 0, 10, PhaseProfile}, {NoSendOffset, 1, 10, PhaseProfile}, {1e9, 2, 10, PhaseProfile}, {NoSendOffset, 3, 10, PhaseProfile}}, 2, 4, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "p.plan")
			w, err := Create(path)
			if err != nil {
				t.Fatal(err)
			}
			refs := map[int]BodyRef{}
			for i, r := range tt.recs {
				ref, ok := refs[r.body]
				if !ok {
					if ref, err = w.AddBody([]byte{'{', byte('a' + r.body), '}'}); err != nil {
						t.Fatal(err)
					}
					refs[r.body] = ref
				}
				if err := w.AddRef(Record{SendOffsetNs: r.send, DelayNs: -1, Session: uint32(i), ISL: r.isl, Phase: r.phase}, ref); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := w.Close(&Meta{Endpoint: "chat", Paths: []string{"/"}, Method: "POST"}); err != nil {
				t.Fatal(err)
			}
			p, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			o, err := p.Offer()
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(o.Rate()-tt.rate) > 1e-9 || o.Bodies != tt.bodies || o.Repeats != tt.repeats || math.Abs(o.ReuseRatio()-tt.reuse) > 1e-9 {
				t.Errorf("offer %+v: rate %g bodies %d repeats %d reuse %g, want %g %d %d %g", o, o.Rate(), o.Bodies, o.Repeats, o.ReuseRatio(), tt.rate, tt.bodies, tt.repeats, tt.reuse)
			}
		})
	}
}
