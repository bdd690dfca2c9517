//go:build cgo && linux

package telemetry

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/llmbench/llmbench/rawlog"
)

// nvmlSource reads devices through NVML.
type nvmlSource struct {
	lib  nvml.Interface
	devs []nvml.Device
	list []GPU
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
	x.MemUsedBytes, x.SMClockMHz, x.TempC = -1, -1, -1
	if v, ret := d.GetPowerUsage(); ret == nvml.SUCCESS {
		x.PowerMilliwatts = int64(v)
	}
	if v, ret := d.GetTotalEnergyConsumption(); ret == nvml.SUCCESS {
		x.EnergyMillijoules = int64(v)
	}
	if u, ret := d.GetUtilizationRates(); ret == nvml.SUCCESS {
		x.GPUUtilPct, x.MemUtilPct = int64(u.Gpu), int64(u.Memory)
	}
	if m, ret := d.GetMemoryInfo(); ret == nvml.SUCCESS {
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
