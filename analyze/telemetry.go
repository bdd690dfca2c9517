package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/analyze/accum"
	"github.com/llmbench/llmbench/rawlog"
)

// Worker CPU and GPU telemetry, both judged over the profile window (first send to last
// response), like AIPerf's GPU efficiency metrics.

// energyGraceNs extends the energy window past the last response, as AIPerf does, so the
// counter sample after the end is included.
const energyGraceNs = 666_000_000

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

// bracket returns the CPU samples that enclose [lo, hi] as tightly as the samples allow: the
// last at or before lo (else the first) and the first at or after hi (else the last).
func bracket(samples []rawlog.CPUSample, lo, hi int64) (first, last rawlog.CPUSample, ok bool) {
	s := usableCPU(samples)
	if len(s) < 2 {
		return first, last, false
	}
	fi, li := 0, len(s)-1
	for i := range s {
		if s[i].TimeNs <= lo {
			fi = i
		}
	}
	for i := len(s) - 1; i >= 0; i-- {
		if s[i].TimeNs >= hi {
			li = i
		}
	}
	if s[li].TimeNs <= s[fi].TimeNs {
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

// GPUSummary is one GPU's telemetry over the profile window.
type GPUSummary struct {
	Run  int
	GPU  int
	UUID string
	// Name is the model name replay recorded in run.json options ("gpus"), or "".
	Name    string
	Samples int
	// Stats per NVML field in display units (W, %, GB, MHz, °C); nil when never read.
	Power, Util, MemUtil, MemUsedGB, SMClock, Temp *Stats
	// EnergyJ is the energy counter's increase over the window plus grace, in joules.
	EnergyJ   float64
	HasEnergy bool
}

type gpuKey struct {
	run, gpu int
	uuid     string
}

// gpuSummaries summarises the GPU samples of every log by GPU: a GPU that several runs
// sampled (shards on one machine, or reading one DCGM exporter: the same UUID) is one GPU,
// its samples pooled, listed under the first run that sampled it.
func gpuSummaries(parts []*logAnalysis, in *input, startWall, endWall int64) []GPUSummary {
	type acc struct {
		key                                    gpuKey
		n                                      int
		power, util, memUtil, mem, clock, temp *accum.Dist
		firstE, lastE                          rawlog.GPUSample
		firstEWall, lastEWall                  int64
		haveE                                  bool
	}
	byOrigin := map[string]*acc{}
	var keys []gpuKey
	byKey := map[gpuKey]*acc{}
	for i, p := range parts {
		if p == nil {
			continue
		}
		r := in.jobs[i].Run
		start := in.runs[r].Manifest.StartUnixNs
		lo, hi := startWall-start, endWall-start
		for _, g := range p.gpu {
			origin := gpuOrigin(in.runs[r].Manifest.Host, g.GPU, g.UUID)
			x := byOrigin[origin]
			if x == nil {
				k := gpuKey{run: r, gpu: g.GPU, uuid: g.UUID}
				x = &acc{key: k}
				for _, d := range []**accum.Dist{&x.power, &x.util, &x.memUtil, &x.mem, &x.clock, &x.temp} {
					*d = accum.NewDist(1<<20, 1000)
				}
				byOrigin[origin] = x
				byKey[k] = x
				keys = append(keys, k)
			}
			// The energy counter's first and last samples in the window, on the wall clock:
			// runs that sampled one GPU read one counter.
			if g.TimeNs >= lo && g.TimeNs <= hi+energyGraceNs && g.EnergyMillijoules >= 0 {
				wall := start + g.TimeNs
				if !x.haveE || wall < x.firstEWall {
					x.firstE, x.firstEWall = g, wall
				}
				if !x.haveE || wall >= x.lastEWall {
					x.lastE, x.lastEWall = g, wall
				}
				x.haveE = true
			}
			if g.TimeNs < lo || g.TimeNs > hi {
				continue
			}
			x.n++
			addIf := func(d *accum.Dist, v int64, scale float64) {
				if v >= 0 {
					d.Add(float64(v) * scale)
				}
			}
			addIf(x.power, g.PowerMilliwatts, 1e-3)
			addIf(x.util, g.GPUUtilPct, 1)
			addIf(x.memUtil, g.MemUtilPct, 1)
			addIf(x.mem, g.MemUsedBytes, 1e-9)
			addIf(x.clock, g.SMClockMHz, 1)
			addIf(x.temp, g.TempC, 1)
		}
	}
	slices.SortFunc(keys, func(a, b gpuKey) int {
		if c := cmp.Compare(a.run, b.run); c != 0 {
			return c
		}
		if c := cmp.Compare(a.gpu, b.gpu); c != 0 {
			return c
		}
		return cmp.Compare(a.uuid, b.uuid)
	})
	var out []GPUSummary
	for _, k := range keys {
		x := byKey[k]
		g := GPUSummary{Run: k.run, GPU: k.gpu, UUID: k.uuid, Name: gpuName(in.runs[k.run].Manifest, k.gpu, k.uuid), Samples: x.n,
			Power: x.power.Stats(1), Util: x.util.Stats(1), MemUtil: x.memUtil.Stats(1),
			MemUsedGB: x.mem.Stats(1), SMClock: x.clock.Stats(1), Temp: x.temp.Stats(1)}
		if x.haveE && x.lastEWall > x.firstEWall {
			// A counter reset gives a negative delta: clamp to 0 like AIPerf.
			g.EnergyJ = max(0, float64(x.lastE.EnergyMillijoules-x.firstE.EnergyMillijoules)/1e3)
			g.HasEnergy = true
		}
		if g.Samples == 0 && !g.HasEnergy {
			continue
		}
		out = append(out, g)
	}
	return out
}

// gpuName finds a GPU's model name in run.json's options.gpus, a list of "index:name:uuid".
func gpuName(m *rawlog.Manifest, index int, uuid string) string {
	list, _ := m.Options["gpus"].([]any)
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			continue
		}
		i := strings.IndexByte(s, ':')
		j := strings.LastIndexByte(s, ':')
		if i < 0 || j <= i {
			continue
		}
		if s[j+1:] == uuid || (uuid == "" && s[:i] == strconv.Itoa(index)) {
			return s[i+1 : j]
		}
	}
	return ""
}
