// Package probe holds what replay asks a server before a run, outside the run and its
// logs: the readiness probes (--wait-for-model: GET /v1/models, a one-token inference
// request, or both, until each URL answers 2xx) and the preflight (one short request per
// URL with the plan's own first body: an ignored output limit, a server that closes kept-
// alive connections, what the server says it is, and the refusals that mean the run could
// measure nothing). Both send through net/http, not the workers' client: nothing they do
// is timed or logged as the run's.
//
// replay calls them with what they need resolved (merged headers, TLS configuration, the
// plan's first request) and a stop channel for Ctrl-C. It imports endpoint, mmapds (the
// plan's meta), rawlog (the preflight's run.json section), redact, internal/errline and
// internal/jsonwire: never replay, a transport, or anything above them.
package probe
