// Package output writes what analyze computed as the files and text people and tools read:
// the console table (AIPerf's layout, with the errors, notes, verdict and claim under it),
// AIPerf-compatible profile_export_aiperf.json and .csv, the time slices' JSON and CSV, and the
// --group-by, session and server-metric blocks inside them. Each writer is a function over one
// analyze.Summary (vegeta's reporters), so adding an output never touches the metric code.
// Output is deterministic: the same Summary gives the same bytes, held by the golden files in
// testdata/analyze (analyze's TestGolden).
//
// The per-request profile_export.jsonl is the one export analyze writes itself: it is
// streamed while the logs are read, from per-request values that never leave analyze (a
// record's metrics, the registry's encoded keys, the raw log's timestamps), without an
// allocation per record.
//
// The lines that say how a run was judged are worded here too: the verdict's line
// (VerdictLine, which the HTML report shows verbatim), the shards' lines and the benchmark
// claim in the console, JSON and CSV (judged by analyze and analyze/benchclaim; the reasons
// inside them are analyze's words, formatted with analyze.FormatNumber).
//
// It imports analyze (the Summary and the metric registry) and internal/pyjson (Python-style
// JSON). It reads a Summary, never the logs, a plan or flags: it may not import rawlog,
// mmapds, replay or cmd, nor the workflows above it (export, profile, report), which call
// it. Nothing in analyze, or below it, may import output.
package output
