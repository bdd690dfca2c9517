package analyze

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// How analyze words its findings: numbers as AIPerf's console prints them, long messages cut
// at a clause, and which runs ended early. The notes, the verdict and the claim are written with
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

// EndedEarly says which runs (shards) of s did not run to their end, "" when all did: the
// numbers then cover only what their logs hold (the verdict's line ends with it).
func EndedEarly(s *Summary) string {
	statuses := s.runStatus
	if statuses == nil && s.RunStatus != "" {
		statuses = []string{s.RunStatus}
	}
	var ended []string
	for i, st := range statuses {
		how, _ := RunOutcome(st, "")
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
