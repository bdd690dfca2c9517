//go:build cgo && linux

package telemetry

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/llmbench/llmbench/rawlog"
)

// nvmlSource reads devices through NVML.
type nvmlSource struct {
	lib  nvml.Interface
	devs []nvml.Device
	list []GPU
	fv   [1]nvml.FieldValue
}

func openNVML() (source, error) {
	lib := nvml.New()
	if ret := lib.Init(); ret != nvml.SUCCESS {
		if ret == nvml.ERROR_LIBRARY_NOT_FOUND {
			return nil, fmt.Errorf("%w: libnvidia-ml.so.1 not found (no NVIDIA driver on this machine)", ErrUnavailable)
		}
		return nil, fmt.Errorf("%w: NVML init: %s", ErrUnavailable, nvml.ErrorString(ret))
	}
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		lib.Shutdown()
		return nil, fmt.Errorf("%w: NVML device count: %s", ErrUnavailable, nvml.ErrorString(ret))
	}
	s := &nvmlSource{lib: lib}
	for i := 0; i < n; i++ {
		d, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			continue
		}
		g := GPU{Index: i}
		if u, ret := d.GetUUID(); ret == nvml.SUCCESS {
			g.UUID = u
		}
		if name, ret := d.GetName(); ret == nvml.SUCCESS {
			g.Name = name
		}
		s.devs = append(s.devs, d)
		s.list = append(s.list, g)
	}
	return s, nil
}

func (s *nvmlSource) gpus() []GPU { return s.list }

func (s *nvmlSource) read(i int, x *rawlog.GPUSample) {
	d := s.devs[i]
	x.PowerMilliwatts, x.EnergyMillijoules, x.GPUUtilPct, x.MemUtilPct = -1, -1, -1, -1
	x.MemUsedBytes, x.SMClockMHz, x.TempC, x.PowerInstantMilliwatts = -1, -1, -1, -1
	if v, ret := d.GetPowerUsage(); ret == nvml.SUCCESS {
		x.PowerMilliwatts = int64(v)
	}
	// NVML's power usage is a one-second average on recent GPUs; the instantaneous reading
	// is a field value, where the driver has it.
	s.fv[0] = nvml.FieldValue{FieldId: nvml.FI_DEV_POWER_INSTANT}
	if d.GetFieldValues(s.fv[:]) == nvml.SUCCESS && nvml.Return(s.fv[0].NvmlReturn) == nvml.SUCCESS {
		if v, ok := fieldInt(&s.fv[0]); ok {
			x.PowerInstantMilliwatts = v
		}
	}
	if v, ret := d.GetTotalEnergyConsumption(); ret == nvml.SUCCESS {
		x.EnergyMillijoules = int64(v)
	}
	if u, ret := d.GetUtilizationRates(); ret == nvml.SUCCESS {
		x.GPUUtilPct, x.MemUtilPct = int64(u.Gpu), int64(u.Memory)
	}
	// Version 2 leaves the driver's reserved memory out of Used, as nvidia-smi does;
	// version 1 counts it (hundreds of MiB on an idle H200).
	if m, ret := d.GetMemoryInfo_v2(); ret == nvml.SUCCESS {
		x.MemUsedBytes = int64(m.Used)
	} else if m, ret := d.GetMemoryInfo(); ret == nvml.SUCCESS {
		x.MemUsedBytes = int64(m.Used)
	}
	if v, ret := d.GetClockInfo(nvml.CLOCK_SM); ret == nvml.SUCCESS {
		x.SMClockMHz = int64(v)
	}
	if v, ret := d.GetTemperature(nvml.TEMPERATURE_GPU); ret == nvml.SUCCESS {
		x.TempC = int64(v)
	}
}

func (s *nvmlSource) close() error {
	if ret := s.lib.Shutdown(); ret != nvml.SUCCESS {
		return fmt.Errorf("NVML shutdown: %s", nvml.ErrorString(ret))
	}
	return nil
}

// fieldInt decodes an NVML field value (a C union) as an integer.
func fieldInt(f *nvml.FieldValue) (int64, bool) {
	v := f.Value[:]
	switch nvml.ValueType(f.ValueType) {
	case nvml.VALUE_TYPE_UNSIGNED_INT:
		return int64(binary.LittleEndian.Uint32(v)), true
	case nvml.VALUE_TYPE_SIGNED_INT:
		return int64(int32(binary.LittleEndian.Uint32(v))), true
	case nvml.VALUE_TYPE_UNSIGNED_LONG, nvml.VALUE_TYPE_UNSIGNED_LONG_LONG, nvml.VALUE_TYPE_SIGNED_LONG_LONG:
		return int64(binary.LittleEndian.Uint64(v)), true
	case nvml.VALUE_TYPE_UNSIGNED_SHORT:
		return int64(binary.LittleEndian.Uint16(v)), true
	case nvml.VALUE_TYPE_DOUBLE:
		return int64(math.Float64frombits(binary.LittleEndian.Uint64(v))), true
	}
	return 0, false
}
