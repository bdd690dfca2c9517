package analyze

import (
	"encoding/csv"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// How the selection (--where), the groups (--group-by) and the user metrics' definitions
// appear in the console, profile_export_aiperf.json and profile_export_aiperf.csv, so that
// every export says how its numbers were made.

// writeGroupsConsole writes one block per group: its table and its counts.
func writeGroupsConsole(b *strings.Builder, s *Summary) {
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
func GroupConsoleRows(s *Summary, g *Group) []ConsoleRow {
	tags, rows := resultsTable(g.Results, hasReasoning(s))
	out := make([]ConsoleRow, len(rows))
	for i := range rows {
		out[i] = ConsoleRow{Tag: tags[i], Cells: rows[i]}
	}
	return out
}

// GroupLine is the console's line of group g: its requests and errors.
func GroupLine(s *Summary, g *Group) string {
	by := ""
	if s.Selection != nil {
		by = s.Selection.GroupBy
	}
	return groupLine(by, g)
}

// groupLine counts a group's requests and names its errors.
func groupLine(by string, g *Group) string {
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
func selectionJSON(r *SelectionReport) *ordered {
	o := &ordered{}
	if r.Where != "" {
		o.add("where", r.Where)
	}
	if r.GroupBy != "" {
		o.add("group_by", r.GroupBy)
	}
	return o.add("excluded", r.Excluded).add("excluded_no_value", r.NoValue).add("ungrouped", r.Ungrouped)
}

// groupsJSON is llmbench.groups: each group's counts, its metric blocks (AIPerf's shape) and
// the statistics those cannot carry.
func groupsJSON(groups []Group) []any {
	out := make([]any, 0, len(groups))
	for i := range groups {
		g := &groups[i]
		metrics := &ordered{}
		for j := range g.Results {
			metrics.add(g.Results[j].Tag, metricBlock(&g.Results[j]))
		}
		o := &ordered{}
		o.add("key", g.Key)
		o.add("counts", (&ordered{}).add("requests", g.Requests).add("valid", g.Valid).add("errors", g.Errors))
		o.add("metrics", metrics)
		o.add("extra_stats", extraStats(g.Results))
		o.add("error_summary", errorSummaryJSON(g.ErrorCounts))
		out = append(out, o)
	}
	return out
}

// errorSummaryJSON is AIPerf's error_summary list.
func errorSummaryJSON(counts []ErrorCount) []any {
	errs := make([]any, 0, len(counts))
	for _, e := range counts {
		d := &ordered{}
		if e.Code > 0 {
			d.add("code", e.Code)
		}
		d.add("type", e.Kind)
		d.add("message", e.Message)
		errs = append(errs, (&ordered{}).add("error_details", d).add("count", e.Count))
	}
	return errs
}

// userMetricsJSON is llmbench.user_metrics: each user metric's definition as given.
func userMetricsJSON(r *Registry) []any {
	var out []any
	for _, u := range r.or().user {
		d := r.def(u.id)
		o := &ordered{}
		o.add("name", d.Tag).add("unit", d.Unit)
		if d.Expression != "" {
			o.add("expression", d.Expression)
		}
		o.add("description", d.Description).add("larger_is_better", d.LargerIsBetter).add("failed_requests", d.failed)
		out = append(out, o)
	}
	return out
}

// writeSelectionCSV writes, after two blank rows, the selection (Selection,Expression,Excluded)
// and each group's metrics with the group as the first column: Group,Metric,avg,…,std for
// distributions, Group,Metric,Value for single values.
func writeSelectionCSV(cw *csv.Writer, s *Summary) {
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
		res := make([]*Result, len(g.Results))
		for j := range g.Results {
			res[j] = &g.Results[j]
		}
		slices.SortFunc(res, func(a, b *Result) int { return strings.Compare(a.Tag, b.Tag) })
		for _, x := range res {
			if x.Stats == nil {
				singles = append(singles, []string{g.Key, csvName(x.Header, x.Unit), csvValue(x)})
				continue
			}
			row := []string{g.Key, csvName(x.Header, x.Unit)}
			for _, k := range csvStatKeys {
				row = append(row, csvNumber(csvStat(x.Stats, k)))
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
