package analyze

import "github.com/llmbench/llmbench/redact"

// redactSecrets applies the one redaction rule (package redact) to the text the summary
// carries out of the run's files into every export, the report and the console: notes
// (run.json's error, server-metrics notes), error messages (a server's error body may echo
// the request URL, query and all) and the server metrics' origin labels.
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
}

func redactErrors(es []ErrorCount) {
	for i := range es {
		es[i].Message = redact.Text(es[i].Message)
	}
}
