package analyze

import (
	"fmt"
	"math"
)

// The run-level results: every metric a collector (the whole run, or one time slice) has
// values for, the single values derived from its totals and windows, and the notes on them.

// resultEnv is what results needs beyond the collector.
type resultEnv struct {
	durNs       int64
	lost        int64
	warmup      int64
	offered     float64
	cpu         *dist
	workers     []WorkerSummary
	gpus        []GPUSummary
	concurrency int
	whole       bool // the whole run, not a slice
}

// results computes every metric the collector has values for, in catalog order.
func (a *analysis) results(c *collector, env resultEnv) []Result {
	var out []Result
	var rec [numMetrics]*Stats
	for id := MetricID(0); id < MetricID(numRecord); id++ {
		d := c.d[id]
		if id == MWorkerCPUUtilization {
			d = env.cpu
		}
		if st := d.stats(catalog[id].div); st != nil {
			rec[id] = st
		}
	}
	for id := MetricID(numRecord); id < numMetrics; id++ {
		if catalog[id].Kind == Record && catalog[id].Alias >= 0 && rec[catalog[id].Alias] != nil {
			st := *rec[catalog[id].Alias]
			rec[id] = &st
		}
	}
	vals := map[MetricID]float64{}
	set := func(id MetricID, v float64) {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			vals[id] = v
		}
	}
	exact := map[MetricID]int64{}
	setInt := func(id MetricID, n int64) {
		vals[id], exact[id] = float64(n), n
	}
	durS := float64(env.durNs) / 1e9
	rate := func(n float64) float64 {
		if durS <= 0 {
			return math.NaN()
		}
		return n / durS
	}
	tokens := a.in.ep.ProducesTokens
	set(MRequestCount, float64(c.valid))
	set(MErrorRequestCount, float64(c.errors))
	if c.valid+c.errors > 0 {
		set(MBenchmarkDuration, durS)
		set(MRequestThroughput, rate(float64(c.valid)))
	}
	if c.benchWin.ok {
		setInt(MMinRequestTimestamp, c.benchWin.lo)
		setInt(MMaxResponseTimestamp, c.benchWin.hi)
	}
	if tokens && c.valid > 0 {
		set(MOutputTokenThroughput, rate(c.totalOSL.value()))
		set(MTotalTokenThroughput, rate(c.totalISL.value()+c.totalOSL.value()))
		set(MTotalISL, c.totalISL.value())
		set(MTotalOSL, c.totalOSL.value())
		set(MTotalOutputTokens, c.totalOut.value())
		if rec[MReasoningTokenCount] != nil {
			set(MTotalReasoningTokens, c.totalReason.value())
		}
	}
	if !tokens && c.valid > 0 && rec[MItemCount] != nil {
		set(MItemThroughput, rate(c.totalItems.value()))
	}
	if tokens && rec[MErrorISL] != nil {
		set(MTotalErrorISL, c.totalErrISL.value())
	}
	if len(a.opts.Goodput) > 0 {
		set(MGoodRequestCount, float64(c.good))
		set(MGoodput, rate(float64(c.good)))
		if c.valid+c.errors > 0 {
			set(MGoodRequestFraction, float64(c.good)/float64(c.valid+c.errors))
		}
	}
	if rec[MOSLMismatchDiffPct] != nil {
		set(MOSLMismatchCount, float64(c.oslMismatch))
	}
	if rec[MUsagePromptTokensDiffPct] != nil || rec[MUsageCompletionTokensDiffPct] != nil || rec[MUsageReasoningTokensDiffPct] != nil {
		set(MUsageDiscrepancyCount, float64(c.usageDiscrepancy))
	}
	for i, id := range [...]MetricID{MTotalUsagePromptTokens, MTotalUsageCompletionTokens, MTotalUsageTotalTokens, MTotalUsageReasoningTokens} {
		if c.usageSeen[i] {
			set(id, c.usage[i].value())
		}
	}
	if c.gaps > 0 {
		set(MSameReadChunkGapCount, float64(c.sameRead))
		set(MSameReadChunkGapPct, float64(c.sameRead)/float64(c.gaps)*100)
	}
	if env.whole {
		set(MWarmupRequestCount, float64(env.warmup))
		set(MLostRequestCount, float64(env.lost))
		if env.offered > 0 {
			set(MOfferedRequestRate, env.offered)
		}
		if c.sent >= 2 && c.sendWin.hi > c.sendWin.lo {
			set(MDispatchedRequestRate, float64(c.sent-1)/(float64(c.sendWin.hi-c.sendWin.lo)/1e9))
		}
		if c.completed > 0 && c.sendWin.ok && c.endWin.hi > c.sendWin.lo {
			set(MCompletedRequestRate, float64(c.completed)/(float64(c.endWin.hi-c.sendWin.lo)/1e9))
		}
		maxCPU, any := 0.0, false
		for _, w := range env.workers {
			if w.CPUPct >= 0 {
				maxCPU, any = math.Max(maxCPU, w.CPUPct), true
			}
		}
		if any {
			set(MMaxWorkerCPUUtilization, maxCPU)
		}
		gpuResults(env.gpus, c.totalOut.value(), env.concurrency, set)
	} else {
		if c.sent > 0 {
			set(MDispatchedRequestRate, rate(float64(c.sent)))
		}
	}
	for id := MetricID(0); id < numMetrics; id++ {
		def := catalog[id]
		if def.Kind == Record {
			if rec[id] != nil {
				out = append(out, Result{MetricDef: def, Stats: rec[id]})
			}
			continue
		}
		if v, ok := vals[id]; ok {
			r := Result{MetricDef: def, Value: v}
			if def.Int {
				r.Exact = int64(math.Round(v))
				if n, ok := exact[id]; ok {
					r.Exact = n
				}
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
