// Package stats holds the statistical tests and estimators that the other rooms report:
// the percentile every distribution uses (numpy's linear method), the mean and sample
// standard deviation, the Student-t confidence summary of repeated runs and the
// convergence test that ends them early, the two-sample Kolmogorov–Smirnov test with exact
// p-values, the Mann–Whitney U test and the percentile-bootstrap interval of a percentile
// difference.
//
// Distributions come from gonum (stat/distuv); what gonum lacks is written here and
// checked against published values in the tests: the exact two-sample KS p-value, the
// Kolmogorov distribution, Mann–Whitney's tie-corrected normal approximation and the
// bootstrap.
//
// The package is pure arithmetic, free of I/O. It imports only the standard library and
// gonum, never another package of this module, so that analyze, report, sweep and profile
// can all import it.
package stats
