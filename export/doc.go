// Package export is the analyze command's workflow around the metrics: it analyses run
// directories (package analyze), refuses any output that would replace one of the
// analysis's inputs (guard.go), writes the AIPerf exports (JSON, CSV, per-request JSONL,
// time slices) and report.html (page.go) atomically, judges the benchmark claim
// (benchclaim.go), prints the console table and the gates, and returns the exit status they
// give. WaitShards is `analyze wait-shards`': a deployment's analysis waits with it for
// every shard's run.json to hold its outcome. Compare is `analyze compare`'s: each run analysed, compared with the baseline
// (package report), compare.json and compare.html written, regressions said.
//
// It takes options, never flags or environment: the command (cmd/internal/cli) converts
// analyze's flags into Options. profile's aggregates are written with its WriteFileAtomic
// and read the runs' exports by its names.
package export
