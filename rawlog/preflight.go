package rawlog

// Preflight is what replay's preflight found before the run (run.json "preflight",
// docs/run-format.md): one tiny request of the plan's own shape to each URL, asking for
// LimitAsked output tokens, and what the server says it is. Nothing of it is in the logs or
// the results.
type Preflight struct {
	// Targets has one entry per URL, in run.json's order.
	Targets []PreflightTarget `json:"targets"`
}

// Connection policies a preflight observes (PreflightTarget.Connection).
const (
	// ConnKeepAlive: the connection stayed open after the response.
	ConnKeepAlive = "keep-alive"
	// ConnClosesAfterResponse: the server closed it right after the response although the
	// response announced keep-alive (llama.cpp after a streamed response).
	ConnClosesAfterResponse = "closes-after-response"
	// ConnClose: the response said "Connection: close".
	ConnClose = "close"
	// ConnUnknown: not observed (no whole response, or the preflight stopped reading early).
	ConnUnknown = "unknown"
)

// PreflightTarget is one URL's preflight.
type PreflightTarget struct {
	// URLIndex indexes run.json urls.
	URLIndex int `json:"url_index"`
	// Status is the preflight request's HTTP status, 0 when no response came; Error says
	// what went wrong (a transport error, or the server's own message of a non-2xx answer).
	Status int    `json:"status"`
	Error  string `json:"error,omitempty"`
	// LimitField is the output-limit member the request carried (the plan's, e.g.
	// max_completion_tokens; "" when the body has none it could set) and LimitAsked its value.
	LimitField string `json:"limit_field,omitempty"`
	LimitAsked int    `json:"limit_asked,omitempty"`
	// OutputTokens is how many output tokens came back, at least: usage when the server
	// reported it (OutputFrom "usage"), else content events of a stream ("events") or words of
	// a body ("words"). Reading a stream stops once it is clear the limit was ignored.
	OutputTokens int    `json:"output_tokens"`
	OutputFrom   string `json:"output_from,omitempty"`
	// LimitHonoured says the server kept to LimitAsked; nil when it could not be told.
	LimitHonoured *bool `json:"limit_honoured,omitempty"`
	// AltField is the other field tried when LimitField was ignored (chat's max_tokens, or
	// max_completion_tokens for a plan made with --use-legacy-max-tokens); AltHonoured says
	// whether the server kept to it.
	AltField    string `json:"alt_field,omitempty"`
	AltHonoured *bool  `json:"alt_honoured,omitempty"`
	// Connection is the connection policy seen after the response (ConnKeepAlive...).
	Connection string `json:"connection"`
	// Server is the response's Server header; ModelsOwnedBy the owned_by of the plan's model
	// (else the first) in GET /v1/models; LlamaCppBuild and LlamaCppSlots llama.cpp's
	// GET /props build_info and total_slots; VLLMVersion vLLM's GET /version. Each is empty
	// where the server does not offer it.
	Server        string `json:"server,omitempty"`
	ModelsOwnedBy string `json:"models_owned_by,omitempty"`
	LlamaCppBuild string `json:"llamacpp_build,omitempty"`
	LlamaCppSlots int    `json:"llamacpp_total_slots,omitempty"`
	VLLMVersion   string `json:"vllm_version,omitempty"`
	// Warnings are the one-line findings the preflight printed for this URL.
	Warnings []string `json:"warnings,omitempty"`
}
