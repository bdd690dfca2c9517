package plan

import (
	"strings"
	"testing"
)

// TestDistinctPromptsByDefault: without --num-dataset-entries every session has its own
// conversation (warmup and profile alike), so no body repeats; with fewer entries than
// requests the result says how the requests repeat them. AIPerf's default, 100 entries,
// made a 200-request plan send 100 bodies twice each.
func TestDistinctPromptsByDefault(t *testing.T) {
	tests := []struct {
		name        string
		set         func(o *Options)
		bodies      int
		repeats     int
		noteHas     string
		wantRepeats bool
	}{
		{"poisson 200", func(o *Options) { o.RequestRate, o.RequestCount = 10, 200 }, 200, 0, "", false},
		{"closed loop with warmup", func(o *Options) { o.Concurrency, o.RequestCount, o.WarmupRequestCount = 4, 60, 8 }, 68, 0, "", false},
		{"multi-turn sessions", func(o *Options) { o.Concurrency, o.NumSessions, o.ConversationTurnMean = 2, 15, 3 }, 45, 0, "", false},
		{"50 entries", func(o *Options) { o.RequestRate, o.RequestCount, o.NumDatasetEntries = 10, 200, 50 }, 50, 150, "150 of the 200 profile requests repeat a body sent before (50 distinct bodies, each sent 4.0 times", true},
		// A closed loop bounded only by its duration gets distinctPerSlot conversations per
		// second per slot, then they repeat (and the plan says so).
		{"closed loop by duration", func(o *Options) { o.Concurrency, o.BenchmarkDuration = 2, 1 }, 2 * distinctPerSlot, 2*closedLoopPerSlot - 2*distinctPerSlot, "repeat a body sent before", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := testOptions(t)
			o.NumDatasetEntries = 0
			tt.set(&o)
			p, res := compileOpen(t, o)
			if res.Bodies != tt.bodies || res.Offer.Bodies != tt.bodies || res.Offer.Repeats != tt.repeats {
				t.Fatalf("%d records: %d bodies (offer %d), %d repeats; want %d bodies, %d repeats", p.Len(), res.Bodies, res.Offer.Bodies, res.Offer.Repeats, tt.bodies, tt.repeats)
			}
			if (res.RepeatNote != "") != tt.wantRepeats || !strings.Contains(res.RepeatNote, tt.noteHas) {
				t.Errorf("repeat note %q, want one containing %q", res.RepeatNote, tt.noteHas)
			}
			// Deterministic from the seed.
			o2 := o
			o2.Output = o.Output + ".2"
			res2, err := Compile(o2)
			if err != nil {
				t.Fatal(err)
			}
			if res2.Hash != res.Hash {
				t.Error("the same options gave two different plans")
			}
		})
	}
}

// TestDistinctPromptsExact: the conversations drawn while scheduling keep the exact ISL.
func TestDistinctPromptsExact(t *testing.T) {
	o := testOptions(t)
	o.NumDatasetEntries, o.RequestCount, o.ISLMean = 0, 40, 48
	p, _ := compileOpen(t, o)
	for _, r := range records(t, p) {
		if r.ISL != 48 {
			t.Fatalf("record %d: ISL %d, want exactly 48", r.Index, r.ISL)
		}
	}
}
