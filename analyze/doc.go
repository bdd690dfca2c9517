// Package analyze computes every metric of a benchmark offline, from the raw event logs and
// run.json that replay wrote and the plan file they replayed (see docs/run-format.md and
// docs/plan-format.md), streams the per-request profile_export.jsonl while reading them, and
// judges the run (verdict, claim, release gates for CI). The other outputs (console table,
// AIPerf-compatible profile_export_aiperf.json and .csv, time slices) are written from its
// Summary by analyze/output, which imports analyze; analyze never imports it.
//
// Computing metrics after the run keeps them off the hot path and lets old logs be re-read
// under new definitions. Every SSE event is timed by the socket read that completed it, so
// events that arrived together are counted (events_per_read) rather than reported as 0 ms
// inter-token latencies. Definitions follow AIPerf; peers' variants (vLLM, guidellm,
// GenAI-Perf, llmperf) are reported under their own tags, and schedule fidelity (schedule
// lag, dispatch lag, coordinated-omission-corrected latencies) is this tool's own.
// docs/metrics.md documents every metric.
//
// Every metric is one entry of a Registry (registry.go): the built-in ones, each with its
// per-request or per-run formula (builtin.go), and those a user registers at run time, which
// every output, gate, goodput objective and comparison then takes like a built-in one. The
// small syntaxes that name metrics (--gate, --goodput, gates files, server gates) share one
// parser over the registry (expr.go).
//
// The flow is vegeta's: Analyze reduces the logs to one Summary, and each output is a
// function over it (analyze/output's WriteConsole, WriteAIPerfJSON, WriteAIPerfCSV,
// WriteTimeslicesJSON, WriteTimeslicesCSV); the per-request records are streamed while reading, since they do
// not fit in memory for runs of millions of requests. Output is deterministic: analysing the
// same directories twice gives byte-identical files.
package analyze
