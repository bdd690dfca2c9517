package benchclaim

import (
	"fmt"
	"slices"
	"strings"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/analyze/judge"
)

// Options is the evidence the benchmark claim is judged from, beyond the summary.
type Options struct {
	// Generator is the generator validation for this run, nil when there is none;
	// GeneratorFile names where it came from. Run is the run's identity it must match.
	Generator     *GeneratorValidation
	GeneratorFile string
	Run           RunIdentity
	// Shape is the workload shape report (ValidateShape); nil when it was not
	// computed.
	Shape *ShapeReport
	// Gates are every gate the run is held to (--gate and the --gates file's); Agreed is
	// the --gates file, nil without one.
	Gates  []judge.Gate
	Agreed *judge.GatesFile
}

// Evaluate judges the benchmark claim of s (docs/metrics.md "The benchmark claim"), sets
// s.Claim and returns it: Trustworthy = Generator ∧ Shape ∧ Thresholds.
func Evaluate(s *analyze.Summary, o Options) *analyze.Claim {
	return analyze.NewClaim(s, GeneratorClaim(s, o.Generator, o.GeneratorFile, o.Run), ShapeClaim(o.Shape),
		thresholdsPart(o.Gates, o.Agreed))
}

// GeneratorClaim is the claim's generator part: the run's own verdict (Summary.Verdict) must
// hold, and g, a generator validation (read from file) made for this plan, machine and
// workers (run), must have passed. g is nil when there is none.
func GeneratorClaim(s *analyze.Summary, g *GeneratorValidation, file string, run RunIdentity) analyze.ClaimPart {
	figs := map[string]float64{}
	v := s.Verdict
	if v.LagKnown {
		figs["run_dispatch_lag_p99_ms"] = round4(v.DispatchLagP99Ms)
	}
	if v.CPUKnown {
		figs["run_busiest_worker_cpu_pct"] = round4(v.BusiestWorkerPct)
	}
	if g != nil {
		for k, x := range g.Figures {
			figs[k] = x
		}
	}
	if v.Known && !v.Kept {
		return analyze.NewClaimPart(analyze.StatusFailed, "the run did not keep its schedule: "+strings.Join(v.Reasons, "; "), figs)
	}
	if g == nil {
		return analyze.NewClaimPart(analyze.StatusNotValidated, "no generator validation: run profile --validate-generator (or replay --validate), or give --generator-validation FILE", figs)
	}
	if why := g.Mismatch(run); why != "" {
		return analyze.NewClaimPart(analyze.StatusNotValidated, fmt.Sprintf("the generator validation %s does not stand for this run: %s", file, why), figs)
	}
	shared := ""
	if g.SharedCPUs {
		shared = "; no CPU was free of workers, so it measured client and mock server together"
	}
	if !g.Passed {
		return analyze.NewClaimPart(analyze.StatusFailed, fmt.Sprintf("the generator validation %s failed: %s%s", file, strings.Join(g.Reasons, "; "), shared), figs)
	}
	if !v.Known {
		return analyze.NewClaimPart(analyze.StatusNotValidated, "the generator validation passed, but this run's own schedule could not be judged (no request sent, no CPU sampled)", figs)
	}
	errs := fmt.Sprintf("errors within tolerance (TTFT p99 %s ms, inter-chunk p99 %s ms)", analyze.FormatNumber(g.Figures[FigTTFTP99Error]), analyze.FormatNumber(g.Figures[FigICLP99Error]))
	if t99, ok := g.Figures[FigClientTTFTP99]; ok {
		recv := ""
		if r99, ok := g.Figures[FigReceiveP99]; ok {
			recv = ", receive delay p99 " + analyze.FormatNumber(r99) + " ms"
		}
		if e99, ok := g.Figures[FigTTFTP99Error]; ok {
			recv += "; measured − configured, with the mock server's lateness, TTFT p99 " + analyze.FormatNumber(e99) + " ms"
		}
		errs = fmt.Sprintf("the client's own share within tolerance (TTFT p99 %s ms%s)", analyze.FormatNumber(t99), recv)
	}
	return analyze.NewClaimPart(analyze.StatusValidated, fmt.Sprintf("validated against a mock server (TTFT %s ms, ITL %s ms) on %s with %d workers: %s, and this run kept its schedule%s",
		analyze.FormatNumber(g.Mock.TTFTMs), analyze.FormatNumber(g.Mock.ITLMs), g.Machine.Host, g.Workers, errs, shared), figs)
}

// ShapeClaim is the claim's shape part: a reference must have been given and every
// comparison of r, the workload shape report (nil: not computed), and the plan's own arrival
// fidelity must pass.
func ShapeClaim(r *ShapeReport) analyze.ClaimPart {
	if r == nil {
		return analyze.NewClaimPart(analyze.StatusNotValidated, "the workload shape was not compared with a reference: give --validate-shape REFERENCE (a trace, a production sample or another run)", nil)
	}
	figs := r.figures()
	if fails := r.failures(); len(fails) > 0 {
		return analyze.NewClaimPart(analyze.StatusFailed, "the workload shape differs: "+strings.Join(fails, "; "), figs)
	}
	if r.Reference == "" {
		return analyze.NewClaimPart(analyze.StatusNotValidated, "no reference given (--validate-shape REFERENCE): "+r.describe(), figs)
	}
	return analyze.NewClaimPart(analyze.StatusValidated, "matches "+r.Reference+": "+r.describe(), figs)
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
func thresholdsPart(gates []judge.Gate, agreed *judge.GatesFile) analyze.ClaimPart {
	figs := map[string]float64{"gates": float64(len(gates))}
	if len(gates) == 0 {
		return analyze.NewClaimPart(analyze.StatusNotValidated, "thresholds not validated: no gates (--gate, --gates FILE)", figs)
	}
	var latency []string
	context, agreedN := 0, 0
	var unagreed []string
	for _, g := range gates {
		if name := g.Metric.Latency; name != "" && !slices.Contains(latency, name) {
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
		return analyze.NewClaimPart(analyze.StatusNotValidated, "thresholds not validated: "+strings.Join(why, "; "), figs)
	}
	ev := fmt.Sprintf("%d gates agreed in %s", len(gates), agreed.Path)
	if len(latency) > 0 {
		ev += fmt.Sprintf(", latency gates paired with %d capacity gates", context)
	}
	return analyze.NewClaimPart(analyze.StatusValidated, ev, figs)
}
