package analyze

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/internal/pyjson"
)

// Claim statuses: each part of the benchmark claim is validated, not validated (no
// evidence was given) or failed (the evidence contradicts it).
const (
	StatusValidated    = "validated"
	StatusNotValidated = "not validated"
	StatusFailed       = "failed"
)

// ClaimPart is one of the three things a benchmark result rests on: the load generator,
// the workload shape or the acceptance thresholds.
type ClaimPart struct {
	// Validated is true only when Status is "validated".
	Validated bool
	// Status is StatusValidated, StatusNotValidated or StatusFailed.
	Status string
	// Evidence says, for people, what was checked and what was found.
	Evidence string
	// Figures are the numbers behind the evidence, by name (display units in the name).
	Figures map[string]float64
}

// Claim is the benchmark claim (docs/metrics.md "The benchmark claim"): a result is
// trustworthy only when the generator, the workload shape and the thresholds were each
// validated: Trustworthy = Generator ∧ Shape ∧ Thresholds.
type Claim struct {
	Generator, Shape, Thresholds ClaimPart
	Trustworthy                  bool
	// verdict is the run's own verdict: the schedule's console line (ClaimConsoleLines).
	verdict Verdict
}

// ClaimOptions is the evidence the claim is judged from, beyond the summary.
type ClaimOptions struct {
	// Generator is the generator validation for this run, nil when there is none;
	// GeneratorFile names where it came from. Run is the run's identity it must match.
	Generator     *GeneratorValidation
	GeneratorFile string
	Run           RunIdentity
	// Shape is the workload shape report (ValidateShape); nil when it was not computed.
	Shape *ShapeReport
	// Gates are every gate the run is held to (--gate and the --gates file's); Agreed is
	// the --gates file, nil without one.
	Gates  []Gate
	Agreed *GatesFile
}

// EvaluateClaim judges the benchmark claim of s (docs/metrics.md "The benchmark claim"),
// sets s.Claim and returns it.
func EvaluateClaim(s *Summary, o ClaimOptions) *Claim {
	c := &Claim{Generator: generatorPart(s, o), Shape: shapePart(o.Shape), Thresholds: thresholdsPart(o.Gates, o.Agreed)}
	c.Trustworthy = c.Generator.Validated && c.Shape.Validated && c.Thresholds.Validated
	c.verdict = s.Verdict
	s.Claim = c
	return c
}

func part(status, evidence string, figures map[string]float64) ClaimPart {
	if figures == nil {
		figures = map[string]float64{}
	}
	return ClaimPart{Validated: status == StatusValidated, Status: status, Evidence: evidence, Figures: figures}
}

// generatorPart: the run's own verdict (Summary.Verdict) must hold, and a generator
// validation made for this plan, machine and workers must have passed.
func generatorPart(s *Summary, o ClaimOptions) ClaimPart {
	figs := map[string]float64{}
	v := s.Verdict
	if v.LagKnown {
		figs["run_dispatch_lag_p99_ms"] = round4(v.DispatchLagP99Ms)
	}
	if v.CPUKnown {
		figs["run_busiest_worker_cpu_pct"] = round4(v.BusiestWorkerPct)
	}
	g := o.Generator
	if g != nil {
		for k, x := range g.Figures {
			figs[k] = x
		}
	}
	if v.Known && !v.Kept {
		return part(StatusFailed, "the run did not keep its schedule: "+strings.Join(v.Reasons, "; "), figs)
	}
	if g == nil {
		return part(StatusNotValidated, "no generator validation: run profile --validate-generator (or replay --validate), or give --generator-validation FILE", figs)
	}
	if why := g.Mismatch(o.Run); why != "" {
		return part(StatusNotValidated, fmt.Sprintf("the generator validation %s does not stand for this run: %s", o.GeneratorFile, why), figs)
	}
	shared := ""
	if g.SharedCPUs {
		shared = "; no CPU was free of workers, so it measured client and mock server together"
	}
	if !g.Passed {
		return part(StatusFailed, fmt.Sprintf("the generator validation %s failed: %s%s", o.GeneratorFile, strings.Join(g.Reasons, "; "), shared), figs)
	}
	if !v.Known {
		return part(StatusNotValidated, "the generator validation passed, but this run's own schedule could not be judged (no request sent, no CPU sampled)", figs)
	}
	errs := fmt.Sprintf("errors within tolerance (TTFT p99 %s ms, inter-chunk p99 %s ms)", fmtNum(g.Figures[FigTTFTP99Error]), fmtNum(g.Figures[FigICLP99Error]))
	if t99, ok := g.Figures[FigClientTTFTP99]; ok {
		recv := ""
		if r99, ok := g.Figures[FigReceiveP99]; ok {
			recv = ", receive delay p99 " + fmtNum(r99) + " ms"
		}
		if e99, ok := g.Figures[FigTTFTP99Error]; ok {
			recv += "; measured − configured, with the mock server's lateness, TTFT p99 " + fmtNum(e99) + " ms"
		}
		errs = fmt.Sprintf("the client's own share within tolerance (TTFT p99 %s ms%s)", fmtNum(t99), recv)
	}
	return part(StatusValidated, fmt.Sprintf("validated against a mock server (TTFT %s ms, ITL %s ms) on %s with %d workers: %s, and this run kept its schedule%s",
		fmtNum(g.Mock.TTFTMs), fmtNum(g.Mock.ITLMs), g.Machine.Host, g.Workers, errs, shared), figs)
}

