package judge

import (
	"fmt"
	"slices"
	"strings"

	"github.com/llmbench/llmbench/analyze"
)

// ClaimOptions is the evidence the benchmark claim is judged from, beyond the summary.
type ClaimOptions struct {
	// Generator is the generator validation for this run, nil when there is none;
	// GeneratorFile names where it came from. Run is the run's identity it must match.
	Generator     *analyze.GeneratorValidation
	GeneratorFile string
	Run           analyze.RunIdentity
	// Shape is the workload shape report (analyze.ValidateShape); nil when it was not
	// computed.
	Shape *analyze.ShapeReport
	// Gates are every gate the run is held to (--gate and the --gates file's); Agreed is
	// the --gates file, nil without one.
	Gates  []Gate
	Agreed *GatesFile
}

// EvaluateClaim judges the benchmark claim of s (docs/metrics.md "The benchmark claim"),
// sets s.Claim and returns it: the generator and shape parts are judged beside their
// evidence in analyze (analyze.GeneratorClaim, analyze.ShapeClaim), the thresholds here,
// where the gates are.
func EvaluateClaim(s *analyze.Summary, o ClaimOptions) *analyze.Claim {
	return analyze.NewClaim(s, analyze.GeneratorClaim(s, o.Generator, o.GeneratorFile, o.Run), analyze.ShapeClaim(o.Shape),
		thresholdsPart(o.Gates, o.Agreed))
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
func thresholdsPart(gates []Gate, agreed *GatesFile) analyze.ClaimPart {
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
