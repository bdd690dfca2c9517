//go:build !linux

package replay

import (
	"errors"

	"github.com/llmbench/llmbench/rawlog"
)

// calibrate needs Linux (timerfd); elsewhere run.json has no calibration.
func calibrate() (*rawlog.Calibration, error) {
	return nil, errors.New("calibration needs Linux")
}
