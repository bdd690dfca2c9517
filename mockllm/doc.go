// Package mockllm is the reference LLM server with known timing that
// benchmark clients are calibrated against (command cmd/mockllm; user
// guide docs/mockllm.md).
//
// It serves the OpenAI chat, completions, responses, embeddings and
// image APIs, Anthropic Messages, HuggingFace TGI and TEI, Cohere and NIM
// rankings. Every streaming response follows an absolute schedule (TTFT,
// then one event per ITL, with optional lognormal jitter) kept by a
// precise clock; the lateness of each write is recorded and exposed on
// /metrics. Output text is made of words that are each one token under
// the configured tokenizer, so the usage counts the server reports are
// exactly what the client's own re-tokenization finds. Text, lengths,
// jitter and faults are deterministic under Options.Seed.
//
// Files: server.go routes and serves; gen.go plans a response (lengths,
// words, tool call, fault); render_*.go write the text APIs' bytes;
// prerendered.go serves the APIs that answer at once, each rendered by its
// own file (embeddings.go, rankings.go, images.go), as are models.go and
// health.go; clock*.go keep time; metrics.go counts; words.go builds the
// vocabulary; parse.go reads requests; schedule.go keeps each request's instants for the
// schedule log and tracing.go for its vLLM-shaped llm_request span (exported through the
// OpenTelemetry Go SDK's OTLP exporters); serve.go runs the command's listener until Ctrl-C
// (Serve). JSON is written with
// internal/jsonwire.
package mockllm
