// Package accum holds the accumulators analyze computes with: Sum and Total, sums of
// values from outside (a server's gauges and counters, usage token counts, DCGM fields)
// that never overflow; Dist, one metric's distribution, kept exactly up to a limit and in
// HdrHistograms past it, summarised as Stats (count, sum, mean, standard deviation,
// extremes, Percentiles), with infinite and NaN values reported, never dropped; and
// Bracket, the samples that enclose a window (a counter's or a CPU clock's rate over it).
//
// It is arithmetic, free of I/O, and deterministic: the same values in the same order give
// the same bits. It imports the standard library, hdrhistogram and the module's stats
// package (the percentile method), never analyze or anything above it, so that analyze and
// the packages below it (analyze/serverside) share one definition of each.
package accum
