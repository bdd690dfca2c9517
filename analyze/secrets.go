package analyze

import "github.com/llmbench/llmbench/redact"

// redactSecrets applies the one redaction rule (package redact) to the text the summary
// carries out of the run's files into every export, the report and the console: notes
// (run.json's error, server-metrics notes), error messages (a server's error body may echo
// the request URL, query and all), the server metrics' origin labels and the plan's flags
// (input_config.plan.spec: an --extra-inputs field under a secret's name, a URL).
func (s *Summary) redactSecrets() {
	for i, n := range s.Notes {
		s.Notes[i] = redact.Text(n)
	}
	redactErrors(s.Errors)
	for i := range s.ServerSeries {
		s.ServerSeries[i].Labels = redact.Text(s.ServerSeries[i].Labels) // "endpoint=URL"
	}
	for i := range s.Slices {
		redactErrors(s.Slices[i].ErrorCounts)
	}
	for k, v := range s.Spec {
		s.Spec[k] = redactFlag(k, v)
	}
}

// redactFlag is the value v of the plan's flag k (a string, or a list of them, as the plan's
// spec holds them) with its credentials replaced (redact.FlagValue).
func redactFlag(k string, v any) any {
	switch v := v.(type) {
	case string:
		return redact.FlagValue(k, v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = redactFlag(k, e)
		}
		return out
	}
	return v
}

func redactErrors(es []ErrorCount) {
	for i := range es {
		es[i].Message = redact.Text(es[i].Message)
	}
}
