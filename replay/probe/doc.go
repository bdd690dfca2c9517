// Package probe holds what replay asks a server before a run, outside the run and its
// logs: the readiness probes (--wait-for-model: GET /v1/models, a one-token inference
// request, or both, until each URL answers 2xx) and the preflight (one short request per
// URL with the plan's own first body: an ignored output limit, a server that closes kept-
// alive connections, what the server says it is, and the refusals that mean the run could
// measure nothing). Both send through net/http, not the workers' client: nothing they do
// is timed or logged as the run's. Single is the third probe: requests one at a time
// outside a run (the chat command's turns), through the workers' own HTTP/1.1 client
// (replay/http1), so that each comes back as a raw-log Request record timed as a run times
// it.
//
// replay calls them with what they need resolved (merged headers, TLS configuration, the
// plan's first request) and a stop channel for Ctrl-C. It imports endpoint, mmapds (the
// plan's meta), rawlog (the preflight's run.json section), redact, internal/errline and
// internal/jsonwire, and replay/http1 (Single): never replay, a transport, or anything above them.
package probe
