// Package telemetry samples GPUs through NVML while replay runs: power, the energy counter,
// GPU and memory utilisation, memory used, SM clock and temperature, per GPU, on the run's
// clock. NVML is loaded at run time (dlopen of libnvidia-ml.so.1 through
// github.com/NVIDIA/go-nvml), so the binary runs on machines without a GPU; there, and in
// builds without cgo, Open fails with an error wrapping ErrUnavailable and replay carries on
// without telemetry.
package telemetry

import (
	"errors"
	"fmt"
	"time"

	"github.com/llmbench/llmbench/rawlog"
)

// DefaultInterval is replay's default --gpu-sample-interval.
const DefaultInterval = 100 * time.Millisecond

// ErrUnavailable is wrapped by Open's error when NVML cannot be used here.
var ErrUnavailable = errors.New("GPU telemetry unavailable")

// GPU identifies one device.
type GPU struct {
	Index int
	UUID  string
	Name  string
}

// source reads devices; NVML in production, a fake in tests.
type source interface {
	gpus() []GPU
	// read fills s (all fields but TimeNs, GPU and UUID) for device i; unreadable fields -1.
	read(i int, s *rawlog.GPUSample)
	close() error
}

// Sampler reads every GPU at a fixed interval.
type Sampler struct {
	src  source
	list []GPU
}

// Open loads NVML and lists the GPUs. It fails (wrapping ErrUnavailable) when the library is
// missing, cannot initialise, or finds no GPU.
func Open() (*Sampler, error) {
	src, err := openNVML()
	if err != nil {
		return nil, err
	}
	s := newSampler(src)
	if len(s.list) == 0 {
		src.close()
		return nil, fmt.Errorf("%w: NVML found no GPU", ErrUnavailable)
	}
	return s, nil
}

func newSampler(src source) *Sampler { return &Sampler{src: src, list: src.gpus()} }

// GPUs returns the devices sampled.
func (s *Sampler) GPUs() []GPU { return s.list }

// Sample reads every GPU once, stamping each sample with t (nanoseconds on the run's clock).
func (s *Sampler) Sample(t int64, emit func(rawlog.GPUSample) error) error {
	for i, g := range s.list {
		x := rawlog.GPUSample{GPU: g.Index, UUID: g.UUID}
		s.src.read(i, &x)
		x.TimeNs = t
		if err := emit(x); err != nil {
			return err
		}
	}
	return nil
}

// Run samples at start + k*interval (k = 0, 1, ...) until stop is closed, stamping samples
// with the time since start; it samples once more when stopped, so the last energy reading
// closes the run. A sample that overruns its slot moves on to the next future instant.
func (s *Sampler) Run(stop <-chan struct{}, start time.Time, interval time.Duration, emit func(rawlog.GPUSample) error) error {
	if interval <= 0 {
		interval = DefaultInterval
	}
	k := int64(0)
	if d := time.Since(start); d > 0 {
		k = int64(d/interval) + 1
	}
	for {
		next := start.Add(time.Duration(k) * interval)
		t := time.NewTimer(time.Until(next))
		select {
		case <-stop:
			t.Stop()
			return s.Sample(int64(time.Since(start)), emit)
		case <-t.C:
		}
		if err := s.Sample(int64(time.Since(start)), emit); err != nil {
			return err
		}
		k = int64(time.Since(start)/interval) + 1
	}
}

// Close releases NVML.
func (s *Sampler) Close() error { return s.src.close() }
