// Package parallel runs index-addressed work on several goroutines for the plan compiler and
// its dataset loaders. Callers store results by index, so what they compute never depends on
// scheduling: the plan file stays byte-identical whatever the core count.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Indexed runs f(0..n-1) on up to workers goroutines (0 or less means GOMAXPROCS) and returns
// the error of the lowest index that failed, nil when none did. On one goroutine it stops at
// the first failure; on several every index runs, and the error returned is still the lowest
// index's, so it does not depend on scheduling either.
func Indexed(n, workers int, f func(i int) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, n)
	if workers <= 1 {
		for i := range n {
			if err := f(i); err != nil {
				return err
			}
		}
		return nil
	}
	var (
		next     atomic.Int64
		mu       sync.Mutex
		failedAt = n // lowest failing index so far; n = none
		first    error
		wg       sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					mu.Lock()
					if i < failedAt {
						failedAt, first = i, err
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return first
}
