package analyze

import (
	"fmt"

	"github.com/llmbench/llmbench/mmapds"
)

// The verdict: did the client shape the result? A fixed bound on the dispatch lag alone flips
// on noise (a VM whose timers wake 0.4-2.5 ms late at p99 fails a 1 ms bound with any
// client), so the lag is judged against what it distorts (docs/metrics.md, Verdict):
//
//   - the arrival process: the lag's p99 against the plan's mean inter-arrival gap;
//   - the latencies: the lag's p99 against TTFT p50 (request latency p50 without TTFT) and
//     ITL p50, since a client late to send by L is likely late to read by as much;
//   - the client's CPU: the busiest worker against MaxWorkerCPU;
//   - same-read batching: many 0 ms inter-chunk gaps while the client was busy.
//
// "These numbers describe the client" is reserved for a run where one of these shows the
// client shaped the result. A lag over the fixed bound that is small beside the gaps and the
// latencies only jittered the arrivals (latencies are measured from the actual send): the run
// is kept, with that said. The machine's floor, from the workers' self-calibration in
// run.json, is printed beside the lag.

// Verdict bounds (docs/metrics.md).
const (
	// lagOfGapBound: a p99 lag over this fraction of the mean gap reshapes the arrivals.
	lagOfGapBound = 0.25
	// lagOfTTFTBound and lagOfITLBound: a p99 lag over these fractions of TTFT p50 (request
	// latency p50 without TTFT) and ITL p50 is client delay the latencies may carry.
	lagOfTTFTBound = 0.25
	lagOfITLBound  = 0.5
	// sameReadBound and sameReadCPUBound: over this fraction of same-read (0 ms) gaps while
	// the busiest worker used at least this much of a core, the batching is the client's.
	sameReadBound    = 0.10
	sameReadCPUBound = 50.0
)

// VerdictContext is what a Verdict judged the lag against.
type VerdictContext struct {
	// FloorKnown says run.json had the workers' self-calibration; the floor figures are the
	// worst worker's: timer wake-up lag p50 and p99 (ms), loopback round trip p50 (µs),
	// one bare system call (µs).
	FloorKnown         bool
	FloorTimerLagP50Ms float64
	FloorTimerLagP99Ms float64
	FloorLoopbackRTTUs float64
	FloorSyscallUs     float64
	// MeanGapMs is the plan's mean inter-arrival gap (0 for a closed loop).
	MeanGapMs float64
	// LatencyName and LatencyP50Ms are the latency the lag is held against: TTFT, or the
	// request latency when there is no TTFT; ITLP50Ms is 0 without ITL.
	LatencyName  string
	LatencyP50Ms float64
	ITLP50Ms     float64
	// SameReadPct is the percentage of inter-chunk gaps that were 0 ms (several events in
	// one read).
	SameReadPct float64
	// Jitter says the lag was over the fixed bound but small beside the gaps and the
	// latencies: the arrivals were jittered, the run is kept.
	Jitter bool
}

// verdictInputs is what the verdict needs beyond the summary.
type verdictInputs struct {
	// ctx has the floor, the plan's gap and the same-read share filled in; a shard's
	// verdict passes the whole run's context, latencies included.
	ctx VerdictContext
}

// verdictFacts gathers the floor from the runs' manifests and the plan's gap.
func (a *analysis) verdictFacts(c *collector, meta *mmapds.Meta) verdictInputs {
	var in verdictInputs
	for _, r := range a.in.runs {
		for _, w := range r.Manifest.Workers {
			cal := w.Calibration
			if cal == nil {
				continue
			}
			x := &in.ctx
			x.FloorKnown = true
			x.FloorTimerLagP50Ms = max(x.FloorTimerLagP50Ms, float64(cal.TimerLagP50Ns)/1e6)
			x.FloorTimerLagP99Ms = max(x.FloorTimerLagP99Ms, float64(cal.TimerLagP99Ns)/1e6)
			x.FloorLoopbackRTTUs = max(x.FloorLoopbackRTTUs, float64(cal.LoopbackRTTP50Ns)/1e3)
			x.FloorSyscallUs = max(x.FloorSyscallUs, float64(cal.SyscallNs)/1e3)
		}
	}
	if r := a.in.offer.Rate(); r > 0 {
		in.ctx.MeanGapMs = 1e3 / r
	}
	if c.gaps > 0 {
		in.ctx.SameReadPct = float64(c.sameRead) / float64(c.gaps) * 100
	}
	return in
}

