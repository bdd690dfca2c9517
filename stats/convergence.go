package stats

import (
	"fmt"
	"math"
)

// Convergence modes (AIPerf's --convergence-mode).
const (
	ModeCIWidth = "ci_width" // relative t-interval width at most the threshold
	ModeCV      = "cv"       // coefficient of variation at most the threshold
)

// DefaultThreshold is AIPerf's default --convergence-threshold of a mode: 0.10 for
// ci_width, 0.05 for cv.
func DefaultThreshold(mode string) float64 {
	if mode == ModeCV {
		return 0.05
	}
	return 0.10
}

// MinRunsForConvergence is how many runs AIPerf waits for before it may stop early:
// min(3, planned).
func MinRunsForConvergence(planned int) int { return min(3, planned) }

// Converged reports whether c meets the convergence criterion of mode at threshold, and the
// measured value. Fewer than two values never converge.
func Converged(c Confidence, mode string, threshold float64) (bool, float64, error) {
	var v float64
	switch mode {
	case ModeCIWidth:
		v = c.RelativeCIWidth()
	case ModeCV:
		v = math.Abs(c.CV)
		if c.N < 2 {
			v = math.NaN()
		}
	default:
		return false, 0, fmt.Errorf("convergence mode %q: want %s or %s", mode, ModeCIWidth, ModeCV)
	}
	return v <= threshold, v, nil // NaN compares false
}
