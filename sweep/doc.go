// Package sweep holds the arithmetic of profile's multi-run modes, free of I/O: AIPerf's
// list syntax (--concurrency 1,2,4), the Pareto set and best point of a sweep, the
// exponential-probe-then-bisection search for the most load that meets an SLA, and which
// runs and points count (validity.go): a run with failed requests beyond the user's bound, a
// crash or a client that did not keep its schedule never feeds an aggregate, a best point
// or a Pareto set, and never passes a search probe. The statistics of repeated runs (the
// Student-t confidence summary, the convergence test) are package stats'.
//
// Package profile runs the benchmarks and writes the files; this package only decides. It
// imports only the standard library.
package sweep
