package analyze

import "github.com/llmbench/llmbench/analyze/accum"

// Stats summarises a distribution in display units; package accum computes it.
type Stats = accum.Stats

// Percentiles are the percentiles every distribution reports (accum.Percentiles).
var Percentiles = accum.Percentiles

// PercentileNames are the stat names of Percentiles, as used in gates and exports.
var PercentileNames = accum.PercentileNames

// DefaultExactLimit is how many values a distribution keeps exactly before it folds them
// into an HdrHistogram (accum.DefaultExactLimit).
const DefaultExactLimit = accum.DefaultExactLimit
