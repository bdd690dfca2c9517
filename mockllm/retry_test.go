package mockllm

import (
	"testing"
	"time"
)

// retryTiming runs a client-side timing check up to 5 times, waiting
// longer before each retry (0.1 s to 0.8 s), and fails only if every
// attempt fails. A client measuring from inside a loaded 2-core machine
// (go test runs other packages' tests beside these) sometimes loses the
// CPU for milliseconds; a broken timing knob fails every attempt, a
// descheduled client only some.
func retryTiming(t *testing.T, check func() error) {
	t.Helper()
	var errs []error
	for i := range 5 {
		if i > 0 {
			time.Sleep(50 * time.Millisecond << i)
		}
		err := check()
		if err == nil {
			if len(errs) > 0 {
				t.Logf("passed after %d failed attempts: %v", len(errs), errs)
			}
			return
		}
		errs = append(errs, err)
	}
	t.Fatalf("all %d attempts failed: %v", len(errs), errs)
}
