// Package serverside computes the server-side measurements of a benchmark on its clock
// (docs/metrics.md "Server metrics"): the server's metric families mapped to stable names,
// read from each run's server_metrics.jsonl, and the GPU fields of the telemetry logs (NVML
// or DCGM). Gauges get statistics over a window's points, counters a rate over it,
// histograms quantile estimates from their bucket increases over it; GPUs get per-field
// statistics and their energy over the profile window. What the shards of a distributed
// run read from one server or GPU counts once. It also names these metrics for gates
// (server.<stable name>, gpu.<field>, the statistics each kind has).
//
// analyze calls it from summarise with the runs (rundir.Run), the telemetry logs' GPU
// samples (GPULog) and the windows (the profile window, each time slice), and keeps the
// results in its Summary (ServerMetric and ServerMetricSeries are this package's Metric and
// Series). It imports analyze/accum (overflow-free sums, distributions), analyze/rundir,
// rawlog and servermetrics, never analyze, its judgement or its outputs.
package serverside
