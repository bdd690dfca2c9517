// Package timespan holds the one bound of every duration option, MaxSpan, and the conversion of
// an option in seconds that checks it. It sits below plan and replay so that both, and the
// commands, check their seconds the same way; it imports only the standard library.
package timespan

import (
	"fmt"
	"time"
)

// Max bounds every duration flag, every think time and every planned instant: 365 days.
const Max = 365 * 24 * time.Hour

// Seconds converts an option in seconds (flag name, for the error) into a duration: a finite
// number, positive (or zero when zero is allowed), at most Max (the bound of every
// duration flag). Out of range is an error naming the flag, never a clamped or wrapped-around
// duration.
func Seconds(name string, v float64, zero bool) (time.Duration, error) {
	hi := Max.Seconds()
	switch {
	case zero && !(v >= 0 && v <= hi):
		return 0, fmt.Errorf("--%s %v: want seconds in [0, %d] (365 days)", name, v, int64(hi))
	case !zero && !(v > 0 && v <= hi):
		return 0, fmt.Errorf("--%s %v: want seconds in (0, %d] (365 days)", name, v, int64(hi))
	}
	return time.Duration(v * float64(time.Second)), nil
}
