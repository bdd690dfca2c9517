package analyze

// Claim statuses: each part of the benchmark claim is validated, not validated (no
// evidence was given) or failed (the evidence contradicts it).
const (
	StatusValidated    = "validated"
	StatusNotValidated = "not validated"
	StatusFailed       = "failed"
)

// ClaimPart is one of the three things a benchmark result rests on: the load generator,
// the workload shape or the acceptance thresholds.
type ClaimPart struct {
	// Validated is true only when Status is "validated".
	Validated bool
	// Status is StatusValidated, StatusNotValidated or StatusFailed.
	Status string
	// Evidence says, for people, what was checked and what was found.
	Evidence string
	// Figures are the numbers behind the evidence, by name (display units in the name).
	Figures map[string]float64
}

// Claim is the benchmark claim (docs/metrics.md "The benchmark claim"): a result is
// trustworthy only when the generator, the workload shape and the thresholds were each
// validated: Trustworthy = Generator ∧ Shape ∧ Thresholds.
type Claim struct {
	Generator, Shape, Thresholds ClaimPart
	Trustworthy                  bool
	// verdict is the run's own verdict: the schedule's console line (RunVerdict).
	verdict Verdict
}

// NewClaim is the benchmark claim of s from its three parts, judged by analyze/benchclaim:
// it sets s.Claim and returns it. Trustworthy = Generator ∧ Shape ∧ Thresholds.
func NewClaim(s *Summary, generator, shape, thresholds ClaimPart) *Claim {
	c := &Claim{Generator: generator, Shape: shape, Thresholds: thresholds}
	c.Trustworthy = c.Generator.Validated && c.Shape.Validated && c.Thresholds.Validated
	c.verdict = s.Verdict
	s.Claim = c
	return c
}

// NewClaimPart is a claim part of status (StatusValidated, StatusNotValidated,
// StatusFailed) with its evidence and figures (none: an empty map).
func NewClaimPart(status, evidence string, figures map[string]float64) ClaimPart {
	if figures == nil {
		figures = map[string]float64{}
	}
	return ClaimPart{Validated: status == StatusValidated, Status: status, Evidence: evidence, Figures: figures}
}

// RunVerdict is the run's own verdict the claim was made with: the schedule's line among the
// claim's console lines (analyze/output).
func (c *Claim) RunVerdict() Verdict { return c.verdict }
