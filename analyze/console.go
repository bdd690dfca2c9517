package analyze

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// WriteConsole writes the table AIPerf prints at the end of a run (Metric, avg, min, max,
// p99, p90, p50, std; single values show N/A in the distribution columns), then the errors,
// the notes and the verdict on the client's schedule.
func WriteConsole(w io.Writer, s *Summary) error { return WriteConsoleColor(w, s, false) }

// WriteConsoleColor is WriteConsole with the claim's failed lines in red when color is set
// (a terminal that did not ask for NO_COLOR: the caller knows).
func WriteConsoleColor(w io.Writer, s *Summary, color bool) error {
	title := "llmbench | LLM Metrics"
	if s.TokenCount == "" {
		title = "llmbench | Metrics"
	}
	var b strings.Builder
	writeTable(&b, title, consoleRows(s))
	b.WriteString("\n")
	for _, l := range summaryLines(s, color) {
		b.WriteString(l + "\n")
	}
	writeGroupsConsole(&b, s) // --group-by: one block per group (groups_export.go)
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteTraceTiming writes AIPerf's --show-trace-timing table: the HTTP trace metrics
// (k6's names: connecting, sending, waiting, receiving, duration, and the bytes and chunks),
// in the console table's layout. A run without them writes nothing.
func WriteTraceTiming(w io.Writer, s *Summary) error {
	var res []Result
	for _, r := range s.Results {
		if r.Kind == Record && r.ID >= MHTTPReqConnecting && r.ID <= MHTTPReqConnectionReused {
			res = append(res, r)
		}
	}
	if len(res) == 0 {
		return nil
	}
	_, rows := tableRows(res)
	var b strings.Builder
	writeTable(&b, "llmbench | HTTP Trace Timing", rows)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeTable writes rows under title with the console's header and column widths.
func writeTable(b *strings.Builder, title string, rows [][]string) {
	header := []string{"Metric", "avg", "min", "max", "p99", "p90", "p50", "std"}
	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = len(h)
	}
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	total := len(header) - 1
	for _, wd := range widths {
		total += wd + 2
	}
	pad := max(0, (total-len(title))/2)
	b.WriteString(strings.Repeat(" ", pad) + title + "\n")
	line := func(cells []string) {
		for i, c := range cells {
			n := widths[i] - len([]rune(c))
			if i == 0 {
				b.WriteString(c + strings.Repeat(" ", n))
			} else {
				b.WriteString("  " + strings.Repeat(" ", n) + c)
			}
		}
		b.WriteString("\n")
	}
	line(header)
	sep := make([]string, len(header))
	for i := range sep {
		sep[i] = strings.Repeat("─", widths[i])
	}
	line(sep)
	for _, r := range rows {
		line(r)
	}
}

// ConsoleRow is one row of the console table: the metric's tag and the cells as printed
// (name with unit, avg, min, max, p99, p90, p50, std).
type ConsoleRow struct {
	Tag   string
	Cells []string
}

// ConsoleRows returns the console table's rows, for reporters that show the same table.
func ConsoleRows(s *Summary) []ConsoleRow {
	tags, rows := consoleTable(s)
	out := make([]ConsoleRow, len(rows))
	for i := range rows {
		out[i] = ConsoleRow{Tag: tags[i], Cells: rows[i]}
	}
	return out
}

// consoleRows are the table rows: metrics marked for the console, by display order.
func consoleRows(s *Summary) [][]string {
	_, rows := consoleTable(s)
	return rows
}

// consoleTable returns the rows of consoleRows and each row's metric tag.
func consoleTable(s *Summary) ([]string, [][]string) { return resultsTable(s.Results, hasReasoning(s)) }

// resultsTable returns the console rows of results and each row's metric tag; reasoning
// says the run's responses had reasoning tokens.
func resultsTable(results []Result, reasoning bool) ([]string, [][]string) {
	res := make([]Result, 0, len(results))
	for _, r := range results {
		if !r.Console {
			continue
		}
		// Time to first output token matters only when reasoning delays it.
		if r.ID == MTimeToFirstOutputToken && !reasoning {
			continue
		}
		res = append(res, r)
	}
	return tableRows(res)
}

// tableRows sorts res by display order and formats one table row per result.
func tableRows(res []Result) ([]string, [][]string) {
	slices.SortStableFunc(res, func(a, b Result) int { return cmp.Compare(a.order, b.order) })
	var rows [][]string
	tags := make([]string, 0, len(res))
	for _, r := range res {
		tags = append(tags, r.Tag)
		name := r.Header + " (" + r.Unit + ")"
		if r.Unit == unitRequests || r.Unit == unitCount || r.Unit == "" {
			name = r.Header
		}
		if r.Stats == nil {
			rows = append(rows, []string{name, fmtNum(r.Value), "N/A", "N/A", "N/A", "N/A", "N/A", "N/A"})
			continue
		}
		st := r.Stats
		rows = append(rows, []string{name, fmtNum(st.Avg), fmtNum(st.Min), fmtNum(st.Max),
			fmtNum(st.P[8]), fmtNum(st.P[6]), fmtNum(st.P[4]), fmtNum(st.Std)})
	}
	return tags, rows
}

func hasReasoning(s *Summary) bool {
	r := s.result(MReasoningTokenCount)
	return r != nil && r.Stats != nil && r.Stats.Max > 0
}

// summaryLines are the lines under the table: errors, notes, the verdict.
func summaryLines(s *Summary, color bool) []string {
	var out []string
	c := s.Counts
	c.Profile += s.excluded() // the run's: a selection keeps every failure (choose)
	if c.Errors > 0 {
		parts := make([]string, 0, len(s.Errors))
		for _, e := range s.Errors {
			p := fmt.Sprintf("%s ×%d", e.Kind, e.Count)
			if e.Message != "" {
				p += fmt.Sprintf(" (%q)", clipWords(e.Message, consoleMessageBytes))
			}
			parts = append(parts, p)
		}
		out = append(out, fmt.Sprintf("Errors: %d of %d profile requests (%s%%): %s%s", c.Errors, c.Profile,
			fmtNum(float64(c.Errors)/float64(max(c.Profile, 1))*100), strings.Join(parts, ", "), warmupNote(c)))
	} else {
		out = append(out, fmt.Sprintf("Errors: none in %d profile requests%s", c.Profile, warmupNote(c)))
	}
	out = append(out, serverMetricLines(s)...)
	out = append(out, sessionLines(s)...)
	for _, n := range s.Notes {
		out = append(out, "Note: "+n)
	}
	out = append(out, shardLines(s)...)
	out = append(out, VerdictLine(s))
	for _, l := range ClaimConsoleLines(s.Claim) {
		if l.Failed && color {
			l.Text = ansiRed + l.Text + ansiReset
		}
		out = append(out, l.Text)
	}
	return out
}

// consoleMessageBytes bounds an error message in the console's Errors line; every message
// analyze writes itself is shorter, so only a server's long text is cut (the exports keep it
// whole).
const consoleMessageBytes = 200

// clipWords returns s whole when it has at most n bytes, else cut at its last sentence or
// clause end (". ", "; ", ", ") in the second half of the first n bytes, or else at its last
// space, or else (one long word) at n bytes on a character boundary; a cut text ends in "…".
func clipWords(s string, n int) string {
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

// warmupNote says how many warmup requests were left out, and how many of them failed.
func warmupNote(c Counts) string {
	switch {
	case c.WarmupSeen == 0:
		return ""
	case c.WarmupErrors == 0:
		return fmt.Sprintf(" (%d warmup requests excluded)", c.WarmupSeen)
	}
	return fmt.Sprintf(" (%d warmup requests excluded, %d of them failed)", c.WarmupSeen, c.WarmupErrors)
}

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

// fmtNum formats like AIPerf's console: two decimals and thousands separators. A value no
// reading of a digit string helps (|v| ≥ 1e15: a server may expose any float) is in
// exponent form, an infinity is +Inf or -Inf, and NaN, no value, is N/A.
func fmtNum(v float64) string {
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

// fmtSigned is fmtNum with the sign always shown: a difference.
func fmtSigned(v float64) string {
	if v >= 0 {
		return "+" + fmtNum(v)
	}
	return fmtNum(v)
}

// The terminal's red and back: a claim line whose check failed (WriteConsoleColor).
const (
	ansiRed   = "\x1b[31m"
	ansiReset = "\x1b[0m"
)
