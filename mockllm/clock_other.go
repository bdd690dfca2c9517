//go:build !linux

package mockllm

func newWaiter() waiter { return &goTimerWaiter{kick: make(chan struct{}, 1)} }
