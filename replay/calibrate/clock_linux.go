//go:build linux

package calibrate

import (
	"golang.org/x/sys/unix"

	"github.com/llmbench/llmbench/rawlog"
)

// Clock reads the kernel's clock discipline state (adjtimex with no modes: read only).
func Clock() *rawlog.ClockState {
	var tx unix.Timex
	state, err := unix.Adjtimex(&tx)
	if err != nil {
		return nil
	}
	return &rawlog.ClockState{Source: "adjtimex",
		Synchronised: state != unix.TIME_ERROR && tx.Status&unix.STA_UNSYNC == 0,
		EstErrorNs:   int64(tx.Esterror) * 1000, MaxErrorNs: int64(tx.Maxerror) * 1000,
		Status: int(tx.Status), State: state}
}
