// Package validate is the generator validation (replay --validate, profile
// --validate-generator; docs/metrics.md "Generator validation"): before a run it writes a
// bounded share of the plan as a sub-plan, serves an in-process mock server with known
// TTFT and ITL (package mockllm) on the CPUs the workers leave free, replays the share with
// the run's own options (load, bodies, workers, CPUs) against it, analyses that run, and
// judges the client's errors against the documented tolerances (benchclaim.JudgeGenerator),
// matching its requests with the mock's schedule log for the client's share. The result
// is written into the run directory once the run has locked it (generator_validation.json)
// for the benchmark claim.
//
// It takes options, never flags or environment (the command passes the tokenizer loading
// settings it found).
package validate
