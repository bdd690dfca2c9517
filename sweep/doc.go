// Package sweep holds the arithmetic of profile's multi-run modes, free of I/O: AIPerf's
// list syntax (--concurrency 1,2,4), the statistics of repeated runs (mean, sample std, CV,
// standard error and a Student-t confidence interval from an exact t quantile), the
// convergence test that ends repeats early, the Pareto set and best point of a sweep, and
// the exponential-probe-then-bisection search for the most load that meets an SLA.
//
// cmd/profile runs the benchmarks and writes the files; this package only decides.
package sweep
