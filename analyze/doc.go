// Package analyze computes every metric of a benchmark offline, from the raw event logs and
// run.json that replay wrote and the plan file they replayed (see docs/run-format.md and
// docs/plan-format.md), streams the per-request profile_export.jsonl while reading them, and
// says whether the client kept its schedule (the verdict). The other outputs (console table,
// AIPerf-compatible profile_export_aiperf.json and .csv, time slices) are written from its
// Summary by analyze/output, which imports analyze; analyze never imports it.
//
// Below analyze, and importing no part of it: analyze/accum holds the arithmetic every
// metric is computed with (overflow-free sums, distributions summarised as Stats);
// analyze/serverside computes the server and GPU metrics (server_metrics.jsonl, the
// telemetry logs' GPU samples) that summarise puts into the Summary.
// analyze/record holds one request as it is derived (record.Metrics) and writes its
// profile_export.jsonl line (record.AppendJSONL) from the columns the registry gives it.
// analyze/sessions computes the session metrics of graph plans from each request's
// sessions.Node, which summarise turns into SessionSummary.Results.
//
// The run directories are opened by analyze/rundir (the runs given, their run.json, the
// plan they were made from, the logs to read), which analyze imports and which imports no
// part of analyze; the logs themselves are read here (read.go), each record computed as it
// is read, so that no run's records have to be held at once.
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
// judgements over the results (release gates, goodput objectives, the gates file, a run's
// health) are package analyze/judge's, compiled through metricexpr; the benchmark claim
// (the generator validation, the workload shape check, the thresholds) is
// analyze/benchclaim's: both import analyze, and analyze imports neither. The schedule verdict stays here: it is
// computed with the summary and every output reads it.
//
// The flow is vegeta's: Analyze reduces the logs to one Summary, and each output is a
// function over it (analyze/output's WriteConsole, WriteAIPerfJSON, WriteAIPerfCSV,
// WriteTimeslicesJSON, WriteTimeslicesCSV); the per-request records are streamed while reading, since they do
// not fit in memory for runs of millions of requests. Output is deterministic: analysing the
// same directories twice gives byte-identical files.
package analyze
