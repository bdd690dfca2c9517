package profile

import (
	"errors"
	"fmt"

	"github.com/llmbench/llmbench/adaptive"
	"github.com/llmbench/llmbench/plan"
)

// AdaptivePlan readies the plan of an in-run adaptive scale run (s enabled): one run finds the
// boundary, so a sweep, a search or repeats are refused; the run is sized by time; and a plan
// compiled here (planMode false: o is compiled, not given with --plan) carries the control's
// ceiling, its maximum: o's concurrency, prefill concurrency, request rate or number of users
// (--num-users of a --user-centric-rate plan) is set to it. A
// smaller one given (given(flag)) is refused: the controller could not reach its maximum.
func AdaptivePlan(s adaptive.Settings, so *SweepOptions, planMode bool, o *plan.Options, given func(flag string) bool) error {
	if !s.Enabled {
		return nil
	}
	if so.Search != "" || len(so.Points) > 1 || so.Runs > 1 {
		return errors.New("--adaptive-scale finds the boundary in one run: drop the sweep list, --search or --num-profile-runs (docs/profile.md: adaptive scale, --search or a sweep)")
	}
	if planMode {
		return nil // the shared plan's ceiling is checked when its run starts
	}
	if o.BenchmarkDuration <= 0 {
		return errors.New("--adaptive-scale: give --benchmark-duration: the search, its windows and the sustain run on time")
	}
	ceil := func(flag string, v float64) (float64, error) {
		if given(flag) && v < s.Max {
			return 0, fmt.Errorf("--%s %v is below --adaptive-scale-control's maximum %v: the plan is compiled at the maximum, the controller releases less", flag, v, s.Max)
		}
		return s.Max, nil
	}
	var err error
	var v float64
	switch s.Variable {
	case adaptive.Concurrency:
		v, err = ceil("concurrency", float64(o.Concurrency))
		o.Concurrency = int(v)
	case adaptive.PrefillConcurrency:
		if o.Concurrency <= 0 {
			return errors.New("--adaptive-scale-control prefill_concurrency: give --concurrency too (prefill concurrency caps part of it)")
		}
		v, err = ceil("prefill-concurrency", float64(o.PrefillConcurrency))
		o.PrefillConcurrency = int(v)
	case adaptive.RequestRate:
		v, err = ceil("request-rate", o.RequestRate)
		o.RequestRate = v
	case adaptive.Users:
		if o.UserCentricRate <= 0 {
			return errors.New("--adaptive-scale-control users: give --user-centric-rate too (the users of a user-centric plan are controlled; --num-users is set to the maximum)")
		}
		v, err = ceil("num-users", float64(o.NumUsers))
		o.NumUsers = int(v)
	}
	return err
}
