//go:build !linux

package replay

import (
	"errors"
	"runtime"
)

func pinToCPU(cpu int) error { return errors.New("CPU pinning is only supported on Linux") }

func setAffinity(cpus []int) error { return nil }

func allowedCPUs() ([]int, error) {
	cpus := make([]int, runtime.NumCPU())
	for i := range cpus {
		cpus[i] = i
	}
	return cpus, nil
}

func cpuTime() (user, sys int64) { return -1, -1 }

func kernelRelease() string { return runtime.GOOS }

// peakRSS is this process's peak resident set size: unknown here.
func peakRSS() int64 { return 0 }
