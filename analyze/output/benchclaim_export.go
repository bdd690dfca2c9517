package output

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/internal/pyjson"
)

// The benchmark claim (analyze.Claim, judged by analyze/benchclaim) as the outputs write it:
// a few console lines, the JSON export's llmbench.benchmark_claim, the CSV export's rows.

// namedPart is a claim part with its name in the exports.
type namedPart struct {
	name string
	p    analyze.ClaimPart
}

// parts are the three parts in export order.
func claimParts(c *analyze.Claim) []namedPart {
	return []namedPart{{"generator", c.Generator}, {"shape", c.Shape}, {"thresholds", c.Thresholds}}
}

// ClaimLines are the console lines of the claim (ClaimConsoleLines, uncoloured).
func ClaimLines(c *analyze.Claim) []string {
	var out []string
	for _, l := range ClaimConsoleLines(c) {
		out = append(out, l.Text)
	}
	return out
}

// ClaimLine is a console line of the claim; Failed marks one that says a check failed (the
// only lines a terminal shows in colour).
type ClaimLine struct {
	Text   string
	Failed bool
}

// ClaimConsoleLines are the claim in a few lines: the conclusion, then one compact line per
// part (generator, schedule, shape, thresholds). A part that was not validated is
// information, said in words; only a part whose check failed is marked Failed and said in
// capitals, with its whole evidence.
func ClaimConsoleLines(c *analyze.Claim) []ClaimLine {
	if c == nil {
		return nil
	}
	type row struct {
		name, status, text string
	}
	gen := c.Generator
	rows := []row{{"generator", gen.Status, gen.Evidence}}
	if v := c.RunVerdict(); v.Known && !v.Kept {
		// benchclaim.GeneratorClaim fails a run that fell behind before it looks at any validation:
		// the schedule line below says why, once.
		rows[0].text = "this run did not keep its schedule (see schedule)"
	}
	rows = append(rows, scheduleRow(c.RunVerdict()))
	rows = append(rows, row{"shape", c.Shape.Status, c.Shape.Evidence}, row{"thresholds", c.Thresholds.Status, c.Thresholds.Evidence})
	var failed, unvalidated []string
	lines := []ClaimLine{{}}
	for _, r := range rows {
		ev := strings.TrimPrefix(r.text, r.name+" "+r.status+": ") // "thresholds not validated: ..." once
		l := ClaimLine{}
		switch r.status {
		case analyze.StatusFailed:
			failed = append(failed, r.name)
			l = ClaimLine{Text: fmt.Sprintf("  %-11s FAILED: %s", r.name, ev), Failed: true}
		case analyze.StatusValidated:
			l.Text = fmt.Sprintf("  %-11s %s", r.name, analyze.ClipWords(ev, claimEvidenceBytes))
		default:
			unvalidated = append(unvalidated, r.name)
			l.Text = fmt.Sprintf("  %-11s %s: %s", r.name, r.status, analyze.ClipWords(ev, claimEvidenceBytes))
		}
		lines = append(lines, l)
	}
	switch {
	case len(failed) > 0:
		lines[0] = ClaimLine{Text: "Benchmark claim: trustworthy: NO (" + strings.Join(failed, ", ") + " failed)", Failed: true}
	case c.Trustworthy && len(unvalidated) == 0:
		lines[0].Text = "Benchmark claim: trustworthy: yes (generator, schedule, shape and thresholds each validated)"
	default:
		lines[0].Text = "Benchmark claim: trustworthy: not shown (" + strings.Join(unvalidated, ", ") + " not validated; docs/metrics.md \"The benchmark claim\")"
	}
	return lines
}

// claimEvidenceBytes bounds the evidence of a part that did not fail on its console line
// (the exports keep it whole).
const claimEvidenceBytes = 110

// scheduleRow is the schedule's part of the claim's console lines, from the run's verdict.
func scheduleRow(v analyze.Verdict) (r struct{ name, status, text string }) {
	r.name = "schedule"
	switch {
	case !v.Known:
		r.status, r.text = "not judged", "no request was sent and no worker CPU was sampled"
	case !v.Kept:
		r.status, r.text = analyze.StatusFailed, "not kept: "+strings.Join(v.Reasons, "; ")+"; these numbers describe the client, not the server"
	default:
		r.status = analyze.StatusValidated
		var facts []string
		if v.LagKnown {
			facts = append(facts, fmt.Sprintf("dispatch lag p99 %s ms (bound %s ms)", analyze.FormatNumber(v.DispatchLagP99Ms), analyze.FormatNumber(v.MaxLagMs)))
		}
		if v.CPUKnown {
			facts = append(facts, fmt.Sprintf("busiest worker %s%% CPU (bound %s%%)", analyze.FormatNumber(v.BusiestWorkerPct), analyze.FormatNumber(v.MaxCPUPct)))
		}
		r.text = strings.TrimSuffix("kept: "+strings.Join(facts, ", "), ": ")
	}
	return r
}

// ClaimJSON is the claim in the JSON export (llmbench.benchmark_claim).
func ClaimJSON(c *analyze.Claim) *pyjson.Object {
	o := &pyjson.Object{}
	for _, p := range claimParts(c) {
		figs := &pyjson.Object{}
		for _, k := range slices.Sorted(maps.Keys(p.p.Figures)) {
			figs.Add(k, pyjson.Float(p.p.Figures[k]))
		}
		o.Add(p.name, (&pyjson.Object{}).Add("validated", p.p.Validated).Add("status", p.p.Status).
			Add("evidence", p.p.Evidence).Add("figures", figs))
	}
	o.Add("trustworthy", c.Trustworthy)
	return o
}

// ClaimCSVRows are the claim in the CSV export: Claim,Status,Validated,Evidence.
func ClaimCSVRows(c *analyze.Claim) [][]string {
	rows := [][]string{{"Claim", "Status", "Validated", "Evidence"}}
	for _, p := range claimParts(c) {
		rows = append(rows, []string{p.name, p.p.Status, strconv.FormatBool(p.p.Validated), p.p.Evidence})
	}
	return append(rows, []string{"trustworthy", "", strconv.FormatBool(c.Trustworthy), ""})
}