// verdict judges whether the client shaped the result.
func verdict(s *Summary, o *Options, in verdictInputs) Verdict {
	v := Verdict{MaxLagMs: float64(o.MaxScheduleLag) / 1e6, MaxCPUPct: o.MaxWorkerCPU * 100, BusiestWorker: -1,
		VerdictContext: in.ctx}
	if v.LatencyName == "" { // a shard's verdict gets the whole run's latencies
		if r := s.ResultOf(MTimeToFirstToken); r != nil && r.Stats != nil {
			v.LatencyName, v.LatencyP50Ms = r.Latency, r.Stats.P[4] // "TTFT"
		} else if r := s.ResultOf(MRequestLatency); r != nil && r.Stats != nil {
			v.LatencyName, v.LatencyP50Ms = r.Latency, r.Stats.P[4] // "request latency"
		}
		if r := s.ResultOf(MInterTokenLatency); r != nil && r.Stats != nil {
			v.ITLP50Ms = r.Stats.P[4]
		}
	}
	v.Jitter = false
	v.BusiestWorker, v.BusiestWorkerPct, v.SharedBy, v.CPUKnown = BusiestCPU(s.Workers)
	if r := s.ResultOf(MDispatchLag); r != nil && r.Stats != nil {
		v.LagKnown = true
		v.DispatchLagP99Ms = r.Stats.P[8]
		if v.DispatchLagP99Ms > v.MaxLagMs {
			if why := lagShapes(&v); why != "" {
				v.Reasons = append(v.Reasons, fmt.Sprintf("dispatch lag p99 %s ms > %s ms, %s", FormatNumber(v.DispatchLagP99Ms), FormatNumber(v.MaxLagMs), why))
			} else {
				v.Jitter = true
			}
		}
	}
	if v.CPUKnown && v.BusiestWorkerPct >= v.MaxCPUPct {
		v.Reasons = append(v.Reasons, fmt.Sprintf("%s at %s%% CPU ≥ %s%%", BusiestWords(&v), FormatNumber(v.BusiestWorkerPct), FormatNumber(v.MaxCPUPct)))
	}
	if v.CPUKnown && v.SameReadPct > sameReadBound*100 && v.BusiestWorkerPct >= sameReadCPUBound {
		v.Reasons = append(v.Reasons, fmt.Sprintf("%s%% of inter-chunk gaps are same-read while %s was at %s%% CPU (≥ %s%%): the client read late",
			FormatNumber(v.SameReadPct), BusiestWords(&v), FormatNumber(v.BusiestWorkerPct), FormatNumber(sameReadCPUBound)))
	}
	v.Known = v.LagKnown || v.CPUKnown
	v.Kept = v.Known && len(v.Reasons) == 0
	return v
}

// lagShapes says what a lag over the fixed bound distorted, "" when it is small beside the
// plan's gaps and the measured latencies.
func lagShapes(v *Verdict) string {
	lag := v.DispatchLagP99Ms
	switch {
	case v.MeanGapMs > 0 && lag > lagOfGapBound*v.MeanGapMs:
		return fmt.Sprintf("%s%% of the plan's mean gap %s ms (bound %s%%): the arrivals were not the plan's",
			FormatNumber(lag/v.MeanGapMs*100), FormatNumber(v.MeanGapMs), FormatNumber(lagOfGapBound*100))
	case v.LatencyP50Ms > 0 && lag > lagOfTTFTBound*v.LatencyP50Ms:
		return fmt.Sprintf("%s%% of %s p50 %s ms (bound %s%%)", FormatNumber(lag/v.LatencyP50Ms*100), v.LatencyName,
			FormatNumber(v.LatencyP50Ms), FormatNumber(lagOfTTFTBound*100))
	case v.ITLP50Ms > 0 && lag > lagOfITLBound*v.ITLP50Ms:
		return fmt.Sprintf("%s%% of ITL p50 %s ms (bound %s%%)", FormatNumber(lag/v.ITLP50Ms*100), FormatNumber(v.ITLP50Ms), FormatNumber(lagOfITLBound*100))
	case v.MeanGapMs == 0 && v.LatencyP50Ms == 0:
		return "and there is no gap or latency to hold it against"
	}
	return ""
}

// BusiestCPU finds the client's busiest core over the profile window: the busiest worker,
// or, when workers were pinned to one CPU together and their sum is higher, that CPU (its
// workers' CPU summed, sharedBy of them, worker the busiest). known is false without CPU
// samples.
func BusiestCPU(workers []WorkerSummary) (worker int, pct float64, sharedBy int, known bool) {
	worker = -1
	type core struct{ run, cpu int }
	sum := map[core]float64{}
	n := map[core]int{}
	top := map[core]int{} // the busiest worker of each core
	topPct := map[core]float64{}
	for _, w := range workers {
		if w.CPUPct < 0 {
			continue
		}
		known = true
		if w.CPUPct > pct || worker < 0 {
			worker, pct = w.Worker, w.CPUPct
		}
		if w.CPU >= 0 {
			k := core{w.Run, w.CPU}
			sum[k] += w.CPUPct
			n[k]++
			if _, ok := top[k]; !ok || w.CPUPct > topPct[k] {
				top[k], topPct[k] = w.Worker, w.CPUPct
			}
		}
	}
	for k, c := range n {
		if c > 1 && (sum[k] > pct || sum[k] == pct && c > sharedBy) {
			worker, pct, sharedBy = top[k], sum[k], c
		}
	}
	return worker, pct, sharedBy, known
}

// BusiestWords names the busiest core for the verdict: "worker N", or "CPU of worker N
// (shared by K workers)".
func BusiestWords(v *Verdict) string {
	if v.SharedBy > 1 {
		return fmt.Sprintf("CPU of worker %d (shared by %d workers)", v.BusiestWorker, v.SharedBy)
	}
	return fmt.Sprintf("worker %d", v.BusiestWorker)
}
