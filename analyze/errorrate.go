package analyze

// ErrorRateResult is the outcome of the --max-error-rate check.
type ErrorRateResult struct {
	Errors, Total int64
	Rate, Max     float64
	OK            bool
}

// CheckErrorRate compares the run's error rate (failed profile requests, including lost and
// never-sent ones, over all planned profile requests; cancellations the plan asked for are
// not failures) with max. It is the whole run's, whatever --where selected: a selection
// leaves out successful requests only (choose), and they are counted back here.
func CheckErrorRate(s *Summary, max float64) ErrorRateResult {
	r := ErrorRateResult{Errors: s.Counts.GateErrors, Total: s.Counts.Profile + s.Excluded(), Max: max}
	if r.Total > 0 {
		r.Rate = float64(r.Errors) / float64(r.Total)
	}
	r.OK = r.Rate <= max
	return r
}
