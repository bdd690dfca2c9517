//go:build !linux

package calibrate

import "github.com/llmbench/llmbench/rawlog"

// readClock has no source outside Linux.
func Clock() *rawlog.ClockState { return nil }
