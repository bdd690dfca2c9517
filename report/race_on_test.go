//go:build race

package report

// raceEnabled: the race detector slows the 1M-request size test tenfold (see TestPageSizeBound).
const raceEnabled = true
