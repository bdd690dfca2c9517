//go:build !linux

package servermetrics

// onIdleThread runs f; elsewhere than Linux its priority is left as it is.
func onIdleThread(f func()) { f() }
