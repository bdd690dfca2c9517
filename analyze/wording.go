package analyze

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// How analyze words its findings: numbers as AIPerf's console prints them, long messages cut
// at a clause, and the verdict's line. The notes, the verdict and the claim are written with
// these, and so is every console output (analyze/output), so that a number reads the same in
// a note and in the table.

// FormatNumber formats like AIPerf's console: two decimals and thousands separators. A value no
// reading of a digit string helps (|v| ≥ 1e15: a server may expose any float) is in
// exponent form, an infinity is +Inf or -Inf, and NaN, no value, is N/A.
func FormatNumber(v float64) string {
	switch {
	case math.IsNaN(v):
		return "N/A"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.Abs(v) >= 1e15:
		return strconv.FormatFloat(v, 'e', 2, 64)
	}
	s := strconv.FormatFloat(v, 'f', 2, 64)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	b.WriteByte('.')
	b.WriteString(frac)
	return b.String()
}

// fmtNum is FormatNumber under the short name analyze's messages use.
func fmtNum(v float64) string { return FormatNumber(v) }

// ClipWords returns s whole when it has at most n bytes, else cut at its last sentence or
// clause end (". ", "; ", ", ") in the second half of the first n bytes, or else at its last
// space, or else (one long word) at n bytes on a character boundary; a cut text ends in "…".
func ClipWords(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	head := truncateText([]byte(s), n)
	if i := strings.LastIndex(head, ". "); i >= n/2 {
		return head[:i+1] + " …"
	}
	for _, sep := range []string{"; ", ", "} {
		if i := strings.LastIndex(head, sep); i >= n/2 {
			return head[:i] + " …"
		}
	}
	if i := strings.LastIndexByte(head, ' '); i > 0 {
		return strings.TrimRight(head[:i], ",;:") + " …"
	}
	return head + "…"
}

// clipWords is ClipWords under the name analyze's messages use.
func clipWords(s string, n int) string { return ClipWords(s, n) }

// VerdictLine is the one-line judgement of whether the client kept its schedule.
func VerdictLine(s *Summary) string {
	v := s.Verdict
	var facts []string
	if v.LagKnown {
		facts = append(facts, fmt.Sprintf("dispatch lag p99 %s ms (bound %s ms)", fmtNum(v.DispatchLagP99Ms), fmtNum(v.MaxLagMs)))
	}
	if v.CPUKnown {
		facts = append(facts, fmt.Sprintf("busiest %s at %s%% CPU (bound %s%%)", busiestWords(&v), fmtNum(v.BusiestWorkerPct), fmtNum(v.MaxCPUPct)))
	}
	if f := floorFact(&v); f != "" {
		facts = append(facts, f)
	}
	if v.Kept && v.Jitter {
		facts = append(facts, jitterFact(&v))
	}
	server := serverCloseFact(&v.Server)
	if server != "" {
		facts = append(facts, server)
	}
	var line string
	switch {
	case !v.Known:
		line = "Verdict: unknown: no request was sent and no worker CPU was sampled"
	case v.Kept && s.Counts.Valid == 0:
		// Nothing succeeded: there is no server performance to describe, only its failures.
		line = "Verdict: schedule kept: " + strings.Join(facts, "; ") +
			". But every request failed, so these numbers describe failures, not the server's performance: see Errors."
	case v.Kept:
		line = "Verdict: schedule kept: " + strings.Join(facts, "; ") + ". These numbers describe the server."
	default:
		reasons := v.Reasons
		if f := floorFact(&v); f != "" {
			reasons = append(reasons[:len(reasons):len(reasons)], f)
		}
		if server != "" {
			reasons = append(reasons[:len(reasons):len(reasons)], server)
		}
		line = "Verdict: schedule NOT kept: " + strings.Join(reasons, "; ") +
			". These numbers describe the client, not the server: use more workers or a lower rate."
	}
	if e := endedEarly(s); e != "" {
		line += " " + e
	}
	return line
}

// endedEarly says which runs (shards) of s did not run to their end, "" when all did: the
// numbers then cover only what their logs hold.
func endedEarly(s *Summary) string {
	statuses := s.runStatus
	if statuses == nil && s.RunStatus != "" {
		statuses = []string{s.RunStatus}
	}
	var ended []string
	for i, st := range statuses {
		how, _ := runOutcome(st, "")
		switch {
		case how == "":
		case s.Shards != nil:
			for _, sh := range s.Shards.Shards {
				if sh.run == i {
					ended = append(ended, fmt.Sprintf("shard %d %s", sh.Index, how))
				}
			}
		case len(statuses) == 1:
			ended = append(ended, "the run "+how)
		default:
			ended = append(ended, fmt.Sprintf("run %d (%s) %s", i+1, s.RunDirs[i], how))
		}
	}
	if len(ended) == 0 {
		return ""
	}
	return "But " + strings.Join(ended, ", ") + " before the end: the numbers cover only what the logs hold (see the notes)."
}
