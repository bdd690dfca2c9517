package analyze

import (
	"math"

	"github.com/llmbench/llmbench/analyze/accum"
)

// The run-level results: every metric a collector (the whole run, or one time slice) has
// values for, and the single values derived from its totals and windows (perrun.go); the
// notes on them are in notes.go.

// resultEnv is what results needs beyond the collector.
type resultEnv struct {
	durNs       int64
	lost        int64
	warmup      int64
	offered     float64     // the plan's own rate (mmapds.Offer.Rate); 0 for a closed loop
	nominal     float64     // the rate asked for (--request-rate, --user-centric-rate); 0 otherwise
	cpu         *accum.Dist // worker_cpu_utilization's samples (PerSample)
	workers     []WorkerSummary
	gpus        []GPUSummary
	concurrency int
	whole       bool // the whole run, not a slice
}

// results computes every metric of the registry the collector has values for, in id order:
// record metrics' statistics, single values from their per-run formulas (perrun.go).
func (a *analysis) results(c *collector, env resultEnv) []Result {
	reg := c.reg
	f := &runFacts{c: c, env: &env, rec: make([]*Stats, len(reg.defs)), durS: float64(env.durNs) / 1e9,
		tokens: a.in.ep.ProducesTokens, goodput: len(a.opts.Goodput) > 0}
	var out []Result
	for id := range reg.defs {
		def := reg.defs[id]
		switch {
		case def.Kind == Record && def.Alias >= 0:
			if st := f.rec[def.Alias]; st != nil {
				cp := *st
				f.rec[id] = &cp
			}
		case def.Kind == Record:
			d := c.d[id]
			if def.Sampling == PerSample {
				d = env.cpu
			}
			f.rec[id] = d.Stats(def.div)
		default:
			v := reg.perRun[id](f)
			if !v.ok {
				continue
			}
			r := Result{MetricDef: def, Value: v.v}
			if def.Int {
				r.Exact = int64(math.Round(v.v))
				if v.exact {
					r.Exact = v.n
				}
			}
			out = append(out, r)
			continue
		}
		if st := f.rec[id]; st != nil {
			r := Result{MetricDef: def, Stats: st}
			if def.User {
				r.Skipped = c.skipped[id]
			}
			out = append(out, r)
		}
	}
	return out
}
