// Package benchclaim judges the benchmark claim (docs/metrics.md "The benchmark claim"): a
// result is trustworthy only when the load generator, the workload shape and the thresholds
// were each validated. It owns the evidence of the first two and the judgement of all three:
//
//   - the generator validation (genvalidation.go): its file, generator_validation.json, the
//     tolerances, and JudgeGenerator, which judges a run against the in-process mock server
//     (package validate runs it), with the client's own share of the measured times from the
//     mock server's log (clientshare.go);
//   - the workload shape check (shape.go): the run's ISL, OSL, arrival gaps and prefix reuse
//     against a reference (a dataset, a plan or another run), the plan's own arrival
//     fidelity, with the KS test of package stats;
//   - Evaluate (evaluate.go): the claim's three parts, the thresholds judged over
//     analyze/judge's gates and gates file, set on the Summary, which analyze/output writes.
//
// analyze keeps what the claim is read from: the Summary (with the shape samples it collects
// while reading the logs, Summary.ShapeSamples), the schedule verdict, and the Claim type the
// outputs print. benchclaim imports analyze, analyze/judge, stats and the plan, dataset and
// tokenizer packages the shape check reads references with; it must not import the
// workflows above it (export, profile, report, validate) nor replay, and analyze and
// analyze/judge must not import it.
package benchclaim
