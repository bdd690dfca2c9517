package output

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/llmbench/llmbench/analyze"
)

// WriteConsole writes the table AIPerf prints at the end of a run (Metric, avg, min, max,
// p99, p90, p50, std; single values show N/A in the distribution columns), then the errors,
// the notes and the verdict on the client's schedule.
func WriteConsole(w io.Writer, s *analyze.Summary) error { return WriteConsoleColor(w, s, false) }

// WriteConsoleColor is WriteConsole with the claim's failed lines in red when color is set
// (a terminal that did not ask for NO_COLOR: the caller knows).
func WriteConsoleColor(w io.Writer, s *analyze.Summary, color bool) error {
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
func WriteTraceTiming(w io.Writer, s *analyze.Summary) error {
	var res []analyze.Result
	for _, r := range s.Results {
		if r.Kind == analyze.Record && r.ID >= analyze.MHTTPReqConnecting && r.ID <= analyze.MHTTPReqConnectionReused {
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
func ConsoleRows(s *analyze.Summary) []ConsoleRow {
	tags, rows := consoleTable(s)
	out := make([]ConsoleRow, len(rows))
	for i := range rows {
		out[i] = ConsoleRow{Tag: tags[i], Cells: rows[i]}
	}
	return out
}

// consoleRows are the table rows: metrics marked for the console, by display order.
func consoleRows(s *analyze.Summary) [][]string {
	_, rows := consoleTable(s)
	return rows
}

// consoleTable returns the rows of consoleRows and each row's metric tag.
func consoleTable(s *analyze.Summary) ([]string, [][]string) {
	return resultsTable(s.Results, hasReasoning(s))
}

// resultsTable returns the console rows of results and each row's metric tag; reasoning
// says the run's responses had reasoning tokens.
func resultsTable(results []analyze.Result, reasoning bool) ([]string, [][]string) {
	res := make([]analyze.Result, 0, len(results))
	for _, r := range results {
		if !r.Console {
			continue
		}
		// Time to first output token matters only when reasoning delays it.
		if r.ID == analyze.MTimeToFirstOutputToken && !reasoning {
			continue
		}
		res = append(res, r)
	}
	return tableRows(res)
}

// tableRows sorts res by display order and formats one table row per result.
func tableRows(res []analyze.Result) ([]string, [][]string) {
	slices.SortStableFunc(res, func(a, b analyze.Result) int { return cmp.Compare(a.DisplayOrder(), b.DisplayOrder()) })
	var rows [][]string
	tags := make([]string, 0, len(res))
	for _, r := range res {
		tags = append(tags, r.Tag)
		name := r.Header + " (" + r.Unit + ")"
		if r.Unitless() {
			name = r.Header
		}
		if r.Stats == nil {
			rows = append(rows, []string{name, analyze.FormatNumber(r.Value), "N/A", "N/A", "N/A", "N/A", "N/A", "N/A"})
			continue
		}
		st := r.Stats
		rows = append(rows, []string{name, analyze.FormatNumber(st.Avg), analyze.FormatNumber(st.Min), analyze.FormatNumber(st.Max),
			analyze.FormatNumber(st.P[8]), analyze.FormatNumber(st.P[6]), analyze.FormatNumber(st.P[4]), analyze.FormatNumber(st.Std)})
	}
	return tags, rows
}

func hasReasoning(s *analyze.Summary) bool {
	r := s.ResultOf(analyze.MReasoningTokenCount)
	return r != nil && r.Stats != nil && r.Stats.Max > 0
}

// summaryLines are the lines under the table: errors, notes, the verdict.
func summaryLines(s *analyze.Summary, color bool) []string {
	var out []string
	c := s.Counts
	c.Profile += s.Excluded() // the run's: a selection keeps every failure (choose)
	if c.Errors > 0 {
		parts := make([]string, 0, len(s.Errors))
		for _, e := range s.Errors {
			p := fmt.Sprintf("%s ×%d", e.Kind, e.Count)
			if e.Message != "" {
				p += fmt.Sprintf(" (%q)", analyze.ClipWords(e.Message, consoleMessageBytes))
			}
			parts = append(parts, p)
		}
		out = append(out, fmt.Sprintf("Errors: %d of %d profile requests (%s%%): %s%s", c.Errors, c.Profile,
			analyze.FormatNumber(float64(c.Errors)/float64(max(c.Profile, 1))*100), strings.Join(parts, ", "), warmupNote(c)))
	} else {
		out = append(out, fmt.Sprintf("Errors: none in %d profile requests%s", c.Profile, warmupNote(c)))
	}
	out = append(out, serverMetricLines(s)...)
	out = append(out, serverTraceLines(s)...)
	out = append(out, sessionLines(s)...)
	for _, n := range s.Notes {
		out = append(out, "Note: "+n)
	}
	out = append(out, ShardLines(s)...)
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

// warmupNote says how many warmup requests were left out, and how many of them failed.
func warmupNote(c analyze.Counts) string {
	switch {
	case c.WarmupSeen == 0:
		return ""
	case c.WarmupErrors == 0:
		return fmt.Sprintf(" (%d warmup requests excluded)", c.WarmupSeen)
	}
	return fmt.Sprintf(" (%d warmup requests excluded, %d of them failed)", c.WarmupSeen, c.WarmupErrors)
}

// fmtSigned is fmtNum with the sign always shown: a difference.
func fmtSigned(v float64) string {
	if v >= 0 {
		return "+" + analyze.FormatNumber(v)
	}
	return analyze.FormatNumber(v)
}

// The terminal's red and back: a claim line whose check failed (WriteConsoleColor).
const (
	ansiRed   = "\x1b[31m"
	ansiReset = "\x1b[0m"
)
