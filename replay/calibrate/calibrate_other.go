//go:build !linux

package calibrate

import (
	"errors"

	"github.com/llmbench/llmbench/rawlog"
)

// Machine needs Linux (timerfd); elsewhere run.json has no calibration.
func Machine() (*rawlog.Calibration, error) {
	return nil, errors.New("calibration needs Linux")
}
