// Package analyzetest holds the fixtures that analyze's tests and those of the packages
// over it (analyze/judge) share, so that each is written once: Registry, the built-in
// metrics plus one user metric. It imports analyze and the standard library's testing; only
// tests import it (analyze's own through the hook in analyze/output_hookup_test.go, since an
// in-package test cannot import a package that imports analyze).
package analyzetest

import (
	"testing"

	"github.com/llmbench/llmbench/analyze"
)

// Registry is the built-ins plus one user metric, "first_gap_ms" (ms): a request's first
// inter-chunk gap, none without one.
func Registry(t testing.TB) *analyze.Registry {
	t.Helper()
	r := analyze.NewRegistry()
	if _, err := r.Register(analyze.UserMetric{Name: "first_gap_ms", Unit: "ms", Description: "the first inter-chunk gap",
		Eval: func(v *analyze.RequestView) (float64, bool) {
			if g := v.GapsNs(); len(g) > 0 {
				return float64(g[0]) / 1e6, true
			}
			return 0, false
		}}); err != nil {
		t.Fatal(err)
	}
	return r
}
