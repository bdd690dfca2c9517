package servermetrics

import (
	"cmp"
	"math"
	"slices"
	"strconv"

	"github.com/llmbench/llmbench/rawlog"
)

// DCGMField maps one DCGM exporter field onto a rawlog.GPUSample field, the one NVML fills.
type DCGMField struct {
	// Name is the DCGM field ("DCGM_FI_DEV_POWER_USAGE"); Unit its unit as exported.
	Name, Unit string
	// Scale converts the exported value to the GPUSample field's unit.
	Scale float64
	set   func(s *rawlog.GPUSample, v int64)
}

// DCGMFields is the DCGM → GPU-field table of docs/metrics.md ("GPU telemetry from DCGM"):
// AIPerf's default DCGM fields that NVML also reads.
var DCGMFields = []DCGMField{
	{"DCGM_FI_DEV_POWER_USAGE", "W", 1000, func(s *rawlog.GPUSample, v int64) { s.PowerMilliwatts = v }},
	{"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "mJ", 1, func(s *rawlog.GPUSample, v int64) { s.EnergyMillijoules = v }},
	{"DCGM_FI_DEV_GPU_UTIL", "%", 1, func(s *rawlog.GPUSample, v int64) { s.GPUUtilPct = v }},
	{"DCGM_FI_DEV_MEM_COPY_UTIL", "%", 1, func(s *rawlog.GPUSample, v int64) { s.MemUtilPct = v }},
	{"DCGM_FI_DEV_FB_USED", "MiB", 1 << 20, func(s *rawlog.GPUSample, v int64) { s.MemUsedBytes = v }},
	{"DCGM_FI_DEV_SM_CLOCK", "MHz", 1, func(s *rawlog.GPUSample, v int64) { s.SMClockMHz = v }},
	{"DCGM_FI_DEV_GPU_TEMP", "°C", 1, func(s *rawlog.GPUSample, v int64) { s.TempC = v }},
}

// DCGMGPU names a GPU of a DCGM page: its labels gpu, UUID and modelName.
type DCGMGPU struct {
	Index int
	UUID  string
	Name  string
}

// DCGMSamples turns a DCGM exporter page into one GPUSample per GPU (by its gpu and UUID
// labels), stamped t; fields the page lacks are -1, as NVML leaves unreadable ones. The
// GPUs come out by index.
func DCGMSamples(samples []Sample, t int64) ([]rawlog.GPUSample, []DCGMGPU) {
	fields := make(map[string]*DCGMField, len(DCGMFields))
	for i := range DCGMFields {
		fields[DCGMFields[i].Name] = &DCGMFields[i]
	}
	type key struct {
		gpu  int
		uuid string
	}
	byGPU := map[key]int{}
	var out []rawlog.GPUSample
	var gpus []DCGMGPU
	for i := range samples {
		s := &samples[i]
		f := fields[s.Name]
		// Unreadable: NaN, infinite, negative, or beyond the field's int64 (where Go's
		// conversion is undefined and would differ between machines).
		if f == nil || math.IsNaN(s.V) || math.IsInf(s.V, 0) || s.V < 0 || math.Round(s.V*f.Scale) >= math.MaxInt64 {
			continue
		}
		idx, err := strconv.Atoi(s.Labels["gpu"])
		if err != nil {
			continue
		}
		k := key{idx, s.Labels["UUID"]}
		j, ok := byGPU[k]
		if !ok {
			j = len(out)
			byGPU[k] = j
			out = append(out, rawlog.GPUSample{TimeNs: t, GPU: idx, UUID: k.uuid, PowerMilliwatts: -1, EnergyMillijoules: -1,
				GPUUtilPct: -1, MemUtilPct: -1, MemUsedBytes: -1, SMClockMHz: -1, TempC: -1, PowerInstantMilliwatts: -1})
			gpus = append(gpus, DCGMGPU{Index: idx, UUID: k.uuid, Name: s.Labels["modelName"]})
		}
		f.set(&out[j], int64(math.Round(s.V*f.Scale)))
	}
	order := make([]int, len(out))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(out[a].GPU, out[b].GPU); c != 0 {
			return c
		}
		return cmp.Compare(out[a].UUID, out[b].UUID)
	})
	so, sg := make([]rawlog.GPUSample, len(out)), make([]DCGMGPU, len(out))
	for i, j := range order {
		so[i], sg[i] = out[j], gpus[j]
	}
	return so, sg
}
