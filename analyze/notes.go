package analyze

import (
	"fmt"

	"github.com/llmbench/llmbench/endpoint"
)

// notes are the warnings printed under the table. limitField is the output-limit member of
// the plan's bodies ("" when they carry none: planLimitField).
func notes(s *Summary, c *collector, limitField string) []string {
	var out []string
	if c.sameRead > 0 {
		out = append(out, fmt.Sprintf("%d of %d inter-chunk gaps (%s%%) are 0 ms because several events arrived in one socket read; they are not real inter-token latencies (see events_per_read; inter_chunk_latency and vllm_inter_token_latency include them)",
			c.sameRead, c.gaps, FormatNumber(float64(c.sameRead)/float64(c.gaps)*100)))
	}
	if n := limitIgnored(s, c, limitField); n != "" {
		out = append(out, n)
	} else if c.oslMismatch > 0 {
		out = append(out, fmt.Sprintf("%d requests produced an output length more than min(5%%, 50 tokens) away from the requested one (osl_mismatch_count): set ignore_eos/min_tokens, or use --use-server-token-count", c.oslMismatch))
	}
	if c.usageDiscrepancy > 0 {
		out = append(out, fmt.Sprintf("%d requests have server usage counts more than 10%% away from the client's (usage_discrepancy_count): is the plan's tokenizer the model's?", c.usageDiscrepancy))
	}
	var clientErrs int64
	for _, e := range s.Errors {
		if e.Kind == kindClientError {
			clientErrs += e.Count
		}
	}
	if clientErrs > 0 {
		out = append(out, fmt.Sprintf("%d requests failed with %s: the client, not the server, ran out of resources (file descriptors, local ports or socket buffers), so those requests measure the client: raise its limits (ulimit -n, net.ipv4.ip_local_port_range) or lower the concurrency (docs/metrics.md)",
			clientErrs, kindClientError))
	}
	return out
}

// ignoredLimitShare is the share of requests whose output overran the requested length past
// which the server is taken to ignore the limit field rather than to stop late now and then.
const ignoredLimitShare = 0.9

// limitIgnored is the note for a server that ignores the plan's output-limit field: nearly
// every request (ignoredLimitShare) produced more tokens than it asked for. Setting
// ignore_eos or min_tokens cannot fix that (they make outputs longer, not shorter); the note
// names the field and, for chat, the flag that sends the other one. "" when the pattern is
// not there or the bodies carry no known limit field.
func limitIgnored(s *Summary, c *collector, field string) string {
	if field == "" || c.oslAsked == 0 || float64(c.oslOver) < ignoredLimitShare*float64(c.oslAsked) {
		return ""
	}
	failed := ""
	if c.oslOverFailed > 0 {
		failed = fmt.Sprintf("; %d of them failed once past it (see Errors: a server ignoring the limit runs out of context)", c.oslOverFailed)
	}
	what := fmt.Sprintf("%d of %d requests (%s%%) produced more output tokens than requested (osl_mismatch_count%s), and the bodies set %s: the server ignores that field",
		c.oslOver, c.oslAsked, FormatNumber(float64(c.oslOver)/float64(c.oslAsked)*100), failed, field)
	switch {
	case s.Endpoint == "chat" && field == "max_completion_tokens":
		return what + " (llama.cpp's server reads only max_tokens): compile the plan with --use-legacy-max-tokens, which sends max_tokens instead"
	case s.Endpoint == "chat" && field == "max_tokens":
		return what + ": compile the plan without --use-legacy-max-tokens, so that it sends max_completion_tokens instead"
	}
	return what + ", so the output lengths are not the plan's: check which limit field the server reads (--extra-inputs can set another)"
}

// planLimitField is the output-limit member of the plan's bodies, read from its first
// record (every record of a plan is rendered alike); "" when there is none.
func (a *analysis) planLimitField() string {
	if a.in.plan.Len() == 0 {
		return ""
	}
	_, body, err := a.in.plan.Record(0)
	if err != nil {
		return ""
	}
	f, _, _ := endpoint.LimitField(body)
	return f
}
