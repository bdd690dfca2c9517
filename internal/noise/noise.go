// Package noise measures a machine's scheduling noise while a timing check runs: a thread
// sleeps 200 µs again and again and records how late each sleep ends. Tests bound their
// timing figures by what the machine itself does meanwhile, so that a loaded machine moves
// the bound instead of failing the test.
package noise

import (
	"runtime"
	"slices"
	"time"
)

// Period is how long each of the sampler's sleeps is.
const Period = 200 * time.Microsecond

// Sampler samples the lateness of its sleeps until Stop.
type Sampler struct {
	stop chan struct{}
	done chan Lateness
	err  error
}

// Start starts sampling on a thread pinned to cpu; -1 leaves the thread unpinned. Err says
// whether the pinning failed (the sampler then runs unpinned).
func Start(cpu int) *Sampler {
	s := &Sampler{stop: make(chan struct{}), done: make(chan Lateness, 1)}
	ready := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if cpu >= 0 {
			s.err = pinThread(cpu)
		}
		close(ready)
		var late Lateness
		for {
			select {
			case <-s.stop:
				slices.Sort(late)
				s.done <- late
				return
			default:
			}
			t0 := time.Now()
			time.Sleep(Period)
			late = append(late, time.Since(t0)-Period)
		}
	}()
	<-ready
	return s
}

// Err is the error pinning the sampler's thread, nil when it was pinned or not asked to be.
func (s *Sampler) Err() error { return s.err }

// Stop ends the sampling and returns the lateness of every sleep, sorted.
func (s *Sampler) Stop() Lateness {
	close(s.stop)
	return <-s.done
}

// Lateness is how late each sleep ended, sorted ascending.
type Lateness []time.Duration

// Quantile is the q-quantile (0 ≤ q ≤ 1, nearest rank below); 0 without samples.
func (l Lateness) Quantile(q float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	return l[min(len(l)-1, int(q*float64(len(l))))]
}

// Max is the latest sleep's lateness; 0 without samples.
func (l Lateness) Max() time.Duration {
	if len(l) == 0 {
		return 0
	}
	return l[len(l)-1]
}
