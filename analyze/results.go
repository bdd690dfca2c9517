package analyze

import (
	"fmt"
	"math"
)

// The run-level results: every metric a collector (the whole run, or one time slice) has
// values for, the single values derived from its totals and windows (perrun.go), and the
// notes on them.

// resultEnv is what results needs beyond the collector.
type resultEnv struct {
	durNs       int64
	lost        int64
	warmup      int64
	offered     float64
	cpu         *dist // worker_cpu_utilization's samples (PerSample)
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
			f.rec[id] = d.stats(def.div)
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

// notes are the warnings printed under the table.
func notes(s *Summary, c *collector) []string {
	var out []string
	if c.sameRead > 0 {
		out = append(out, fmt.Sprintf("%d of %d inter-chunk gaps (%s%%) are 0 ms because several events arrived in one socket read; they are not real inter-token latencies (see events_per_read; inter_chunk_latency and vllm_inter_token_latency include them)",
			c.sameRead, c.gaps, fmtNum(float64(c.sameRead)/float64(c.gaps)*100)))
	}
	if c.oslMismatch > 0 {
		out = append(out, fmt.Sprintf("%d requests produced an output length more than min(5%%, 50 tokens) away from the requested one (osl_mismatch_count): set ignore_eos/min_tokens, or use --use-server-token-count", c.oslMismatch))
	}
	if c.usageDiscrepancy > 0 {
		out = append(out, fmt.Sprintf("%d requests have server usage counts more than 10%% away from the client's (usage_discrepancy_count): is the plan's tokenizer the model's?", c.usageDiscrepancy))
	}
	var clientErrs int64
	for _, e := range s.Errors {
		if e.Kind == kindClientError {
			clientErrs += e.Count
		}
	}
	if clientErrs > 0 {
		out = append(out, fmt.Sprintf("%d requests failed with %s: the client, not the server, ran out of resources (file descriptors, local ports or socket buffers), so those requests measure the client: raise its limits (ulimit -n, net.ipv4.ip_local_port_range) or lower the concurrency (docs/metrics.md)",
			clientErrs, kindClientError))
	}
	return out
}
