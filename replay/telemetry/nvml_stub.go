//go:build !cgo || !linux

package telemetry

import "fmt"

// openNVML fails: NVML is reached through cgo, and this binary was built without it (or for
// a system NVML does not support).
func openNVML() (source, error) {
	return nil, fmt.Errorf("%w: this binary was built without cgo, which NVML needs", ErrUnavailable)
}
