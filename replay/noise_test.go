package replay

import (
	"runtime"
	"slices"
	"testing"
	"time"
)

// cpuNoise measures the scheduling noise on one CPU while a check runs: a thread pinned to
// it sleeps 200 µs again and again and records how late each sleep ends.
type cpuNoise struct {
	stop chan struct{}
	done chan []time.Duration
}

// startCPUNoise starts sampling on cpu (-1: wherever the thread runs).
func startCPUNoise(t *testing.T, cpu int) *cpuNoise {
	n := &cpuNoise{stop: make(chan struct{}), done: make(chan []time.Duration, 1)}
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := pinThread(cpu); err != nil {
			t.Logf("noise sampler not pinned to CPU %d: %v", cpu, err)
		}
		var late []time.Duration
		for {
			select {
			case <-n.stop:
				n.done <- late
				return
			default:
			}
			t0 := time.Now()
			time.Sleep(200 * time.Microsecond)
			late = append(late, time.Since(t0)-200*time.Microsecond)
		}
	}()
	return n
}

// stats stops the sampler and returns the p99 and the largest lateness of its sleeps.
func (n *cpuNoise) stats() (p99, most time.Duration) {
	close(n.stop)
	late := <-n.done
	if len(late) == 0 {
		return 0, 0
	}
	slices.Sort(late)
	return late[len(late)*99/100], late[len(late)-1]
}
