package analyze

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/llmbench/llmbench/analyze/accum"
	"github.com/llmbench/llmbench/analyze/serverside"
	"github.com/llmbench/llmbench/rawlog"
)

// Worker CPU telemetry, judged over the profile window (first send to last response), like
// AIPerf's GPU efficiency metrics; the GPUs' are package serverside's (GPUSummaries).

// runWindow converts the summary's wall-clock window to run r's monotonic clock.
func (a *analysis) runWindow(r int, s *Summary) (lo, hi int64) {
	start := a.in.runs[r].Manifest.StartUnixNs
	return s.StartUnixNs - start, s.EndUnixNs - start
}

// workerHealth computes each worker's CPU use over the profile window and notes workers that
// did not shut down cleanly.
func (a *analysis) workerHealth(parts []*logAnalysis, s *Summary, notes []string) ([]WorkerSummary, []string) {
	var out []WorkerSummary
	for i, job := range a.in.jobs {
		if job.Telemetry || job.Recovery {
			continue
		}
		p := parts[i]
		w := WorkerSummary{Run: job.Run, Worker: job.Worker, CPU: -1, Requests: p.seen, CPUPct: -1, Status: p.status, Torn: p.torn}
		for _, wi := range a.in.runs[job.Run].Manifest.Workers {
			if wi.ID == job.Worker {
				w.CPU = wi.CPU
			}
		}
		lo, hi := a.runWindow(job.Run, s)
		if first, last, ok := bracket(p.cpu, lo, hi); ok {
			cpu := (last.UserNs + last.SysNs) - (first.UserNs + first.SysNs)
			w.CPUPct = float64(cpu) / float64(last.TimeNs-first.TimeNs) * 100
		}
		switch {
		case p.missing:
			w.Status = "missing"
		case p.status == "":
			w.Status = "no footer"
			notes = append(notes, fmt.Sprintf("%s has no footer: worker %d did not shut down cleanly", job.Path, job.Worker))
		}
		out = append(out, w)
	}
	return out, notes
}

// bracket returns the CPU samples that enclose [lo, hi] as tightly as the samples allow
// (accum.Bracket).
func bracket(samples []rawlog.CPUSample, lo, hi int64) (first, last rawlog.CPUSample, ok bool) {
	s := usableCPU(samples)
	fi, li, ok := accum.Bracket(len(s), func(i int) int64 { return s[i].TimeNs }, lo, hi)
	if !ok {
		return first, last, false
	}
	return s[fi], s[li], true
}

// usableCPU returns the samples with known CPU times, in time order.
func usableCPU(samples []rawlog.CPUSample) []rawlog.CPUSample {
	s := make([]rawlog.CPUSample, 0, len(samples))
	for _, c := range samples {
		if c.UserNs >= 0 && c.SysNs >= 0 {
			s = append(s, c)
		}
	}
	slices.SortStableFunc(s, func(a, b rawlog.CPUSample) int { return cmp.Compare(a.TimeNs, b.TimeNs) })
	return s
}

// cpuDist is the distribution of per-interval CPU use (percent of one core) of every worker,
// over the sample intervals that overlap the profile window.
func (a *analysis) cpuDist(parts []*logAnalysis, s *Summary) *accum.Dist {
	d := accum.NewDist(a.opts.ExactLimit, catalog[MWorkerCPUUtilization].hdrScale)
	for i, job := range a.in.jobs {
		if job.Telemetry {
			continue
		}
		lo, hi := a.runWindow(job.Run, s)
		c := usableCPU(parts[i].cpu)
		for k := 1; k < len(c); k++ {
			dt := c[k].TimeNs - c[k-1].TimeNs
			if dt <= 0 || c[k].TimeNs < lo || c[k-1].TimeNs > hi {
				continue
			}
			cpu := (c[k].UserNs + c[k].SysNs) - (c[k-1].UserNs + c[k-1].SysNs)
			d.Add(float64(cpu) / float64(dt) * 100)
		}
	}
	return d
}

// GPUSummary is one GPU's telemetry over the profile window (serverside.GPUSummary).
type GPUSummary = serverside.GPUSummary