// shapePart: a reference must have been given and every comparison (and the plan's own
// arrival fidelity) must pass.
func shapePart(r *ShapeReport) ClaimPart {
	if r == nil {
		return part(StatusNotValidated, "the workload shape was not compared with a reference: give --validate-shape REFERENCE (a trace, a production sample or another run)", nil)
	}
	figs := r.figures()
	if fails := r.failures(); len(fails) > 0 {
		return part(StatusFailed, "the workload shape differs: "+strings.Join(fails, "; "), figs)
	}
	if r.Reference == "" {
		return part(StatusNotValidated, "no reference given (--validate-shape REFERENCE): "+r.describe(), figs)
	}
	return part(StatusValidated, "matches "+r.Reference+": "+r.describe(), figs)
}

// latencyTags are the metrics whose gates need capacity context.
var latencyTags = map[string]string{
	"time_to_first_token": "TTFT", "time_to_second_token": "TTST", "time_to_first_output_token": "TTFO",
	"inter_token_latency": "ITL", "inter_chunk_latency": "inter-chunk", "request_latency": "request latency",
	"vllm_inter_token_latency": "ITL",
}

// contextWords name the capacity metrics (server.* and gpu.* gates of the server metrics,
// and the GPU telemetry metrics) that give a latency gate its context.
var contextWords = []string{"kv_cache", "queue", "waiting", "utilization", "power", "memory"}

// isContextGate reports whether expr gates a capacity metric: KV-cache usage, GPU
// utilisation, power or memory, queue depth.
func isContextGate(expr string) bool {
	lhs := strings.TrimSpace(expr)
	if i := strings.IndexAny(lhs, "<>="); i >= 0 {
		lhs = lhs[:i]
	}
	if !strings.HasPrefix(lhs, "server.") && !strings.HasPrefix(lhs, "gpu.") && !strings.Contains(lhs, "gpu") {
		return false
	}
	for _, w := range contextWords {
		if strings.Contains(lhs, w) {
			return true
		}
	}
	return false
}

// thresholdsPart: there are gates, every latency gate is paired with a capacity gate, and
// every gate is agreed in the --gates file (owner and reason).
func thresholdsPart(gates []Gate, agreed *GatesFile) ClaimPart {
	figs := map[string]float64{"gates": float64(len(gates))}
	if len(gates) == 0 {
		return part(StatusNotValidated, "thresholds not validated: no gates (--gate, --gates FILE)", figs)
	}
	var latency []string
	context, agreedN := 0, 0
	var unagreed []string
	for _, g := range gates {
		if name, ok := latencyTags[g.Metric.Tag]; ok && !slices.Contains(latency, name) {
			latency = append(latency, name)
		}
		if isContextGate(g.Expr) {
			context++
		}
		if _, ok := agreed.Agreed(g.Expr); ok {
			agreedN++
		} else {
			unagreed = append(unagreed, g.Expr)
		}
	}
	figs["latency_gates"], figs["context_gates"], figs["agreed_gates"] = float64(len(latency)), float64(context), float64(agreedN)
	var why []string
	if len(latency) > 0 && context == 0 {
		why = append(why, strings.Join(latency, "/")+" gate has no KV-cache/GPU context")
	}
	if len(unagreed) > 0 {
		if agreed == nil {
			why = append(why, "the gates are not agreed: give --gates FILE with an owner and a reason for each")
		} else {
			why = append(why, fmt.Sprintf("%s is not in %s: no owner or reason agreed", strings.Join(unagreed, ", "), agreed.Path))
		}
	}
	if len(why) > 0 {
		return part(StatusNotValidated, "thresholds not validated: "+strings.Join(why, "; "), figs)
	}
	ev := fmt.Sprintf("%d gates agreed in %s", len(gates), agreed.Path)
	if len(latency) > 0 {
		ev += fmt.Sprintf(", latency gates paired with %d capacity gates", context)
	}
	return part(StatusValidated, ev, figs)
}

