// Package report writes the self-contained HTML pages of a run (report.html) and of a
// comparison or sweep of runs (compare.html), and the comparison's JSON. A page is one file
// that makes no network request: the chart library (uPlot, vendored under assets/) and the
// page's script are embedded with go:embed and inlined, and the run's data is inlined as
// JSON, downsampled (LTTB, fixed quantile grids, bounded histograms) so that its size does
// not grow with the number of requests.
//
// Like every reporter here it is a function over analyze's Summary, plus the per-request
// records that analyze streams as profile_export.jsonl (collected by Records, an io.Writer
// that analyze can write to directly). docs/report.md describes the pages and the
// comparison JSON field by field.
package report
