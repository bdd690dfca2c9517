//go:build !linux

package replay

// pinThread does nothing where CPU affinity is not set this way: the noise is then sampled
// wherever the thread runs.
func pinThread(int) error { return nil }
