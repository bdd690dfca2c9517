// Package servermetrics collects the inference server's own metrics while replay runs: it
// scrapes Prometheus text or OpenMetrics endpoints (the server's /metrics, DCGM exporters),
// parses them with github.com/prometheus/common/expfmt, and stores the samples on the run's
// clock in server_metrics.jsonl, a versioned file of the run directory (docs/run-format.md,
// "Server metrics file"): every family at the first and last scrape, the known ones (Lookup,
// DCGM fields) in between, each parsed again only when its lines changed (delta.go). DCGM exporter pages also become rawlog.GPUSample records, the same
// GPU fields NVML fills, so a client on another machine than the GPUs still gets GPU context.
//
// Families of known servers (vLLM, SGLang, TGI, TensorRT-LLM, Dynamo, Triton, llm-d) map to
// stable names (Lookup, docs/metrics.md "Server metrics"), which analyze reports and gates on.
//
// The scraper runs in replay's coordinator, off the workers' CPUs (a huge page on a thread at
// SCHED_IDLE);
// a slow or dead endpoint delays only its own next scrape, never a send, and the end of a
// run by at most one scrape timeout. A page costs at most MaxPageBytes read and
// DefaultMaxSeries series parsed (whole families, the known ones first), each cap said once.
package servermetrics
