package analyze

import "math"

// The per-run formulas of the built-in single values (builtin.go names them): each takes a
// collector's totals and windows (the whole run, or one time slice), the statistics of its
// record metrics, and what the run adds (its duration, lost and warmup requests, offered
// rate, workers and GPUs), and gives the value in the display unit, or none.

// runFacts is what the per-run formulas see.
type runFacts struct {
	c   *collector
	env *resultEnv
	// rec are the record metrics' statistics, by MetricID (nil: no values).
	rec  []*Stats
	durS float64
	// tokens: the endpoint produces tokens; goodput: --goodput objectives were given.
	tokens, goodput bool
}

// rate is n over the duration, NaN (no value) without one.
func (f *runFacts) rate(n float64) float64 {
	if f.durS <= 0 {
		return math.NaN()
	}
	return n / f.durS
}

func (f *runFacts) any() bool      { return f.c.valid+f.c.errors > 0 }
func (f *runFacts) tokenRun() bool { return f.tokens && f.c.valid > 0 }

// scalar is a single value: v, and for whole numbers too large for a float64's 53 bits
// (timestamps in ns) the exact n.
type scalar struct {
	v     float64
	n     int64
	ok    bool
	exact bool
}

// val is v as a value when cond holds and v is finite.
func val(cond bool, v float64) scalar {
	return scalar{v: v, ok: cond && !math.IsNaN(v) && !math.IsInf(v, 0)}
}

// whole is n exactly, when cond holds.
func whole(cond bool, n int64) scalar { return scalar{v: float64(n), n: n, ok: cond, exact: true} }

// Requests and time.

func requestCount(f *runFacts) scalar      { return val(true, float64(f.c.valid)) }
func errorRequestCount(f *runFacts) scalar { return val(true, float64(f.c.errors)) }
func benchmarkDuration(f *runFacts) scalar { return val(f.any(), f.durS) }
func requestThroughput(f *runFacts) scalar { return val(f.any(), f.rate(float64(f.c.valid))) }
func minRequestTimestamp(f *runFacts) scalar {
	return whole(f.c.benchWin.ok, f.c.benchWin.lo)
}
func maxResponseTimestamp(f *runFacts) scalar {
	return whole(f.c.benchWin.ok, f.c.benchWin.hi)
}

// Goodput (AIPerf §5.5): requests meeting every --goodput objective.

func goodRequestCount(f *runFacts) scalar { return val(f.goodput, float64(f.c.good)) }
func goodput(f *runFacts) scalar          { return val(f.goodput, f.rate(float64(f.c.good))) }
func goodFraction(f *runFacts) scalar {
	return val(f.goodput && f.any(), float64(f.c.good)/float64(f.c.valid+f.c.errors))
}

// Tokens and items.

func outputThroughput(f *runFacts) scalar { return val(f.tokenRun(), f.rate(f.c.totalOSL.Value())) }
func totalThroughput(f *runFacts) scalar {
	return val(f.tokenRun(), f.rate(f.c.totalISL.Value()+f.c.totalOSL.Value()))
}
func itemThroughput(f *runFacts) scalar {
	return val(!f.tokens && f.c.valid > 0 && f.rec[MItemCount] != nil, f.rate(f.c.totalItems.Value()))
}
func totalISL(f *runFacts) scalar          { return val(f.tokenRun(), f.c.totalISL.Value()) }
func totalOSL(f *runFacts) scalar          { return val(f.tokenRun(), f.c.totalOSL.Value()) }
func totalOutputTokens(f *runFacts) scalar { return val(f.tokenRun(), f.c.totalOut.Value()) }
func totalReasoningTokens(f *runFacts) scalar {
	return val(f.tokenRun() && f.rec[MReasoningTokenCount] != nil, f.c.totalReason.Value())
}
func totalErrorISL(f *runFacts) scalar {
	return val(f.tokens && f.rec[MErrorISL] != nil, f.c.totalErrISL.Value())
}
func oslMismatchCount(f *runFacts) scalar {
	return val(f.rec[MOSLMismatchDiffPct] != nil, float64(f.c.oslMismatch))
}
func usageDiscrepancyCount(f *runFacts) scalar {
	has := f.rec[MUsagePromptTokensDiffPct] != nil || f.rec[MUsageCompletionTokensDiffPct] != nil || f.rec[MUsageReasoningTokensDiffPct] != nil
	return val(has, float64(f.c.usageDiscrepancy))
}

