//go:build !linux

package replay

import "github.com/llmbench/llmbench/rawlog"

// readClock has no source outside Linux.
func readClock() *rawlog.ClockState { return nil }
