package profile

import (
	"testing"

	"github.com/llmbench/llmbench/analyze/judge"
)

// TestEveryProblemKindMapped: each kind of judge.Health's problems is a sweep kind; an
// unmapped one (usage, #38 item 4) was the zero Kind, which no verdict names.
func TestEveryProblemKindMapped(t *testing.T) {
	for _, k := range []string{judge.ProblemIncomplete, judge.ProblemErrors, judge.ProblemSchedule, judge.ProblemUsage} {
		if kinds[k] == 0 {
			t.Errorf("problem kind %q maps to no sweep kind", k)
		}
	}
}
