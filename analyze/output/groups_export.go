package output

import (
	"encoding/csv"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/internal/pyjson"
)

// How the selection (--where), the groups (--group-by) and the user metrics' definitions
// appear in the console, profile_export_aiperf.json and profile_export_aiperf.csv, so that
// every export says how its numbers were made.

// writeGroupsConsole writes one block per group: its table and its counts.
func writeGroupsConsole(b *strings.Builder, s *analyze.Summary) {
	sel := s.Selection
	if sel == nil || sel.GroupBy == "" {
		return
	}
	reasoning := hasReasoning(s)
	fmt.Fprintf(b, "\nGroups by %s (--group-by): %d\n", sel.GroupBy, len(s.Groups))
	for i := range s.Groups {
		g := &s.Groups[i]
		_, rows := resultsTable(g.Results, reasoning)
		b.WriteString("\n")
		writeTable(b, "Group "+sel.GroupBy+" = "+g.Key, rows)
		b.WriteString(groupLine(sel.GroupBy, g) + "\n")
	}
}

// GroupConsoleRows are the console table's rows of group g of s (report.html shows them).
func GroupConsoleRows(s *analyze.Summary, g *analyze.Group) []ConsoleRow {
	tags, rows := resultsTable(g.Results, hasReasoning(s))
	out := make([]ConsoleRow, len(rows))
	for i := range rows {
		out[i] = ConsoleRow{Tag: tags[i], Cells: rows[i]}
	}
	return out
}

// GroupLine is the console's line of group g: its requests and errors.
func GroupLine(s *analyze.Summary, g *analyze.Group) string {
	by := ""
	if s.Selection != nil {
		by = s.Selection.GroupBy
	}
	return groupLine(by, g)
}

// groupLine counts a group's requests and names its errors.
func groupLine(by string, g *analyze.Group) string {
	line := fmt.Sprintf("Group %s = %s: %d profile requests, %d valid, %d errors", by, g.Key, g.Requests, g.Valid, g.Errors)
	if len(g.ErrorCounts) > 0 {
		parts := make([]string, 0, len(g.ErrorCounts))
		for _, e := range g.ErrorCounts {
			parts = append(parts, fmt.Sprintf("%s ×%d", e.Kind, e.Count))
		}
		line += " (" + strings.Join(parts, ", ") + ")"
	}
	return line
}

// selectionJSON is llmbench.selection: the expressions and what they left out.
func selectionJSON(r *analyze.SelectionReport) *pyjson.Object {
	o := &pyjson.Object{}
	if r.Where != "" {
		o.Add("where", r.Where)
	}
	if r.GroupBy != "" {
		o.Add("group_by", r.GroupBy)
	}
	return o.Add("excluded", r.Excluded).Add("excluded_no_value", r.NoValue).Add("ungrouped", r.Ungrouped)
}

// groupsJSON is llmbench.groups: each group's counts, its metric blocks (AIPerf's shape) and
// the statistics those cannot carry.
func groupsJSON(groups []analyze.Group) []any {
	out := make([]any, 0, len(groups))
	for i := range groups {
		g := &groups[i]
		metrics := &pyjson.Object{}
		for j := range g.Results {
			metrics.Add(g.Results[j].Tag, metricBlock(&g.Results[j]))
		}
		o := &pyjson.Object{}
		o.Add("key", g.Key)
		o.Add("counts", (&pyjson.Object{}).Add("requests", g.Requests).Add("valid", g.Valid).Add("errors", g.Errors))
		o.Add("metrics", metrics)
		o.Add("extra_stats", extraStats(g.Results))
		o.Add("error_summary", errorSummaryJSON(g.ErrorCounts))
		out = append(out, o)
	}
	return out
}

// errorSummaryJSON is AIPerf's error_summary list.
func errorSummaryJSON(counts []analyze.ErrorCount) []any {
	errs := make([]any, 0, len(counts))
	for _, e := range counts {
		d := &pyjson.Object{}
		if e.Code > 0 {
			d.Add("code", e.Code)
		}
		d.Add("type", e.Kind)
		d.Add("message", e.Message)
		errs = append(errs, (&pyjson.Object{}).Add("error_details", d).Add("count", e.Count))
	}
	return errs
}

// userMetricsJSON is llmbench.user_metrics: each user metric's definition as given.
func userMetricsJSON(r *analyze.Registry) []any {
	var out []any
	for _, d := range r.UserMetricDefs() {
		o := &pyjson.Object{}
		o.Add("name", d.Tag).Add("unit", d.Unit)
		if d.Expression != "" {
			o.Add("expression", d.Expression)
		}
		o.Add("description", d.Description).Add("larger_is_better", d.LargerIsBetter).Add("failed_requests", d.ForFailedRequests())
		out = append(out, o)
	}
	return out
}

// writeSelectionCSV writes, after two blank rows, the selection (Selection,Expression,Excluded)
// and each group's metrics with the group as the first column: Group,Metric,avg,…,std for
// distributions, Group,Metric,Value for single values.
func writeSelectionCSV(cw *csv.Writer, s *analyze.Summary) {
	r := s.Selection
	if r == nil {
		return
	}
	cw.Write(nil)
	cw.Write(nil)
	cw.Write([]string{"Selection", "Expression", "Requests"})
	if r.Where != "" {
		cw.Write([]string{"where (excluded)", r.Where, strconv.FormatInt(r.Excluded, 10)})
	}
	if r.GroupBy != "" {
		cw.Write([]string{"group_by (ungrouped)", r.GroupBy, strconv.FormatInt(r.Ungrouped, 10)})
	}
	if r.GroupBy == "" {
		return
	}
	var dists, singles [][]string
	for i := range s.Groups {
		g := &s.Groups[i]
		res := make([]*analyze.Result, len(g.Results))
		for j := range g.Results {
			res[j] = &g.Results[j]
		}
		slices.SortFunc(res, func(a, b *analyze.Result) int { return strings.Compare(a.Tag, b.Tag) })
		for _, x := range res {
			if x.Stats == nil {
				singles = append(singles, []string{g.Key, CSVName(x.Header, x.Unit), csvValue(x)})
				continue
			}
			row := []string{g.Key, CSVName(x.Header, x.Unit)}
			for _, k := range csvStatKeys {
				row = append(row, csvNumber(x.Stats.Stat(k)))
			}
			dists = append(dists, row)
		}
	}
	cw.Write(nil)
	cw.Write(append([]string{"Group", "Metric"}, csvStatKeys[:]...))
	for _, row := range dists {
		cw.Write(row)
	}
	cw.Write(nil)
	cw.Write([]string{"Group", "Metric", "Value"})
	for _, row := range singles {
		cw.Write(row)
	}
}
