package serverside

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/analyze/accum"
	"github.com/llmbench/llmbench/analyze/rundir"
	"github.com/llmbench/llmbench/rawlog"
)

// GPU telemetry over the profile window, like AIPerf's GPU efficiency metrics.

// EnergyGraceNs extends the energy window past the last response, as AIPerf does, so the
// counter sample after the end is included.
const EnergyGraceNs = 666_000_000

// GPUSummary is one GPU's telemetry over the profile window.
type GPUSummary struct {
	Run  int
	GPU  int
	UUID string
	// Name is the model name replay recorded in run.json options ("gpus"), or "".
	Name    string
	Samples int
	// Stats per NVML field in display units (W, %, GB, MHz, °C); nil when never read.
	Power, Util, MemUtil, MemUsedGB, SMClock, Temp *accum.Stats
	// EnergyJ is the energy counter's increase over the window plus grace, in joules.
	EnergyJ   float64
	HasEnergy bool
}

type gpuKey struct {
	run, gpu int
	uuid     string
}

// GPUSummaries summarises the GPU samples of every log by GPU over [startWall, endWall]
// (wall clock, ns): a GPU that several runs
// sampled (shards on one machine, or reading one DCGM exporter: the same UUID) is one GPU,
// its samples pooled, listed under the first run that sampled it.
func GPUSummaries(runs []rundir.Run, gpus []GPULog, startWall, endWall int64) []GPUSummary {
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
	for _, p := range gpus {
		r := p.Run
		start := runs[r].Manifest.StartUnixNs
		lo, hi := startWall-start, endWall-start
		for _, g := range p.Samples {
			origin := gpuOrigin(runs[r].Manifest.Host, g.GPU, g.UUID)
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
			if g.TimeNs >= lo && g.TimeNs <= hi+EnergyGraceNs && g.EnergyMillijoules >= 0 {
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
		g := GPUSummary{Run: k.run, GPU: k.gpu, UUID: k.uuid, Name: gpuName(runs[k.run].Manifest, k.gpu, k.uuid), Samples: x.n,
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