// namedPart is a claim part with its name in the exports.
type namedPart struct {
	name string
	p    ClaimPart
}

// parts are the three parts in export order.
func (c *Claim) parts() []namedPart {
	return []namedPart{{"generator", c.Generator}, {"shape", c.Shape}, {"thresholds", c.Thresholds}}
}

// ClaimLines are the console lines of the claim (ClaimConsoleLines, uncoloured).
func ClaimLines(c *Claim) []string {
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
func ClaimConsoleLines(c *Claim) []ClaimLine {
	if c == nil {
		return nil
	}
	type row struct {
		name, status, text string
	}
	gen := c.Generator
	rows := []row{{"generator", gen.Status, gen.Evidence}}
	if v := c.verdict; v.Known && !v.Kept {
		// generatorPart fails a run that fell behind before it looks at any validation:
		// the schedule line below says why, once.
		rows[0].text = "this run did not keep its schedule (see schedule)"
	}
	rows = append(rows, scheduleRow(c.verdict))
	rows = append(rows, row{"shape", c.Shape.Status, c.Shape.Evidence}, row{"thresholds", c.Thresholds.Status, c.Thresholds.Evidence})
	var failed, unvalidated []string
	lines := []ClaimLine{{}}
	for _, r := range rows {
		ev := strings.TrimPrefix(r.text, r.name+" "+r.status+": ") // "thresholds not validated: ..." once
		l := ClaimLine{}
		switch r.status {
		case StatusFailed:
			failed = append(failed, r.name)
			l = ClaimLine{Text: fmt.Sprintf("  %-11s FAILED: %s", r.name, ev), Failed: true}
		case StatusValidated:
			l.Text = fmt.Sprintf("  %-11s %s", r.name, clipWords(ev, claimEvidenceBytes))
		default:
			unvalidated = append(unvalidated, r.name)
			l.Text = fmt.Sprintf("  %-11s %s: %s", r.name, r.status, clipWords(ev, claimEvidenceBytes))
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
func scheduleRow(v Verdict) (r struct{ name, status, text string }) {
	r.name = "schedule"
	switch {
	case !v.Known:
		r.status, r.text = "not judged", "no request was sent and no worker CPU was sampled"
	case !v.Kept:
		r.status, r.text = StatusFailed, "not kept: "+strings.Join(v.Reasons, "; ")+"; these numbers describe the client, not the server"
	default:
		r.status = StatusValidated
		var facts []string
		if v.LagKnown {
			facts = append(facts, fmt.Sprintf("dispatch lag p99 %s ms (bound %s ms)", fmtNum(v.DispatchLagP99Ms), fmtNum(v.MaxLagMs)))
		}
		if v.CPUKnown {
			facts = append(facts, fmt.Sprintf("busiest worker %s%% CPU (bound %s%%)", fmtNum(v.BusiestWorkerPct), fmtNum(v.MaxCPUPct)))
		}
		r.text = strings.TrimSuffix("kept: "+strings.Join(facts, ", "), ": ")
	}
	return r
}

// ClaimJSON is the claim in the JSON export (llmbench.benchmark_claim).
func ClaimJSON(c *Claim) *pyjson.Object {
	o := &pyjson.Object{}
	for _, p := range c.parts() {
		figs := &pyjson.Object{}
		for _, k := range sortedKeys(p.p.Figures) {
			figs.Add(k, pyjson.Float(p.p.Figures[k]))
		}
		o.Add(p.name, (&pyjson.Object{}).Add("validated", p.p.Validated).Add("status", p.p.Status).
			Add("evidence", p.p.Evidence).Add("figures", figs))
	}
	o.Add("trustworthy", c.Trustworthy)
	return o
}

// ClaimCSVRows are the claim in the CSV export: Claim,Status,Validated,Evidence.
func ClaimCSVRows(c *Claim) [][]string {
	rows := [][]string{{"Claim", "Status", "Validated", "Evidence"}}
	for _, p := range c.parts() {
		rows = append(rows, []string{p.name, p.p.Status, strconv.FormatBool(p.p.Validated), p.p.Evidence})
	}
	return append(rows, []string{"trustworthy", "", strconv.FormatBool(c.Trustworthy), ""})
}