// usageSum is the formula of the total of usage field i (prompt, completion, total,
// reasoning), when any request had it.
func usageSum(i int) func(*runFacts) scalar {
	return func(f *runFacts) scalar { return val(f.c.usageSeen[i], f.c.usage[i].Value()) }
}

// Schedule and client (ours); the whole run's only, except the dispatched rate.

func warmupCount(f *runFacts) scalar { return val(f.env.whole, float64(f.env.warmup)) }
func lostCount(f *runFacts) scalar   { return val(f.env.whole, float64(f.env.lost)) }
func offeredRate(f *runFacts) scalar { return val(f.env.whole && f.env.offered > 0, f.env.offered) }
func nominalRate(f *runFacts) scalar { return val(f.env.whole && f.env.nominal > 0, f.env.nominal) }

// dispatchedRate is, for the whole run, the sends after the first over the time between the
// first and the last; for a slice, its sends over its width.
func dispatchedRate(f *runFacts) scalar {
	c := f.c
	if !f.env.whole {
		return val(c.sent > 0, f.rate(float64(c.sent)))
	}
	return val(c.sent >= 2 && c.sendWin.hi > c.sendWin.lo, float64(c.sent-1)/(float64(c.sendWin.hi-c.sendWin.lo)/1e9))
}

func completedRate(f *runFacts) scalar {
	c := f.c
	return val(f.env.whole && c.completed > 0 && c.sendWin.ok && c.endWin.hi > c.sendWin.lo,
		float64(c.completed)/(float64(c.endWin.hi-c.sendWin.lo)/1e9))
}

func sameReadCount(f *runFacts) scalar { return val(f.c.gaps > 0, float64(f.c.sameRead)) }
func sameReadPct(f *runFacts) scalar {
	return val(f.c.gaps > 0, float64(f.c.sameRead)/float64(f.c.gaps)*100)
}

func maxWorkerCPU(f *runFacts) scalar {
	maxCPU, any := 0.0, false
	for _, w := range f.env.workers {
		if w.CPUPct >= 0 {
			maxCPU, any = math.Max(maxCPU, w.CPUPct), true
		}
	}
	return val(f.env.whole && any, maxCPU)
}

// GPU energy (AIPerf §5.7), from the telemetry of the whole run.

// gpuTotals sums the GPUs' average power and their energy over the profile window.
func (f *runFacts) gpuTotals() (power float64, havePower bool, energy float64, haveEnergy bool) {
	if !f.env.whole {
		return
	}
	for _, g := range f.env.gpus {
		if g.Power != nil {
			power += g.Power.Avg
			havePower = true
		}
		if g.HasEnergy {
			energy += g.EnergyJ
			haveEnergy = true
		}
	}
	return
}

func totalGPUPower(f *runFacts) scalar {
	p, ok, _, _ := f.gpuTotals()
	return val(ok, p)
}

func totalGPUEnergy(f *runFacts) scalar {
	_, _, e, ok := f.gpuTotals()
	return val(ok, e)
}

func tokensPerJoule(f *runFacts) scalar {
	_, _, e, ok := f.gpuTotals()
	return val(ok && e > 0, f.c.totalOut.Value()/e)
}

func energyPerUser(f *runFacts) scalar {
	_, _, e, ok := f.gpuTotals()
	return val(ok && e > 0 && f.env.concurrency > 0, e/float64(f.env.concurrency))
}
